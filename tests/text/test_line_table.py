"""LineTable keeps the line starts of an edited text exactly, across its blocks."""

from __future__ import annotations

import bisect
import os
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from nexa_lsp.text import ContentChange, DocumentText, LineIndex, line_table
from nexa_lsp.text.line_table import LineTable
from nexa_lsp.text.positions import line_starts_of

PIECE = st.sampled_from(["a", "中", "😀", "\n", "\r", "\r\n", "\u2028", "\x0b"])
TEXT = st.lists(PIECE, max_size=60).map("".join)
EDIT = st.tuples(st.integers(0, 200), st.integers(0, 30), TEXT)
_EXAMPLES = 5000 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else 400


@settings(max_examples=_EXAMPLES, deadline=None)
@given(TEXT, st.lists(EDIT, min_size=1, max_size=12), st.sampled_from([1, 2, 3, 64]))
def test_edits_keep_the_table_equal_to_a_fresh_one(text: str, edits: list[tuple[int, int, str]], block: int) -> None:
    # tiny blocks make every edit cross, split and merge blocks
    with mock.patch.object(line_table, "BLOCK_LINES", block):
        table = LineTable(text)
        for at, length, new in edits:
            at = min(at, len(text))
            end = min(len(text), at + length)
            text = text[:at] + new + text[end:]
            table.replace(text, at, end, at + len(new))
            expected = line_starts_of(text)
            assert table.starts() == expected
            assert table.line_count == len(expected)
            for line, start in enumerate(expected):
                assert table.line_start(line) == start
            for offset in range(len(text) + 1):
                assert table.line_of(offset) == bisect.bisect_right(expected, offset) - 1


def _assert_like_a_fresh_index(index: LineIndex, text: str) -> None:
    fresh = LineIndex(text)
    assert index.line_count == fresh.line_count
    for line in range(-1, fresh.line_count + 1):
        assert index.line_bounds(line) == fresh.line_bounds(line)
        if 0 <= line < fresh.line_count:
            assert index.line_start(line) == fresh.line_start(line)
        for character in (0, 1, 3, 99):
            for encoding in ("utf-16", "utf-8", "utf-32"):
                assert index.offset_at(line, character, encoding) == fresh.offset_at(line, character, encoding)
    for offset in range(-1, len(text) + 2):
        assert index.line_of(offset) == fresh.line_of(offset)
        assert index.position(offset) == fresh.position(offset)
        assert index.utf16_position(offset) == fresh.utf16_position(offset)
        assert index.lsp_position(offset, "utf-8") == fresh.lsp_position(offset, "utf-8")
    assert index.line_starts == fresh.line_starts


@settings(max_examples=_EXAMPLES // 2, deadline=None)
@given(TEXT, st.lists(EDIT, min_size=1, max_size=8), st.sampled_from([1, 2, 3, 64]))
def test_a_snapshot_answers_like_a_fresh_index_after_later_edits(
    text: str, edits: list[tuple[int, int, str]], block: int
) -> None:
    # each DocumentText.line_index() is a LineIndex over a snapshot of the table; later edits
    # of the table must not change what an earlier snapshot answers
    with mock.patch.object(line_table, "BLOCK_LINES", block):
        doc = DocumentText(text, "utf-32")
        taken = [(doc.line_index(), text)]
        for at, length, new in edits:
            at = min(at, len(text))
            end = min(len(text), at + length)
            doc.apply([ContentChange(new, (doc_position(doc, at), doc_position(doc, end)))])
            text = doc.text  # (an offset inside a \r\n is taken to the line's end)
            taken.append((doc.line_index(), text))
        for index, its_text in taken:
            _assert_like_a_fresh_index(index, its_text)


def doc_position(doc: DocumentText, offset: int) -> tuple[int, int]:
    """``offset`` of the document's current text as an LSP (UTF-32) position."""
    position = LineIndex(doc.text).position(offset)
    return position.line, position.character
