"""The NXM001 migrate fix joined from per-unit shares equals the whole-file plan.

``unit_plans.migrate_fix_parts`` keeps each unit's blockers and rewrites with its findings
and joins them; ``plan.plan_migration`` plans the whole file in one pass. They must agree
on the corpus, on a large generated file, and after every edit of a seeded edit loop
(shares reused from the kept analysis against a fresh analysis of the final text).
"""

from __future__ import annotations

import random

import pytest

from benchmarks.synthetic import mixed_source
from nexa_lsp.analysis.migration.findings import analyse
from nexa_lsp.analysis.migration.plan import plan_migration
from nexa_lsp.analysis.migration.positions import LineNumbers
from nexa_lsp.analysis.migration.unit_plans import UnitPlan, migrate_fix_parts
from nexa_lsp.syntax import Diagnostic, SourceFile, TextEdit, parse_source
from tests.migration.test_every_fix import corpus_texts
from tests.migration.test_incremental import BASE, _edit


def _blockers(blockers: list[Diagnostic]) -> list[object]:
    return [(b.code, b.span.start, b.span.end, b.message, b.severity) for b in blockers]


def _edits(edits: list[TextEdit]) -> list[tuple[int, int, str]]:
    return [(e.span.start, e.span.end, e.new_text) for e in edits]


def _whole_file(source: SourceFile) -> tuple[list[object], list[tuple[int, int, str]]]:
    fresh = parse_source(source.text)
    plan = plan_migration(fresh, analyse(fresh, use_cache=False), LineNumbers(fresh))
    edits = [] if plan.blockers else sorted(plan.edits, key=lambda e: e.span.start)
    return _blockers(plan.blockers), _edits(edits)


def _joined(source: SourceFile, use_cache: bool = True) -> tuple[list[object], list[tuple[int, int, str]]]:
    blockers, edits, ordered = migrate_fix_parts(source, analyse(source, use_cache=use_cache), LineNumbers(source))
    if not ordered:
        edits = sorted(edits, key=lambda e: e.span.start)
    return _blockers(blockers), _edits(edits)


@pytest.mark.parametrize("use_cache", [False, True])
def test_the_joined_shares_equal_the_whole_file_plan_on_the_corpus(use_cache: bool) -> None:
    texts = [text for _rel, text in corpus_texts()] + [BASE, "\n\n" + BASE.replace("flow main", "flow m2")]
    for text in texts:
        source = parse_source(text)
        assert _joined(source, use_cache) == _whole_file(source), text[:200]


def test_a_large_file_is_joined_from_kept_shares_and_moves_with_an_edit_above() -> None:
    text = mixed_source(600)
    source = parse_source(text)
    analysis = analyse(source)
    blockers, edits, ordered = migrate_fix_parts(source, analysis, LineNumbers(source))
    assert ordered and not blockers and len(edits) > 50  # the joined path, not the fallback
    assert all(isinstance(k.plan, UnitPlan) for k, f in zip(analysis.kept, analysis.units, strict=True) if k and f)
    edited = "// 中文注释\n\n" + text
    current = parse_source(edited, source)
    assert _joined(current) == _whole_file(current)


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_after_every_edit_the_kept_shares_equal_a_fresh_whole_file_plan(seed: int) -> None:
    rng = random.Random(seed)
    text = BASE
    previous = parse_source(text)
    analyse(previous)
    for step in range(50):
        text = _edit(text, rng)
        current = parse_source(text, previous)
        assert _joined(current) == _whole_file(current), (seed, step, text)
        previous = current
