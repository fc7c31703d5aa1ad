"""Re-parsing with the previous parse gives exactly what a fresh parse gives, messages included."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nexa_lsp.syntax import Diagnostic, parse_source
from nexa_lsp.syntax.source import SourceFile
from tests.syntax.test_checklist import CASES

_EXAMPLES = 1500 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else 120


def _diagnostic_facts(diag: Diagnostic) -> tuple[object, ...]:
    return (
        diag.code,
        diag.message,
        diag.span.start,
        diag.span.end,
        diag.severity,
        tuple((r.span.start, r.span.end, r.message) for r in diag.related),
        tuple((f.title, tuple((e.span.start, e.span.end, e.new_text) for e in f.edits)) for f in diag.fixes),
    )


def facts(source: SourceFile) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """Everything a user sees of a parse: each item and each diagnostic, with positions."""
    items = [(type(i).__name__, i.name, i.span.start, i.span.end, i.name_span.start) for i in source.items]
    return items, [_diagnostic_facts(d) for d in source.diagnostics]


def test_an_unclosed_brace_message_follows_an_edit_above_it() -> None:
    text = 'agent A {\n    prompt: "x"\n'
    first = parse_source(text)
    assert [d.message for d in first.diagnostics] == ['expected "}" to close agent A opened at 1:9']
    edited = "\n\n" + text
    again = parse_source(edited, first)
    assert again.reused_chunks == 1  # the chunk is reused, only its anchor moved
    assert [d.message for d in again.diagnostics] == ['expected "}" to close agent A opened at 3:9']
    assert facts(again) == facts(parse_source(edited))
    assert [(r.span.start, r.message) for r in again.diagnostics[0].related] == [(10, '"{" opened here')]


def test_the_message_moves_with_chinese_text_before_it_on_its_line() -> None:
    text = 'flow main {\n}\nagent A {\n    prompt: "x"\n'
    first = parse_source(text)
    edited = text.replace("flow main {\n}\n", "flow main {\n}\n/* 中文😀 */ ")
    again = parse_source(edited, first)
    [message] = [d.message for d in again.diagnostics]
    assert message == 'expected "}" to close agent A opened at 3:19'  # columns in code points, 1-based
    assert facts(again) == facts(parse_source(edited))


FRAGMENTS = [case[1] for case in CASES]
PIECES = [
    "\n",
    "\n\n",
    "{",
    "}",
    "(",
    ")",
    '"',
    ";",
    "agent B {\n",
    "flow f {\n",
    "}\n",
    "中文",
    "😀",
    "\r\n",
    "\r",
    " ",
]


@st.composite
def edit_sequences(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str]]]:
    text = "\n".join(draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4)))
    if draw(st.booleans()):
        text = "nexa 3.0;\n" + text
    edits = []
    for _ in range(draw(st.integers(1, 5))):
        start = draw(st.integers(0, 10_000))
        length = draw(st.integers(0, 30))
        inserted = "".join(draw(st.lists(st.sampled_from(PIECES), max_size=3)))
        edits.append((start, length, inserted))
    return text, edits


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edit_sequences())
def test_incremental_diagnostics_equal_a_fresh_parse_after_random_edits(case: tuple[str, list]) -> None:  # type: ignore[type-arg]
    text, edits = case
    source = parse_source(text)
    for start, length, inserted in edits:
        start = min(start, len(text))
        text = text[:start] + inserted + text[start + length :]
        source = parse_source(text, source)
        assert facts(source) == facts(parse_source(text)), repr(text)
