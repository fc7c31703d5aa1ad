"""Semantic diagnostics kept from the previous version equal a fresh computation.

``semantic.incremental`` checks only the chunks an edit changed and the names they declare
or mention, reusing the rest of the previous version's findings; after every edit of seeded
edit loops (the corpus, a small workflow, a large generated file, edits that add, remove,
rename and duplicate declarations, unbalanced braces, version changes, Chinese text, with
and without includes) the answer must be the same list, in the same order, as
``analysis_diagnostics`` of a fresh parse of the final text.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from benchmarks.synthetic import mixed_source
from nexa_lsp.analysis import symbols
from nexa_lsp.analysis.semantic import analysis_diagnostics, incremental, semantic_diagnostics
from nexa_lsp.analysis.symbols import analyze, locator_from_resolver
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax import SourceFile, parse_source
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic
from nexa_lsp.syntax.tree import Span
from tests.edit_loops import body_edit, large_file_and_corpus_loop, small_workflow_loop
from tests.migration.test_incremental import BASE, _edit

LIB = """tool Search { description: "shadowed", parameters: {"q": "string"} }
tool Shared { description: "used by the including file", parameters: {"q": "string"} }
agent Helper { prompt: "attaches every tool" }
flow lib_flow {
    Helper.run("lib")
    Pay.run("not a run receiver")
}
"""


#: The small workflow with a `@tool` function, wrong-kind references and an unused tool.
WORKFLOW = (
    BASE
    + """@tool("Count words")
fn counter(text: str): int {
    print(text)
}
agent Wrong uses helper, Writer { prompt: "w" }
flow misuse {
    Search.run("not an agent")
    Wrong.run("w")
}
tool Spare { description: "nobody uses it", parameters: {} }
"""
)


def _at(span: Span) -> tuple[int, int]:
    return span.start, span.end


def _view(diagnostics: list[Diagnostic]) -> list[object]:
    """Every field of each diagnostic, spans as absolute offsets."""
    return [
        (
            d.code,
            d.message,
            _at(d.span),
            d.severity,
            d.unnecessary,
            [(f.title, f.safe, f.why_unsafe, [(_at(e.span), e.new_text) for e in f.edits]) for f in d.fixes],
            [(_at(r.span), r.message) for r in d.related],
            d.data,
        )
        for d in diagnostics
    ]


def _checker(resolver: IncludeResolver | None = None) -> Callable[[SourceFile], None]:
    def check(source: SourceFile) -> None:
        includes = [item for item in source.items if isinstance(item, t.Include)]
        assert [item for item in symbols._header_items(source) if isinstance(item, t.Include)] == includes
        kept = _view(semantic_diagnostics(source, resolver))
        locate = locator_from_resolver(resolver) if resolver is not None else None
        fresh = _view(analysis_diagnostics(analyze(parse_source(source.text), None, locate)))
        assert kept == fresh, source.text[:300]
        assert _view(semantic_diagnostics(source, resolver)) == kept  # asked again: the same answer

    return check


def _declaration_edit(text: str, rng: random.Random) -> str:
    """An edit that changes declarations: duplicate, rename, remove one, add a tool or an
    agent without `uses`, an include."""
    kind = rng.randrange(10)
    starts = [
        i + 1 for i in range(len(text) - 1) if text[i] == "\n" and text.startswith(("agent ", "tool ", "flow "), i + 1)
    ]
    if kind == 6 and starts:  # move a declared name inside its chunk (or back)
        start = text.find(" ", rng.choice(starts))
        if text.startswith("  ", start):
            return text[:start] + text[start + 1 :]
        return text[:start] + "  " + text[start + 1 :]
    toggles = [
        ("agent Buyer uses Pay {", "agent Buyer {"),  # Pay used or not
        ("agent Critic implements Review {", "agent Critic uses Search implements Review {"),  # attach every tool
        ("agent Wrong uses helper, Writer {", "agent Wrong uses Writer {"),
    ]
    if kind in (7, 8, 9):
        one, other = toggles[kind - 7]
        return text.replace(one, other, 1) if one in text else text.replace(other, one, 1)
    if kind == 0 and starts:  # duplicate a declaration (NX110)
        start = rng.choice(starts)
        end = text.find("\n}\n", start)
        end = text.find("\n", start) if end == -1 or text[start:].startswith("tool ") else end + 2
        return text + text[start : end + 1]
    if kind == 1 and starts:  # rename a declaration
        start = text.find(" ", rng.choice(starts)) + 1
        return text[:start] + rng.choice(["Renamed", "Writer", "Search", "Helper", "X"]) + text[start:]
    if kind == 2 and starts:  # remove a declaration's first line
        start = rng.choice(starts)
        return text[:start] + text[text.find("\n", start) + 1 :]
    if kind == 3:  # an unused tool, or a tool a flow calls
        name = rng.choice(["Unused", "Lookup0", "Shared", "Search"])
        at = rng.choice(starts) if starts else len(text)
        return text[:at] + f'tool {name} {{ description: "d", parameters: {{}} }}\n' + text[at:]
    if kind == 4:  # an agent without `uses`, or give one `uses`
        if "agent Auto {" in text:
            return text.replace("agent Auto {", "agent Auto uses Search {", 1)
        return text + 'agent Auto { prompt: "attaches every tool" }\n'
    if kind == 5:  # include the library, or drop the include
        if 'include "lib.nx";\n' in text:
            return text.replace('include "lib.nx";\n', "", 1)
        return 'include "lib.nx";\n' + text
    return _edit(text, rng)


def _declaration_loop(text: str, seed: int, steps: int, resolver: IncludeResolver | None) -> None:
    rng = random.Random(seed)
    check = _checker(resolver)
    previous = parse_source(text)
    check(previous)
    for _step in range(steps):
        edit = rng.random()
        if edit < 0.4:
            text = _declaration_edit(text, rng)
        elif edit < 0.7 and '"' in text:
            text = body_edit(text, rng)
        else:
            text = _edit(text, rng)
        current = parse_source(text, previous)
        check(current)
        previous = current


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_every_edit_the_kept_diagnostics_equal_a_fresh_computation(seed: int) -> None:
    small_workflow_loop(_checker(), seed)


def test_edits_of_a_large_file_and_the_corpus_equal_a_fresh_computation() -> None:
    large_file_and_corpus_loop(_checker(), 11)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_declaration_edits_equal_a_fresh_computation(seed: int) -> None:
    _declaration_loop(WORKFLOW, seed, 80, None)


@pytest.mark.parametrize("seed", [5, 6])
def test_declaration_edits_with_an_include_equal_a_fresh_computation(seed: int) -> None:
    lib = parse_source(LIB)
    reparsed = {"lib.nx": lib}

    def resolver(include: str, _including: object) -> SourceFile | None:
        return reparsed.get(include)

    _declaration_loop('include "lib.nx";\n' + WORKFLOW, seed, 50, resolver)
    reparsed["lib.nx"] = parse_source(LIB.replace("Shared", "Other"))  # the include changes
    _declaration_loop('include "lib.nx";\n' + WORKFLOW, seed, 10, resolver)


def test_declaration_edits_of_a_large_file_equal_a_fresh_computation() -> None:
    _declaration_loop("// 中文注释\n" + mixed_source(1500), 7, 30, None)


def test_a_body_edit_checks_only_the_changed_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    text = mixed_source(3000)
    previous = parse_source(text)
    semantic_diagnostics(previous)
    fresh_calls: list[object] = []
    real_fresh = incremental._fresh
    monkeypatch.setattr(incremental, "_fresh", lambda analysis: fresh_calls.append(1) or real_fresh(analysis))
    edited = parse_source(body_edit(text, random.Random(1)), previous)
    _checker()(edited)
    assert fresh_calls == []
