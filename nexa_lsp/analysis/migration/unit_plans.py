"""The migrate fix of the NXM001 diagnostic, joined from per-unit shares.

Each unit's share of the whole-file plan (its blockers and its accepted rewrites, sorted by
start) is planned on its own and kept with the unit's findings, so a check re-plans only the
units whose findings changed. Joined in unit order the shares equal the whole-file plan
(``plan.plan_migration``) when they cannot interact: every share lies on one chunk anchor and
ends before the next share begins (then no rewrite of one can overlap or repeat one of
another, and the findings keep their order). Otherwise the whole-file plan is made. A unit
whose messages name lines is planned afresh each time (the numbers move with edits above).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nexa_lsp.analysis.migration.context import Finding
from nexa_lsp.analysis.migration.findings import Analysis
from nexa_lsp.analysis.migration.plan import Plan, _declaration_edit, _head_blockers, _plan_findings, plan_migration
from nexa_lsp.analysis.migration.positions import MARK, LineNumbers
from nexa_lsp.syntax.diagnostics import Diagnostic, TextEdit
from nexa_lsp.syntax.source import SourceFile
from nexa_lsp.syntax.tree import Anchor


@dataclass(frozen=True, slots=True)
class UnitPlan:
    """One unit's share: ``lo`` / ``hi`` bound every finding and rewrite span (relative to
    ``anchor``; None when they lie on several anchors)."""

    anchor: Anchor | None
    lo: int
    hi: int
    blockers: tuple[Diagnostic, ...]
    edits: tuple[TextEdit, ...]  # accepted rewrites, stably sorted by start
    keep: bool  # no message names a line


def _marked(finding: Finding) -> bool:
    return MARK in finding.message or any(fix.why_unsafe and MARK in fix.why_unsafe for fix in finding.fixes)


def unit_plan(findings: Sequence[Finding], lines: LineNumbers) -> UnitPlan:
    """The share of one unit's (sorted) findings."""
    plan = Plan([], [], [], [])
    _plan_findings(findings, lines, plan)
    anchor: Anchor | None = findings[0].span.anchor
    lo, hi = findings[0].span.rel_start, findings[0].span.rel_end
    for finding in findings:
        spans = [finding.span, *(e.span for fix in finding.fixes[:1] for e in fix.edits)]
        for span in spans:
            if span.anchor is not anchor:
                anchor = None
            lo = min(lo, span.rel_start)
            hi = max(hi, span.rel_end)
    edits = tuple(sorted(plan.edits, key=lambda e: e.span.start))
    keep = not any(_marked(f) for f in findings)
    return UnitPlan(anchor, lo, hi, tuple(plan.blockers), edits, keep)


def migrate_fix_parts(
    source: SourceFile, analysis: Analysis, lines: LineNumbers
) -> tuple[list[Diagnostic], list[TextEdit], bool]:
    """The blockers and rewrites of the whole-file migration, and whether the rewrites are
    already sorted by start (the edits are left out when something blocks)."""
    if len(analysis.kept) != len(analysis.units):
        return _whole_file(source, analysis, lines)
    shares: list[UnitPlan] = []
    end = -1
    for findings, kept in zip(analysis.units, analysis.kept, strict=False):
        if not findings:
            continue
        share = kept.plan if kept is not None and isinstance(kept.plan, UnitPlan) else None
        if share is None:
            share = unit_plan(findings, lines)
            if kept is not None and share.keep:
                kept.plan = share
        if share.anchor is None or share.anchor.base + share.lo <= end:
            return _whole_file(source, analysis, lines)
        end = share.anchor.base + share.hi
        shares.append(share)
    blockers = _head_blockers(source, analysis)
    for share in shares:
        blockers.extend(share.blockers)
    if blockers:
        return blockers, [], True
    edits: list[TextEdit] = []
    declaration = _declaration_edit(source)
    if declaration is not None:
        edits.append(declaration)
    for share in shares:
        if share.edits and edits and share.edits[0].span.start < edits[-1].span.start:
            return _whole_file(source, analysis, lines)  # the declaration goes after a rewrite
        edits.extend(share.edits)
    return blockers, edits, True


def _whole_file(
    source: SourceFile, analysis: Analysis, lines: LineNumbers
) -> tuple[list[Diagnostic], list[TextEdit], bool]:
    plan = plan_migration(source, analysis, lines)
    return plan.blockers, plan.edits, False
