"""Fuzzing the syntax layer and the shared diagnostics engine.

Sources are generated from the grammar's constructs (the checklist fixtures,
combined) and then mutated: tokens deleted, duplicated and swapped, cuts at
random points, non-ASCII and control characters inserted. Properties: no
exception, diagnostics always returned with ranges inside the text, and the
incremental parse agrees with a fresh one. The example budget is bounded for
CI (HYPOTHESIS_PROFILE=long for longer runs by hand).
"""

from __future__ import annotations

import cProfile
import os
import pstats
import re
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nexa_lsp.analysis.engine import check_source
from nexa_lsp.syntax import parse_source
from tests.syntax.test_checklist import CASES

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

FRAGMENTS = [case[1] for case in CASES]
TOKEN = re.compile(r'"""[\s\S]*?"""|"[^"\n]*"|[A-Za-z_]\w*|\d+(?:\.\d+)?|\|>>|&>>|[|&?:=<>!-]{1,2}|\S')
NOISE = ["中文", "😀", "\x00", "\x07", "\u200b", "\ufeff", "\r", "'", "#", "\\", '"""', "{", "}", "(", ")", ";"]


@st.composite
def nexa_sources(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4))
    text = "\n".join(parts)
    if draw(st.booleans()):
        text = "nexa 3.0;\n" + text
    tokens = TOKEN.findall(text)
    for _ in range(draw(st.integers(0, 6))):
        if not tokens:
            break
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "noise", "cut"]))
        i = draw(st.integers(0, len(tokens) - 1))
        if op == "delete":
            del tokens[i]
        elif op == "duplicate":
            tokens.insert(i, tokens[i])
        elif op == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif op == "noise":
            tokens.insert(i, draw(st.sampled_from(NOISE)))
        else:
            tokens = tokens[:i]
    return " ".join(tokens)


def _assert_sane(text: str) -> None:
    source = parse_source(text)
    diagnostics = check_source(source)
    for diag in diagnostics:
        assert 0 <= diag.span.start <= diag.span.end <= len(text), diag
        assert diag.code and diag.message
    for item in source.items:
        assert 0 <= item.span.start <= item.span.end <= len(text)


@given(nexa_sources())
def test_mutated_sources_never_crash(text: str) -> None:
    _assert_sane(text)


@given(st.text(max_size=400))
def test_arbitrary_text_never_crashes(text: str) -> None:
    _assert_sane(text)


@given(nexa_sources(), nexa_sources())
def test_incremental_parse_matches_a_fresh_parse(first: str, second: str) -> None:
    old = parse_source(first)
    joined = first + "\n" + second
    incremental = parse_source(joined, old)
    fresh = parse_source(joined)
    assert [(type(i).__name__, i.span.start, i.span.end) for i in incremental.items] == [
        (type(i).__name__, i.span.start, i.span.end) for i in fresh.items
    ]
    assert [(d.code, d.span.start, d.span.end) for d in incremental.diagnostics] == [
        (d.code, d.span.start, d.span.end) for d in fresh.diagnostics
    ]


def _timed(text: str) -> float:
    start = time.perf_counter()
    _assert_sane(text)
    return time.perf_counter() - start


def test_ten_thousand_nested_braces_do_not_blow_up() -> None:
    assert _timed("{" * 10_000) < 10
    # regression: 20,000 balanced braces at top level once took 43 s (a repair search per token)
    assert _timed("{" * 20_000 + "}" * 20_000) < 10
    assert _timed("flow f { " + "if (x) { " * 2_500 + "}" * 2_500 + " }") < 20
    assert _timed("flow f { x = " + "(" * 10_000 + "a" + ")" * 10_000 + " }") < 20


def _calls(text: str) -> int:
    """Python function calls made to parse and check ``text``: a measure of work that does not
    depend on the machine's load (a timing ratio would)."""
    profile = cProfile.Profile()
    profile.enable()
    _assert_sane(text)
    profile.disable()
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


def test_large_file_work_grows_linearly() -> None:
    unit = 'agent A{i} {{ prompt: "第{i}个 😀" }}\nflow f{i} {{ x = A{i}.run("q") }}\n'
    small = "".join(unit.format(i=i) for i in range(250))
    large = "".join(unit.format(i=i) for i in range(2_500))
    _calls(small)  # the parser is built and its scanners compiled before counting
    small_calls, large_calls = _calls(small), _calls(large)
    assert large_calls < small_calls * 10 * 1.5  # ten times the text, at most 1.5 times the work per byte


def test_five_megabyte_source_is_handled() -> None:
    text = "// " + "注释 comment text " * 300_000 + '\nagent A { prompt: "p" }\n'
    assert len(text.encode("utf-8")) > 5_000_000
    assert _timed(text) < 30


@given(
    nexa_sources(),
    st.integers(0, 10_000),
    st.integers(0, 40),
    st.sampled_from(["", "}", "{", "agent X ", "\n", '"', "/*", "// c\n", "flow f { }\n", "中😀"]),
)
def test_incremental_layout_after_any_edit_matches_a_fresh_split(base: str, at: int, length: int, insert: str) -> None:
    from nexa_lsp.syntax.chunks import layout_chunks

    at = min(at, len(base))
    edited = base[:at] + insert + base[at + length :]
    incremental = layout_chunks(edited, layout_chunks(base))
    fresh = layout_chunks(edited)
    assert incremental.chunks == fresh.chunks
    assert incremental.comments == fresh.comments
