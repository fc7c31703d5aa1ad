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
from nexa_lsp.analysis.migration.findings import Analysis, KeptFindings
from nexa_lsp.analysis.migration.plan import Plan, _declaration_edit, _head_blockers, _plan_findings, plan_migration
from nexa_lsp.analysis.migration.positions import MARK, LineNumbers, last_line
from nexa_lsp.analysis.migration.splice import spliced_from
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


@dataclass(eq=False, slots=True)
class _Joined:
    """The shares of the last analysis' units, joined (see ``migrate_fix_parts``)."""

    analysis: Analysis
    shares: list[UnitPlan | None]  # per unit (None: the unit has no findings)
    blockers: list[Diagnostic]  # of every share, in order
    blocker_counts: list[int]  # per unit
    edits: list[TextEdit]  # of every share, in order
    edit_counts: list[int]  # per unit
    unkept: int  # shares planned afresh each time (their messages name lines)
    breaks: int  # line breaks of the text
    ordered: bool  # no share's first rewrite starts before the last one of the share before


_LAST: _Joined | None = None


def _share(findings: list[Finding], kept: KeptFindings | None, lines: LineNumbers) -> UnitPlan | None:
    if not findings:
        return None
    share = kept.plan if kept is not None and isinstance(kept.plan, UnitPlan) else None
    if share is None:
        share = unit_plan(findings, lines)
        if kept is not None and share.keep:
            kept.plan = share
    return share


def _apart(chain: Sequence[UnitPlan]) -> bool:
    """Does every share lie on one anchor and begin after the one before it ends?"""
    end = -1
    for share in chain:
        if share.anchor is None or share.anchor.base + share.lo <= end:
            return False
        end = share.anchor.base + share.hi
    return True


def _ordered(chain: Sequence[UnitPlan], last: TextEdit | None) -> bool:
    """Does no share's first rewrite start before the last rewrite of the share before it?"""
    for share in chain:
        if share.edits:
            if last is not None and share.edits[0].span.start < last.span.start:
                return False
            last = share.edits[-1]
    return True


def _joined(analysis: Analysis, lines: LineNumbers, breaks: int) -> _Joined | None:
    """Every unit's share, joined; None when they may interact (then the whole-file plan)."""
    shares = [_share(f, k, lines) for f, k in zip(analysis.units, analysis.kept, strict=True)]
    present = [s for s in shares if s is not None]
    if not _apart(present):
        return None
    return _Joined(
        analysis,
        shares,
        [b for s in present for b in s.blockers],
        [len(s.blockers) if s is not None else 0 for s in shares],
        [e for s in present for e in s.edits],
        [len(s.edits) if s is not None else 0 for s in shares],
        sum(1 for s in present if not s.keep),
        breaks,
        _ordered(present, None),
    )


def _spliced(analysis: Analysis, lines: LineNumbers, last: _Joined | None, breaks: int) -> _Joined | None:
    """``_joined`` from the last join when ``analysis`` was spliced from its analysis: only the
    new units are planned, and the order checks are made where the new shares meet the old."""
    splice = spliced_from(analysis)
    if last is None or splice is None or splice.previous is not last.analysis or not last.ordered:
        return None
    start, end = splice.start, splice.end
    old = last.shares
    gone_unkept = sum(1 for s in old[start:end] if s is not None and not s.keep)
    if last.unkept - gone_unkept and breaks != last.breaks:
        return None  # kept messages name lines that moved
    came = [_share(f, k, lines) for f, k in zip(splice.units, analysis.kept[start:], strict=False)]
    came_present = [s for s in came if s is not None]
    before = next((s for s in reversed(old[:start]) if s is not None), None)
    after = next((s for s in old[end:] if s is not None), None)
    chain = [s for s in (before, *came_present, after) if s is not None]
    if not _apart(chain):
        return None
    b_start = sum(last.blocker_counts[:start])
    b_end = b_start + sum(last.blocker_counts[start:end])
    e_start = sum(last.edit_counts[:start])
    e_end = e_start + sum(last.edit_counts[start:end])
    after_edits = next((s for s in old[end:] if s is not None and s.edits), None)
    edit_chain = [*came_present, *([after_edits] if after_edits is not None else [])]
    ordered = _ordered(edit_chain, last.edits[e_start - 1] if e_start else None)
    return _Joined(
        analysis,
        [*old[:start], *came, *old[end:]],
        [*last.blockers[:b_start], *(b for s in came_present for b in s.blockers), *last.blockers[b_end:]],
        [*last.blocker_counts[:start], *(len(s.blockers) if s else 0 for s in came), *last.blocker_counts[end:]],
        [*last.edits[:e_start], *(e for s in came_present for e in s.edits), *last.edits[e_end:]],
        [*last.edit_counts[:start], *(len(s.edits) if s else 0 for s in came), *last.edit_counts[end:]],
        last.unkept - gone_unkept + sum(1 for s in came_present if not s.keep),
        breaks,
        ordered,
    )


def migrate_fix_parts(
    source: SourceFile, analysis: Analysis, lines: LineNumbers
) -> tuple[list[Diagnostic], list[TextEdit], bool]:
    """The blockers and rewrites of the whole-file migration, and whether the rewrites are
    already sorted by start (the edits are left out when something blocks)."""
    global _LAST
    last = None
    if analysis.basis is not None:  # only analyses that are kept take part (not fresh ones)
        last, _LAST = _LAST, None
    if len(analysis.kept) != len(analysis.units):
        return _whole_file(source, analysis, lines)
    breaks = last_line(source)
    joined = _spliced(analysis, lines, last, breaks) or _joined(analysis, lines, breaks)
    if joined is None:
        return _whole_file(source, analysis, lines)
    if analysis.basis is not None:  # kept for the analysis of the next version
        _LAST = joined
    blockers = _head_blockers(source, analysis)
    blockers.extend(joined.blockers)
    if blockers:
        return blockers, [], True
    if not joined.ordered:
        return _whole_file(source, analysis, lines)
    edits: list[TextEdit] = []
    declaration = _declaration_edit(source)
    if declaration is not None:
        edits.append(declaration)
        if joined.edits and joined.edits[0].span.start < declaration.span.start:
            return _whole_file(source, analysis, lines)  # the declaration goes after a rewrite
    edits.extend(joined.edits)
    return blockers, edits, True


def _whole_file(
    source: SourceFile, analysis: Analysis, lines: LineNumbers
) -> tuple[list[Diagnostic], list[TextEdit], bool]:
    plan = plan_migration(source, analysis, lines)
    return plan.blockers, plan.edits, False
