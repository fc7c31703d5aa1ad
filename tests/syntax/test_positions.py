"""Positions with non-ASCII text: code points inside, UTF-16 on the wire, 1-based in the CLI."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax import tree as t
from nexa_lsp.text import LineIndex, utf16_length

TEXT = '// 注释 😀\nagent 写手 { }\nagent Writer {\n    prompt: "用中文写作 😀🎉",\n    model: ,\n}\n'


def test_line_index_round_trips_utf16_with_chinese_and_emoji() -> None:
    lines = LineIndex("a😀b\n中文😀x\n")
    # 😀 is two UTF-16 units; Chinese characters one each
    assert lines.utf16_position(2).character == 3  # after "a😀"
    assert lines.utf16_position(7).character == 4  # after "中文😀" on line 1
    assert lines.offset_of_utf16(1, 4) == 7
    assert lines.offset_of_utf16(1, 99) == 8  # clamped to the line end
    assert lines.offset_of_utf16(7, 0) == len("a😀b\n中文😀x\n")
    assert lines.position(7).character == 3  # code points


@given(st.text(alphabet=st.sampled_from(list('ab中文😀🎉\n \t"{}')), max_size=60))
def test_every_offset_round_trips(text: str) -> None:
    lines = LineIndex(text)
    for offset in range(len(text) + 1):
        pos = lines.utf16_position(offset)
        assert lines.offset_of_utf16(pos.line, pos.character) == offset
        assert pos.character == utf16_length(text[lines.line_starts[pos.line] : offset])


def test_diagnostic_after_chinese_text_has_exact_columns() -> None:
    source = parse_source(TEXT)
    diags = {d.code: d for d in source.diagnostics}
    non_ascii = diags["NX002"]
    assert TEXT[non_ascii.span.start] == "写"
    assert source.lines.position(non_ascii.span.start).character == 6
    syntax = diags["NX001"]
    assert TEXT[syntax.span.start : syntax.span.end] == ","
    pos = source.lines.utf16_position(syntax.span.start)
    assert (pos.line, pos.character) == (4, 11)


def test_node_spans_slice_the_right_text_after_emoji() -> None:
    source = parse_source(TEXT)
    writer = next(i for i in source.items if isinstance(i, t.AgentDecl) and i.name == "Writer")
    assert TEXT[writer.name_span.start : writer.name_span.end] == "Writer"
    prompt = writer.get_property("prompt")
    assert prompt is not None and prompt.value.text == "用中文写作 😀🎉"
    start = source.lines.utf16_position(prompt.value.span.start)
    end = source.lines.utf16_position(prompt.value.span.end)
    assert (start.line, start.character, end.character) == (3, 12, 12 + 2 + 6 + 4)
