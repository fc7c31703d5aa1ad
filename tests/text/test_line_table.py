"""LineTable keeps the line starts of an edited text exactly, across its blocks."""

from __future__ import annotations

import bisect
import os
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from nexa_lsp.text import line_table
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
