"""DocumentText applies LSP content changes exactly as LSP defines them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nexa_lsp.text import Encoding, LineIndex, Position
from nexa_lsp.text.document import ContentChange, DocumentText, TextChange, covering


def _apply(text: str, *changes: ContentChange, encoding: Encoding = "utf-16") -> str:
    doc = DocumentText(text, encoding)
    doc.apply(changes)
    return doc.text


# -- the reproducers of issue 13 (item 2) ---------------------------------------------------


def test_a_vertical_tab_is_no_line_break() -> None:
    assert _apply("\x0b\n", ContentChange("{", ((1, 0), (1, 0)))) == "\x0b\n{"


def test_a_line_separator_in_a_comment_is_no_line_break() -> None:
    text = '// 注释\u2028still the comment\nagent A {\n    prompt: "x"\n}\n'
    edited = _apply(text, ContentChange("role", ((2, 4), (2, 10))))
    assert edited == '// 注释\u2028still the comment\nagent A {\n    role: "x"\n}\n'


def test_a_character_past_the_end_of_a_line_is_the_end_of_that_line() -> None:
    text = 'agent A {\n    prompt: "x"\n}'
    edited = _apply(text, ContentChange("}\n\nflow main {\n}", ((2, 0), (2, 99))))
    assert edited == 'agent A {\n    prompt: "x"\n}\n\nflow main {\n}'
    assert _apply("ab\r\ncd", ContentChange("X", ((0, 9), (0, 9)))) == "abX\r\ncd"  # before the "\r\n"


def test_a_line_past_the_last_line_is_the_end_of_the_text() -> None:
    assert _apply("ab\ncd", ContentChange("!", ((7, 3), (9, 0)))) == "ab\ncd!"


def test_several_changes_apply_in_order_each_to_the_text_the_last_left() -> None:
    doc = DocumentText("flow main {\n}\n")
    done = doc.apply(
        [
            ContentChange("    x = 1\n", ((1, 0), (1, 0))),  # inserts a line
            ContentChange("    y = 2\n", ((2, 0), (2, 0))),  # line 2 is "}" only after the first change
            ContentChange("z", ((1, 4), (1, 5))),
        ]
    )
    assert doc.text == "flow main {\n    z = 1\n    y = 2\n}\n"
    assert done == [TextChange(12, 12, 22), TextChange(22, 22, 32), TextChange(16, 17, 17)]
    assert covering(done) == TextChange(12, 12, 32)


def test_a_change_without_a_range_replaces_everything() -> None:
    doc = DocumentText("old\ntext")
    assert doc.apply([ContentChange("new 中文")]) == [TextChange(0, 8, 6)]
    assert (doc.text, doc.line_count) == ("new 中文", 1)


@pytest.mark.parametrize(
    ("encoding", "character"),
    [("utf-16", 1 + 2 + 2), ("utf-8", 1 + 6 + 4), ("utf-32", 1 + 2 + 1)],
)
def test_characters_count_in_the_negotiated_encoding(encoding: Encoding, character: int) -> None:
    text = "line\rx中文😀y\r\n"
    doc = DocumentText(text, encoding)
    assert doc.position(text.index("y")) == Position(1, character)
    doc.apply([ContentChange("Y", ((1, character), (1, character + 1)))])
    assert doc.text == "line\rx中文😀Y\r\n"


def test_a_position_inside_a_surrogate_pair_takes_the_whole_emoji() -> None:
    assert _apply("a😀b", ContentChange("", ((0, 1), (0, 2)))) == "ab"


def test_a_carriage_return_and_a_line_feed_typed_apart_become_one_break() -> None:
    doc = DocumentText("ab\rcd")
    doc.apply([ContentChange("\n", ((1, 0), (1, 0)))])
    assert doc.text == "ab\r\ncd" and doc.line_count == 2
    doc.apply([ContentChange("", ((0, 2), (1, 0)))])
    assert doc.text == "abcd" and doc.line_count == 1


def test_covering_spans_changes_made_before_after_and_inside_each_other() -> None:
    # +3 at 10, then a character deleted at 2, then 5 inserted at 20 (18 in the original text)
    changes = [TextChange(10, 12, 15), TextChange(2, 3, 2), TextChange(20, 20, 25)]
    assert covering(changes) == TextChange(2, 18, 25)
    assert covering([]) is None


# -- a property test against a plain reference implementation --------------------------------


def _reference_offset(text: str, line: int, character: int, encoding: Encoding) -> int:
    """LSP position -> offset, the slow obvious way."""
    starts, ends = [0], []
    for match in re.finditer(r"\r\n|\r|\n", text):
        ends.append(match.start())
        starts.append(match.end())
    ends.append(len(text))
    if line < 0:
        return 0
    if line >= len(starts):
        return len(text)
    offset, units = starts[line], 0
    while offset < ends[line] and units < character:
        ch = text[offset]
        units += {"utf-16": len(ch.encode("utf-16-le")) // 2, "utf-8": len(ch.encode()), "utf-32": 1}[encoding]
        offset += 1
    return offset


PIECE = st.sampled_from(
    ["a", "b", " ", "{", "}", "中", "文", "😀", "🎉", "\n", "\r", "\r\n", *"\x0b\x0c\x1c\x85\u2028\u2029"]
)
TEXT = st.lists(PIECE, max_size=30).map("".join)
NUMBER = st.integers(-1, 12)
CHANGE = st.tuples(NUMBER, NUMBER, NUMBER, NUMBER, TEXT, st.booleans())


@given(TEXT, st.lists(CHANGE, min_size=1, max_size=6), st.sampled_from(["utf-16", "utf-8", "utf-32"]))
def test_changes_apply_like_the_reference(text: str, changes: list[tuple], encoding: Encoding) -> None:  # type: ignore[type-arg]
    doc = DocumentText(text, encoding)
    expected = text
    for start_line, start_char, end_line, end_char, new, whole in changes:
        if whole:
            change = ContentChange(new)
            expected = new
        else:
            change = ContentChange(new, ((start_line, start_char), (end_line, end_char)))
            a = _reference_offset(expected, start_line, start_char, encoding)
            b = _reference_offset(expected, end_line, end_char, encoding)
            a, b = min(a, b), max(a, b)
            expected = expected[:a] + new + expected[b:]
        doc.apply([change])
        assert doc.text == expected
    index = LineIndex(expected)
    assert doc.line_index().line_starts == index.line_starts
    for offset in range(len(expected) + 1):
        assert doc.position(offset) == index.lsp_position(offset, encoding)


@given(TEXT, st.lists(st.tuples(st.integers(0, 40), st.integers(0, 8), TEXT), min_size=1, max_size=5))
def test_covering_says_what_changed(text: str, edits: list[tuple[int, int, str]]) -> None:
    original = text
    done = []
    for at, length, new in edits:
        at = min(at, len(text))
        end = min(len(text), at + length)
        done.append(TextChange(at, end, at + len(new)))
        text = text[:at] + new + text[end:]
    span = covering(done)
    assert span is not None
    assert original[: span.start] == text[: span.start]
    assert original[span.old_end :] == text[span.new_end :]
