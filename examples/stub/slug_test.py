import unittest

from slug import slugify


class SlugTest(unittest.TestCase):
    def test_two_words(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_punctuation_separates_words(self):
        self.assertEqual(slugify("Agents, in the Editor!"), "agents-in-the-editor")

    def test_no_double_hyphens(self):
        self.assertEqual(slugify("2026 -- a review"), "2026-a-review")

    def test_no_hyphen_at_the_ends(self):
        self.assertEqual(slugify("  --Trim me--  "), "trim-me")

    def test_empty(self):
        self.assertEqual(slugify(""), "")


if __name__ == "__main__":
    unittest.main()
