"""LineIndex: LSP line breaks (\\n, \\r\\n, \\r only) and every conversion with Chinese text and emoji."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nexa_lsp.text import Encoding, LineIndex, Position

ENCODINGS: list[Encoding] = ["utf-16", "utf-8", "utf-32"]
NOT_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_a_lone_carriage_return_file_gets_correct_positions() -> None:
    text = 'agent A {\r    prompt: "中文😀"\r}\r'
    lines = LineIndex(text)
    assert lines.line_starts == [0, 10, 28, 30]
    brace = text.rindex("}")
    assert lines.position(brace) == Position(2, 0)
    assert lines.utf16_position(brace) == Position(2, 0)
    quote = text.rindex('"')
    assert lines.utf16_position(quote) == Position(1, 4 + 8 + 1 + 2 + 2)  # 😀 is two UTF-16 units
    assert lines.offset_of_utf16(1, 99) == text.index("\r", 10)  # clamped before the line's break


def test_crlf_is_one_break_and_the_odd_characters_are_none() -> None:
    text = "a\r\nb\n" + "".join(f"x{ch}y" for ch in NOT_BREAKS) + "\rz"
    lines = LineIndex(text)
    assert lines.line_count == 4
    assert lines.line_bounds(0) == (0, 1)
    assert lines.line_bounds(2) == (5, len(text) - 2)
    assert lines.position(len(text) - 1) == Position(3, 0)
    assert lines.offset_at(0, 5) == 1  # past the end of "a": before "\r\n"


@pytest.mark.parametrize(
    ("encoding", "column"),
    [("utf-16", 1 + 2 + 2), ("utf-8", 1 + 6 + 4), ("utf-32", 1 + 2 + 1)],
)
def test_every_conversion_counts_chinese_and_emoji_in_its_own_units(encoding: Encoding, column: int) -> None:
    text = "first\r\nx中文😀y\n"
    lines = LineIndex(text)
    y = text.index("y")
    assert lines.lsp_position(y, encoding) == Position(1, column)
    assert lines.offset_at(1, column, encoding) == y
    assert lines.offset_at(1, 10_000, encoding) == y + 1  # the line end, before "\n"
    assert lines.offset_at(5, 0, encoding) == len(text)  # past the last line: the end of the text
    assert lines.position(y) == Position(1, 4)  # code points (CLI)
    assert lines.offset_of(1, 4) == y


def test_a_position_inside_a_surrogate_pair_or_a_utf8_sequence_takes_the_whole_character() -> None:
    lines = LineIndex("😀中")
    assert lines.offset_at(0, 1, "utf-16") == 1
    assert lines.offset_at(0, 5, "utf-8") == 2
    assert lines.offset_at(0, 4, "utf-8") == 1


def _reference_lines(text: str) -> list[tuple[int, int]]:
    """(start, end without break) of each line, by a regex over the LSP breaks."""
    out = []
    start = 0
    for match in re.finditer(r"\r\n|\r|\n", text):
        out.append((start, match.start()))
        start = match.end()
    out.append((start, len(text)))
    return out


ALPHABET = st.sampled_from(["a", " ", "中", "文", "😀", "🎉", "\n", "\r", "\r\n", *NOT_BREAKS])


@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_every_offset_converts_like_a_reference_in_every_encoding(text: str) -> None:
    lines = LineIndex(text)
    reference = _reference_lines(text)
    assert [start for start, _ in reference] == lines.line_starts
    for number, (start, end) in enumerate(reference):
        assert lines.line_bounds(number) == (start, end)
        for offset in range(start, end + 1):
            for encoding in ENCODINGS:
                prefix = text[start:offset]
                units = {
                    "utf-16": len(prefix.encode("utf-16-le")) // 2,
                    "utf-8": len(prefix.encode()),
                    "utf-32": len(prefix),
                }
                pos = lines.lsp_position(offset, encoding)
                assert pos == Position(number, units[encoding])
                assert lines.offset_at(pos.line, pos.character, encoding) == offset
