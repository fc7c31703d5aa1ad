"""Re-parsing with the previous parse gives exactly what a fresh parse gives, messages included."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nexa_lsp.syntax import Diagnostic, parse_source
from nexa_lsp.syntax.source import ParsedChunk, SourceFile
from nexa_lsp.syntax.tree import Anchor
from nexa_lsp.text import ContentChange, DocumentText, covering
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


def facts(source: SourceFile) -> tuple[list[tuple[object, ...]], ...]:
    """Everything a user sees of a parse, with positions: items, diagnostics, comments, chunks."""
    items = [(type(i).__name__, i.name, i.span.start, i.span.end, i.name_span.start) for i in source.items]
    chunks = [(c.anchor.base, c.text) for c in source.chunks]
    comments = [(c.start, c.end) for c in source.comments]
    return items, [_diagnostic_facts(d) for d in source.diagnostics], comments, chunks


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


LINE_PIECES = [*PIECES, "/* 注释 */", "// c\n", "nexa 3.0;\n", 'include "x.nx";\n', "\u2028", "\x0b"]


@st.composite
def editor_sessions(draw: st.DrawFn) -> tuple[str, list[list[ContentChange]]]:
    """A text and notifications of LSP range changes (several changes each, past-end positions too)."""
    text = "\n".join(draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4)))
    notifications = []
    for _ in range(draw(st.integers(1, 4))):
        changes = []
        for _ in range(draw(st.integers(1, 3))):
            start = (draw(st.integers(0, 30)), draw(st.integers(0, 40)))
            end = (start[0] + draw(st.integers(0, 2)), draw(st.integers(0, 40)))
            inserted = "".join(draw(st.lists(st.sampled_from(LINE_PIECES), max_size=3)))
            changes.append(ContentChange(inserted, (start, end)))
        notifications.append(changes)
    return text, notifications


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(editor_sessions())
def test_a_parse_told_what_changed_equals_a_fresh_parse(session: tuple[str, list]) -> None:  # type: ignore[type-arg]
    text, notifications = session
    doc = DocumentText(text)
    told = parse_source(doc.text, lines=doc.lines)
    compared = parse_source(doc.text)
    for changes in notifications:
        done = doc.apply(changes)
        told = parse_source(doc.text, told, changed=covering(done), lines=doc.lines)
        compared = parse_source(doc.text, compared)
        fresh = facts(parse_source(doc.text))
        assert facts(told) == fresh, repr(doc.text)
        assert facts(compared) == fresh, repr(doc.text)


def test_a_parse_made_by_hand_is_reused_by_chunk_text() -> None:
    text = 'agent A {\n    prompt: "x"\n}\nflow main {\n    A.run("q")\n}\n'
    source = parse_source(text)
    shadow_chunks = [ParsedChunk(c.text, c.path, Anchor(c.anchor.base), c.items, c.diagnostics) for c in source.chunks]
    shadow = SourceFile(
        source.text, source.path, source.version, source.items, source.diagnostics, source.comments, shadow_chunks
    )
    edited = text.replace('"q"', '"q" "r"')
    again = parse_source(edited, shadow)
    assert again.reused_chunks == 1
    assert [d.code for d in again.diagnostics] == [d.code for d in parse_source(edited).diagnostics]
