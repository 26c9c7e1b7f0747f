"""The text side of a small model's edit said in words (agent/tools/described.py): what is taken from the reply,
which part of a file is asked for, and what a confused rewrite is not allowed to lose."""

from __future__ import annotations

import pytest

from agentls.agent.tools.described import (
    WINDOW_LINES,
    RewriteRefused,
    extract,
    restore,
    window_for,
)
from agentls.agent.tools.fences import unfenced

CODE = "a = 1\nb = 2\n"


@pytest.mark.parametrize("reply", [
    f"```python\n{CODE}```", f"Here it is:\n\n```py\n{CODE}```\nDone.", f"```\n{CODE}```",
    '{"name": "write_file", "arguments": {"path": "x.py", "content": "a = 1\\nb = 2\\n"}}',
    '{"name": "final_answer", "arguments": {"text": "```python\\na = 1\\nb = 2\\n```"}}',
    "```python\n     1\ta = 1\n     2\tb = 2\n```",  # read_file's line numbers copied
])
def test_the_new_text_is_taken_from_every_usual_shape_of_reply(reply: str) -> None:
    assert extract(reply) == CODE


@pytest.mark.parametrize("reply, why", [
    ("I changed it.", "no code block"), ("", "no code block"), ("```python\na = 1\n", "cut off"),
    ('{"name": "edit_file", "arguments": {"path": "x.py"}}', "no code block"),
])
def test_a_reply_without_a_whole_code_block_is_refused(reply: str, why: str) -> None:
    with pytest.raises(RewriteRefused, match=why):
        extract(reply)


def test_only_a_whole_content_wrapped_in_one_block_is_unwrapped() -> None:
    assert unfenced("```markdown\nRemember the milk\n```") == "Remember the milk\n"
    assert unfenced("  ```\nx\n```\n") == "x\n"
    for kept in ("plain text", "```a```", "intro\n```\nx\n```", "```\nx\n```\n```\ny\n```"):
        assert unfenced(kept) == kept


def test_a_short_file_is_asked_for_whole_a_long_one_around_what_the_change_names() -> None:
    short = "".join(f"x{i} = {i}\n" for i in range(80))
    assert window_for(short, "anything", "").whole
    long = "".join(f"value_{i} = {i}\n" for i in range(300))
    w = window_for(long, "set value_200 to 7", "")
    assert w.start <= 199 < w.end and w.end - w.start == WINDOW_LINES
    assert w.splice(w.text) == long
    end = window_for(long, "add a line at the end", "")
    assert end.end == 300 and end.start == 300 - WINDOW_LINES
    top = window_for(long, "change value_1", "")
    assert top.start == 0
    with pytest.raises(RewriteRefused, match="names nothing in it"):
        window_for(long, "make it nicer", "improve this file")


def test_lines_lost_at_the_ends_or_to_a_placeholder_come_back_asked_for_removals_do_not() -> None:
    old = "import sys\n\n\ndef f():\n    return 1\n\n\nprint(f())\n"
    cut = "import sys\n\n\ndef f():\n    '''Doc.'''\n    return 1\n"
    text, notes = restore(old, cut, "add a docstring to f")
    assert text == "import sys\n\n\ndef f():\n    '''Doc.'''\n    return 1\n\n\nprint(f())\n" and notes
    assert restore(old, cut, "remove the print at the end") == (cut, [])
    head_lost = "def f():\n    return 2\n\n\nprint(f())\n"
    assert restore(old, head_lost, "make f return 2")[0] == old.replace("return 1", "return 2")
    elided = "import sys\n\n\ndef f():\n    return 2\n# ... rest unchanged\n"
    assert restore(old, elided, "make f return 2")[0] == old.replace("return 1", "return 2")


def test_a_single_line_deleted_in_the_middle_is_trusted_two_are_not() -> None:
    old = "a = 1\nprint('debug')\nb = 2\nc = 3\nd = 4\n"
    one = "a = 1\nb = 2\nc = 3\nd = 4\n"
    assert restore(old, one, "fix the bug") == (one, [])
    two = "a = 1\nd = 4\n"
    assert restore(old, two, "fix the bug")[0] == old


def test_a_request_that_only_adds_keeps_the_line_written_over() -> None:
    old = "NAME = 'x'\nRETRIES = 3\n"
    over = "NAME = 'x'\nRETRY_DELAY = 5\n"
    assert restore(old, over, "Add the line RETRY_DELAY = 5 at the end")[0] == old + "RETRY_DELAY = 5\n"
    assert restore(old, over, "replace RETRIES with RETRY_DELAY = 5")[0] == over  # asked to replace
    changed = "NAME = 'x'\nRETRIES = 3  # tries\n"
    assert restore(old, changed, "add a comment to RETRIES")[0] == changed  # the same line, changed


def test_an_import_added_over_another_keeps_both_new_first_at_the_top() -> None:
    old = "import sys\n\n\ndef f():\n    return sys.argv\n"
    over = old.replace("import sys", "import os")
    assert restore(old, over, "Add import os at the top of f.py")[0] == "import os\n" + old
    tail = "x = 1\ny = 2\n"
    assert restore(tail, "x = 1\nz = 3\n", "append z = 3")[0] == tail + "z = 3\n"
