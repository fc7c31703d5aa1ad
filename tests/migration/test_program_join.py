"""A program updated from the previous version equals one read from every chunk.

``Program`` swaps the changed chunks' declarations into the last program when an edit
leaves the declared names alone; ``Program(..., incremental=False)`` reads every chunk.
They must agree (tables in the same order, the same chunk per declaration, the same
stamp object) after every edit of seeded edit loops on a small workflow, a large
generated file and the corpus.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.synthetic import mixed_source
from nexa_lsp.analysis.migration import fresh_migration_diagnostics, migration_diagnostics
from nexa_lsp.analysis.migration import program as program_module
from nexa_lsp.analysis.migration.program import Program
from nexa_lsp.syntax import SourceFile, parse_source
from tests.edit_loops import body_edit, large_file_and_corpus_loop, small_workflow_loop


def _shape(program: Program) -> object:
    tables = (program.agents, program.tools, program.tool_functions, program.flows)
    return (
        [[(name, id(decl)) for name, decl in table.items()] for table in tables],
        sorted(program.routed),
        sorted((key, id(chunk)) for key, chunk in program._chunk_of.items()),
        program._declaring,
        program._own_declares,
    )


def _check(source: SourceFile) -> Program:
    updated = Program(source)
    fresh = Program(source, incremental=False)
    assert _shape(updated) == _shape(fresh), source.text[:300]
    assert updated.stamp is fresh.stamp
    assert updated.flow_runs("main") == fresh.flow_runs("main")
    return updated


def test_a_body_edit_updates_the_last_program() -> None:
    text = mixed_source(3000)
    previous = parse_source(text)
    last = Program(previous)
    edited = parse_source(body_edit(text, random.Random(4)), previous)
    assert Program(edited, incremental=False)._update(last)  # the update path, not the fallback
    assert _check(edited).stamp is last.stamp


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_every_edit_the_updated_program_equals_a_fresh_one(seed: int) -> None:
    small_workflow_loop(_check, seed)


def test_edits_of_a_large_file_and_the_corpus_equal_a_fresh_program() -> None:
    large_file_and_corpus_loop(_check, 11)
    assert program_module._LAST is not None


def _diagnostics(source: SourceFile) -> list[object]:
    return [(d.code, d.span.start, d.span.end, d.message, d.severity) for d in migration_diagnostics(source)]


def test_the_stamp_changes_exactly_when_what_agent_facts_read_changes() -> None:
    text = mixed_source(400)
    previous = parse_source(text)
    stamp = Program(previous).stamp
    edits = [
        ('role: "Drafter number 3"', 'role: "Drafter number 3 (改)"', True),
        ('description: "Look up records of kind 1', 'description: "Look up some records of kind 1', True),
        ("agent Drafter5 uses Lookup1 {\n", 'agent Drafter5 uses Lookup1 {\n    memory: "long",\n', False),
        (
            'parameters: {"id": "string", "limit": "number"}\n}\n// 代理 8:',
            ('parameters: {"id": "string", "limit": "number"},\n    approval: "required"\n}\n// 代理 8:'),
            False,
        ),
        ("agent Drafter9 uses Lookup2 {", "agent Drafter9 uses Lookup2, Lookup0 {", False),
    ]
    for old, new, same in edits:
        assert old in text, old
        edited = text.replace(old, new, 1)
        source = parse_source(edited, previous)
        assert (Program(source).stamp == stamp) is same, new
        assert _diagnostics(source) == [
            (d.code, d.span.start, d.span.end, d.message, d.severity)
            for d in fresh_migration_diagnostics(parse_source(edited))
        ], new
        previous = parse_source(text, source)
        assert Program(previous).stamp == stamp
