"""Whole-file migration: plan every safe rewrite plus the version declaration, apply, verify.

:func:`migrate_source` is all or nothing: the migrated text parses on the 3.0 path with no
error (from the parser or the migration checks), or nothing changes and the blockers say why.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from nexa_lsp.analysis.migration.context import Finding
from nexa_lsp.analysis.migration.findings import Analysis, analyse
from nexa_lsp.analysis.migration.positions import MARK, LineNumbers
from nexa_lsp.analysis.migration.program import included_sources
from nexa_lsp.analysis.migration.rules import MIGRATION_CODES, migration_severity
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Severity, TextEdit
from nexa_lsp.syntax.source import SourceFile, parse_source
from nexa_lsp.syntax.tree import absolute_span
from nexa_lsp.syntax.version import VersionPath, leading_trivia_end


def blocks(finding: Finding) -> bool:
    """True when the finding is an error on the 3.0 path and has no safe rewrite."""
    if MIGRATION_CODES[finding.code].severity is not Severity.ERROR:
        return False
    return not (finding.fixes and finding.fixes[0].safe)


@dataclass(frozen=True, slots=True)
class MigrationResult:
    """What migrating one source to Nexa 3.0 gives.

    ``text`` is the migrated text when the migration is complete, else the original.
    ``edits`` turn the original into ``text`` (empty when blocked or nothing changes).
    ``blockers`` say what prevents an automatic migration (spans on the original text):
    findings without a safe rewrite, syntax errors, an unusable version declaration.
    ``applied`` lists each rewrite made (the finding and its fix); ``notes`` behaviour that
    changes with the move itself (tool approvals that start to apply).
    """

    original: str
    text: str
    edits: tuple[TextEdit, ...]
    blockers: tuple[Diagnostic, ...]
    applied: tuple[tuple[Diagnostic, Fix], ...]
    notes: tuple[str, ...]
    was_30: bool

    @property
    def blocked(self) -> bool:
        return bool(self.blockers)

    @property
    def changed(self) -> bool:
        return self.text != self.original

    @property
    def migrated(self) -> bool:
        """True when the text was changed into a Nexa 3.0 file."""
        return self.changed and not self.blocked


@dataclass(frozen=True, slots=True)
class Plan:
    edits: list[TextEdit]
    applied: list[tuple[Diagnostic, Fix]]
    blockers: list[Diagnostic]
    notes: list[str]


def _declaration_edit(source: SourceFile) -> TextEdit | None:
    decl = source.version.declaration
    if source.path is VersionPath.NEXA_30:
        return None
    if decl is None:
        return TextEdit(absolute_span(*[_declaration_offset(source.text)] * 2), _declaration_text(source.text))
    if decl.problem is None and decl.version == "2.4":
        return TextEdit(absolute_span(decl.version_start, decl.version_end), "3.0")
    return None


def _declaration_offset(text: str) -> int:
    """Where `nexa 3.0;` goes: after a `#!` line and the leading comment block (license,
    description), at the start of the next line - the version scan allows all of them first."""
    trivia = text[: leading_trivia_end(text)]
    start = 1 if text.startswith("\ufeff") else 0
    if text.startswith("#!", start):
        newline = text.find("\n", start)
        start = len(text) if newline == -1 else newline + 1
    last = len(trivia.rstrip(" \t\r\n\f\ufeff"))
    if last <= start:  # no comment: right after the BOM or the `#!` line
        return start
    newline = text.find("\n", last)
    if newline != -1 and not text[last:newline].strip():
        return newline + 1
    return last  # the comment is the last line, or code follows it on the same line


def _declaration_text(text: str) -> str:
    eol = "\r\n" if "\r\n" in text else "\n"
    at = _declaration_offset(text)
    return f"nexa 3.0;{eol}" if at == 0 or text[at - 1] in "\n\ufeff" else f"{eol}nexa 3.0;{eol}"


def to_diagnostic(
    f: Finding, path: VersionPath, lines: LineNumbers, with_fixes: bool = True, on_24: Severity = Severity.HINT
) -> Diagnostic:
    """The finding as a diagnostic of ``path``, its line markers written in; migration lints
    on the 2.4 path get severity ``on_24``.

    A finding without markers converts once; its diagnostic moves with its chunk.
    """
    key = (path, with_fixes, on_24)
    done = f.converted.get(key)
    if done is not None:
        return done
    fixes = tuple(f.fixes) if with_fixes else ()
    marked = MARK in f.message or any(fix.why_unsafe and MARK in fix.why_unsafe for fix in fixes)
    if marked:
        fixes = tuple(
            dataclasses.replace(fix, why_unsafe=lines.render(fix.why_unsafe)) if fix.why_unsafe else fix
            for fix in fixes
        )
    diagnostic = Diagnostic(
        f.code,
        lines.render(f.message),
        f.span,
        migration_severity(f.code, path, on_24),
        fixes,
        tuple(f.related),
        f.unnecessary,
    )
    if not marked:
        f.converted[key] = diagnostic
    return diagnostic


def _head_blockers(source: SourceFile, analysis: Analysis) -> list[Diagnostic]:
    """What blocks the migration before any finding: the declaration, depth, syntax errors."""
    blockers: list[Diagnostic] = []
    decl = source.version.declaration
    if decl is not None and decl.problem is not None:
        blockers.append(
            Diagnostic(
                "NX010" if decl.problem == "unsupported" else "NX013",
                f"the version declaration `{source.text[decl.start : decl.end]}` is not usable: "
                "fix it (or remove it) before migrating",
                absolute_span(decl.start, decl.end),
                Severity.ERROR,
            )
        )
    if analysis.too_deep:
        blockers.append(
            Diagnostic(
                "NXM001",
                "the file is nested too deeply to analyse its runs: migrate it by hand",
                absolute_span(0, 0),
                Severity.ERROR,
            )
        )
    syntax = [d for d in source.diagnostics if d.severity is Severity.ERROR and d.code not in ("NX010", "NX013")]
    blockers.extend(syntax)
    return blockers


def _plan_findings(findings: Sequence[Finding], lines: LineNumbers, plan: Plan) -> None:
    """Add the rewrites and blockers of ``findings`` (in order) to ``plan``."""
    occupied: dict[tuple[int, int], str] = {}
    taken: list[tuple[int, int, str]] = []  # accepted edits, sorted: overlap checks look at neighbours only
    for finding in findings:
        diagnostic = to_diagnostic(finding, VersionPath.NEXA_30, lines)
        if blocks(finding):
            plan.blockers.append(diagnostic)
            continue
        if (
            not finding.fixes
            or not finding.fixes[0].safe
            or MIGRATION_CODES[finding.code].severity is not Severity.ERROR
        ):
            continue
        fix = finding.fixes[0]
        new = [
            e
            for e in fix.edits
            if (e.span.start, e.span.end) not in occupied or occupied[(e.span.start, e.span.end)] != e.new_text
        ]
        if any(_overlaps_any(e, taken) for e in new):
            plan.blockers.append(
                Diagnostic(
                    finding.code,
                    diagnostic.message + " (its rewrite overlaps another one; "
                    "migrate again after fixing this call by hand)",
                    diagnostic.span,
                    Severity.ERROR,
                )
            )
            continue
        for e in new:
            occupied[(e.span.start, e.span.end)] = e.new_text
            plan.edits.append(e)
            bisect.insort(taken, (e.span.start, e.span.end, e.new_text))
        plan.applied.append((diagnostic, fix))


def plan_migration(source: SourceFile, analysis: Analysis, lines: LineNumbers) -> Plan:
    """Every safe rewrite of ``analysis`` plus the version declaration, and what blocks them."""
    plan = Plan([], [], _head_blockers(source, analysis), list(analysis.notes))
    _plan_findings(analysis.findings, lines, plan)
    declaration = _declaration_edit(source)
    if declaration is not None:
        plan.edits.insert(0, declaration)
    return plan


def _overlaps_any(edit: TextEdit, taken: list[tuple[int, int, str]]) -> bool:
    """Does ``edit`` overlap one of the (non-overlapping, sorted) accepted edits?"""
    index = bisect.bisect_left(taken, (edit.span.start, edit.span.end, edit.new_text))
    for near in taken[max(0, index - 2) : index + 2]:
        if _overlap(edit.span.start, edit.span.end, near[0], near[1]):
            return True
    return False


def _overlap(a0: int, a1: int, b0: int, b1: int) -> bool:
    if a0 == a1 and b0 == b1:
        return a0 == b0
    if a0 == a1:
        return b0 < a0 < b1
    if b0 == b1:
        return a0 < b0 < a1
    return a0 < b1 and b0 < a1


def _apply(text: str, edits: list[TextEdit]) -> str:
    ordered = sorted(edits, key=lambda e: (e.span.start, e.span.end))
    out: list[str] = []
    cursor = 0
    for edit in ordered:
        out.append(text[cursor : edit.span.start])
        out.append(edit.new_text)
        cursor = max(cursor, edit.span.end)
    out.append(text[cursor:])
    return "".join(out)


def original_offset(offset: int, edits: Sequence[TextEdit]) -> int:
    """Map an offset of the edited text back to the original text."""
    delta = 0
    for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end)):
        new_start = edit.span.start + delta
        new_end = new_start + len(edit.new_text)
        if offset < new_start:
            break
        if offset < new_end:
            return edit.span.start
        delta += len(edit.new_text) - (edit.span.end - edit.span.start)
    return max(0, offset - delta)


def migrate_source(
    text: str, source: SourceFile | None = None, includes: IncludeResolver | None = None
) -> MigrationResult:
    """Move ``text`` to Nexa 3.0: the version declaration plus every safe rewrite, verified.

    The result is complete (parses on the 3.0 path with no errors, from the parser or the
    migration checks) or nothing changes and ``blockers`` say why. Idempotent: migrating a
    migrated text changes nothing.
    """
    if source is None or source.text != text:
        source = parse_source(text)
    analysis = analyse(source, included=included_sources(source, includes))
    plan = plan_migration(source, analysis, LineNumbers(source))
    was_30 = source.path is VersionPath.NEXA_30
    if plan.blockers:
        return MigrationResult(text, text, (), tuple(plan.blockers), (), tuple(plan.notes), was_30)
    if not plan.edits:
        return MigrationResult(text, text, (), (), (), tuple(plan.notes), was_30)
    candidate = _apply(text, plan.edits)
    reparsed = parse_source(candidate)
    problems: list[Diagnostic] = []
    if reparsed.path is not VersionPath.NEXA_30:
        problems.append(Diagnostic("NX013", "the migrated file is not on the 3.0 path", absolute_span(0, 0)))
    errors = [d for d in reparsed.diagnostics if d.severity is Severity.ERROR]
    lines = LineNumbers(reparsed)
    errors += [
        d
        for f in analyse(reparsed, use_cache=False, included=included_sources(reparsed, includes)).findings
        if (d := to_diagnostic(f, reparsed.path, lines)).severity is Severity.ERROR
    ]
    for d in errors:
        start = original_offset(d.span.start, plan.edits)
        line = reparsed.lines.line_of(d.span.start) + 1
        problems.append(
            Diagnostic(
                d.code, f"after migration, line {line}: {d.message}", absolute_span(start, start), Severity.ERROR
            )
        )
    if problems:
        return MigrationResult(text, text, (), tuple(problems), (), tuple(plan.notes), was_30)
    ordered = tuple(sorted(plan.edits, key=lambda e: (e.span.start, e.span.end)))
    return MigrationResult(text, candidate, ordered, (), tuple(plan.applied), tuple(plan.notes), was_30)
