"""Document and workspace symbols, semantic tokens, folding and selection ranges."""

from __future__ import annotations

import itertools
from pathlib import Path

from nexa_lsp.ide.legend import TOKEN_TYPES
from nexa_lsp.ide.outline import OutlineKind, document_symbols, matches, workspace_symbols
from nexa_lsp.ide.structure import folding_ranges, selection_ranges
from nexa_lsp.ide.tokens import DECLARATION, semantic_tokens
from nexa_lsp.syntax.source import parse_source
from tests.ide.helpers import LIB, PROGRAM, analysed, at


def test_document_symbols_are_hierarchical() -> None:
    symbols = document_symbols(parse_source(PROGRAM))
    assert [(s.name, s.kind) for s in symbols] == [
        ("lib.nxlib", OutlineKind.FILE),
        ("Report", OutlineKind.INTERFACE),
        ("Lookup", OutlineKind.FUNCTION),
        ("Analyst", OutlineKind.CLASS),
        ("main", OutlineKind.FUNCTION),
    ]
    report, lookup, analyst, main = symbols[1:]
    assert [c.name for c in report.children] == ["title", "score"]
    assert [c.name for c in analyst.children] == ["role", "model", "prompt", "memory"]
    assert [g.name for c in lookup.children if c.name == "parameters" for g in c.children] == ["id", "limit"]
    assert [c.name for c in main.children] == ["topic"]
    for sym in symbols:
        assert sym.start <= sym.selection_start <= sym.selection_end <= sym.end
        for child in sym.children:
            assert sym.start <= child.start and child.end <= sym.end
    assert PROGRAM[analyst.selection_start : analyst.selection_end] == "Analyst"


def test_workspace_symbols_match_subsequences() -> None:
    files = [(Path("/ws/main.nx"), parse_source(PROGRAM)), (Path("/ws/lib.nxlib"), parse_source(LIB))]
    assert matches("anl", "Analyst") and not matches("xyz", "Analyst")
    found = workspace_symbols("for", files)
    assert [(f.name, str(f.path)) for f in found] == [("Formatter", "/ws/lib.nxlib")]
    assert {f.name for f in workspace_symbols("", files)} >= {"Analyst", "main", "tidy", "Formatter"}


def test_semantic_tokens_say_what_names_are() -> None:
    analysis = analysed(PROGRAM)
    tokens = semantic_tokens(analysis)
    kinds = {
        (PROGRAM[t.start : t.start + t.length], TOKEN_TYPES[t.type_index], bool(t.modifiers & DECLARATION))
        for t in tokens
    }
    assert ("Analyst", "class", True) in kinds
    assert ("Analyst", "class", False) in kinds
    assert ("Lookup", "function", False) in kinds
    assert ("Report", "interface", False) in kinds
    assert ("draft", "variable", True) in kinds
    assert ("topic", "parameter", True) in kinds
    assert ("prompt", "property", False) in kinds
    assert ("run", "method", False) in kinds
    starts = [t.start for t in tokens]
    assert starts == sorted(starts)
    assert all(a.start + a.length <= b.start for a, b in itertools.pairwise(tokens))


def test_semantic_tokens_of_a_range() -> None:
    analysis = analysed(PROGRAM)
    start = at(PROGRAM, "flow main")
    tokens = semantic_tokens(analysis, start, len(PROGRAM))
    assert tokens and all(t.start >= start for t in tokens)


def test_folding_ranges_cover_declarations_and_comment_runs() -> None:
    text = "// one\n// two\n// three\n" + PROGRAM
    folds = folding_ranges(parse_source(text))
    lines = text.split("\n")
    assert (0, 2, "comment") in [(f.start_line, f.end_line, f.kind) for f in folds]
    agent_line = next(i for i, line in enumerate(lines) if line.startswith("agent Analyst"))
    agent_fold = next(f for f in folds if f.start_line == agent_line)
    assert lines[agent_fold.end_line + 1] == "}"  # the closing brace stays visible
    assert all(f.end_line > f.start_line for f in folds)


def test_selection_ranges_grow_outwards() -> None:
    source = parse_source(PROGRAM)
    ranges = selection_ranges(source, at(PROGRAM, "Analyst.run", 2))
    assert PROGRAM[ranges[0][0] : ranges[0][1]] == "Analyst"
    assert ranges[-1] == (0, len(PROGRAM))
    for inner, outer in itertools.pairwise(ranges):
        assert outer[0] <= inner[0] and inner[1] <= outer[1] and inner != outer
    assert any(PROGRAM[s:e].startswith("draft = Analyst.run") for s, e in ranges)
