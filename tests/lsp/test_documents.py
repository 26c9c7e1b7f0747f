"""Minimal TextEdits in UTF-16 positions (property-based), checked by the fake editor's own text model."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol.converters import get_converter

from agentls.server.lsp.documents import LineIndex, text_edits

from .editor import apply_text_edits, offset_at

ALPHABET = st.sampled_from(["a", "b", " ", "\n", "\r\n", "\r", "é", "🌍", "\t", "x\n", "ab"])
TEXT = st.lists(ALPHABET, max_size=40).map("".join)
converter = get_converter()


def wire(old: str, new: str) -> list[dict[str, object]]:
    return [converter.unstructure(e) for e in text_edits(old, new)]


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT)
def test_edits_turn_old_into_new(old: str, new: str) -> None:
    assert apply_text_edits(old, wire(old, new)) == new  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT, TEXT)
def test_a_change_in_the_middle_touches_only_the_middle(head: str, middle: str, tail: str) -> None:
    old, new = head + "a" + tail, head + middle + tail
    edits = wire(old, new)
    assert apply_text_edits(old, edits) == new  # type: ignore[arg-type]
    changed = sum(len(str(e["newText"])) for e in edits)
    assert changed <= len(middle) + 2  # never the whole document (+2: a CRLF kept whole)


def test_one_character_in_a_long_file_is_one_small_edit() -> None:
    old = "".join(f"line {i}\n" for i in range(1000))
    new = old.replace("line 500\n", "line 5o0\n")
    [edit] = text_edits(old, new)
    assert (edit.range.start.line, edit.range.start.character) == (500, 6)
    assert (edit.range.end.line, edit.range.end.character) == (500, 7)
    assert edit.new_text == "o"


def test_columns_count_utf16_code_units() -> None:
    old = "x = '🌍a'\n"
    [edit] = text_edits(old, "x = '🌍b'\n")
    assert edit.range.start.character == 7  # x, space, =, space, ', then 🌍 is two units
    assert offset_at(old, 0, 7) == 6


def test_crlf_is_never_split() -> None:
    [edit] = text_edits("a\r\nb", "a\rb")
    start, end = edit.range.start, edit.range.end
    assert (start.line, start.character) == (0, 1) and (end.line, end.character) == (1, 0)


def test_no_change_no_edits() -> None:
    assert text_edits("same\n", "same\n") == []


def test_line_index_end() -> None:
    assert LineIndex("a\nbc").end().line == 1 and LineIndex("a\nbc").end().character == 2
    assert LineIndex("a\r\n").end().line == 1 and LineIndex("a\r\n").end().character == 0
