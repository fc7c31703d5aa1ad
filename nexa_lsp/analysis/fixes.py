"""Applying fixes to text: one edit list, no overlaps, re-parse before accepting."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, TextEdit


@dataclass(frozen=True, slots=True)
class FixOutcome:
    text: str
    applied: list[tuple[Diagnostic, Fix]]
    skipped: list[tuple[Diagnostic, Fix]]  # overlapping another applied fix


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-overlapping edits (any order) to ``text``."""
    ordered = sorted(edits, key=lambda e: (e.span.start, e.span.end))
    out: list[str] = []
    cursor = 0
    for edit in ordered:
        start, end = edit.span.start, edit.span.end
        if start < cursor:
            raise ValueError("overlapping edits")
        out.append(text[cursor:start])
        out.append(edit.new_text)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def select_fixes(diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> list[tuple[Diagnostic, Fix]]:
    """The first fix of each diagnostic that is allowed (safe only unless ``unsafe``)."""
    chosen: list[tuple[Diagnostic, Fix]] = []
    for diag in diagnostics:
        for fix in diag.fixes:
            if fix.safe or unsafe:
                chosen.append((diag, fix))
                break
    return chosen


def apply_fixes(text: str, fixes: list[tuple[Diagnostic, Fix]]) -> FixOutcome:
    """Apply as many fixes as possible without overlapping edits (earlier fixes win)."""
    taken: list[TextEdit] = []
    applied: list[tuple[Diagnostic, Fix]] = []
    skipped: list[tuple[Diagnostic, Fix]] = []
    occupied: list[tuple[int, int]] = []
    for diag, fix in fixes:
        ranges = [(e.span.start, e.span.end) for e in fix.edits]
        if any(_overlaps(r, o) for r in ranges for o in occupied):
            skipped.append((diag, fix))
            continue
        occupied.extend(ranges)
        taken.extend(fix.edits)
        applied.append((diag, fix))
    return FixOutcome(apply_edits(text, taken), applied, skipped)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] == a[1] or b[0] == b[1]:  # insertions conflict only at the same point inside a range
        return (a[0] < b[1] and b[0] < a[1]) or a == b
    return a[0] < b[1] and b[0] < a[1]
