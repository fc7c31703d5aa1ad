"""Migration diagnostics of one source.

The work is kept per body (see ``findings``): an edit inside one flow re-walks that flow,
and the flows whose answers from the rest of the file changed, and reuses everything
else. Spans are anchored to their chunks, so kept findings move with an edit above them;
line numbers in messages are written in when the diagnostics are made (``positions``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from nexa_lsp.analysis.migration.context import Finding
from nexa_lsp.analysis.migration.findings import Analysis, analyse
from nexa_lsp.analysis.migration.plan import to_diagnostic
from nexa_lsp.analysis.migration.positions import LineNumbers, last_line
from nexa_lsp.analysis.migration.program import included_sources
from nexa_lsp.analysis.migration.rules import nxm001_no_version_declaration
from nexa_lsp.analysis.migration.splice import analyse_edited, spliced_from
from nexa_lsp.analysis.migration.unit_plans import _marked, migrate_fix_parts
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax.diagnostics import Diagnostic, Severity
from nexa_lsp.syntax.source import SourceFile
from nexa_lsp.syntax.version import VersionPath

#: The kept walks and findings are shared by every document; one analysis at a time.
_LOCK = threading.Lock()


def migration_diagnostics(
    source: SourceFile,
    hints_on_24: bool = True,
    severity_on_24: Severity = Severity.HINT,
    includes: IncludeResolver | None = None,
) -> list[Diagnostic]:
    """Lints for the 2.4 -> 3.0 move: hints (or ``severity_on_24``) on the 2.4 path, errors
    on 3.0 (with the 3.3 run checks). ``includes`` finds the included files, whose agents,
    tools and flows the rules then see."""
    if source.path is VersionPath.COMPAT_24 and not hints_on_24:
        return []
    included = included_sources(source, includes)
    with _LOCK:
        return _diagnostics(source, analyse_edited(source, included), severity_on_24, splice=True)


def fresh_migration_diagnostics(
    source: SourceFile,
    hints_on_24: bool = True,
    severity_on_24: Severity = Severity.HINT,
    includes: IncludeResolver | None = None,
) -> list[Diagnostic]:
    """The same diagnostics computed from scratch, nothing kept or reused (for tests)."""
    if source.path is VersionPath.COMPAT_24 and not hints_on_24:
        return []
    analysis = analyse(source, use_cache=False, included=included_sources(source, includes))
    return _diagnostics(source, analysis, severity_on_24)


@dataclass(eq=False, slots=True)
class _Converted:
    """The findings of the last analysis as diagnostics, in order (NXM001 left out)."""

    analysis: Analysis
    key: tuple[VersionPath, Severity]
    diagnostics: list[Diagnostic]
    marked: int  # findings whose messages name lines
    lines: int  # line breaks of the text


_LAST: _Converted | None = None


def _converted(source: SourceFile, analysis: Analysis, on_24: Severity, lines: LineNumbers) -> list[Diagnostic]:
    """The findings as diagnostics; those of the units an edit left alone are taken from the
    last analysis when it is the one this one was spliced from (see ``splice``)."""
    global _LAST
    path = source.path
    with_fixes = path is VersionPath.NEXA_30
    severity = Severity.HINT if with_fixes else on_24  # as ``_diagnostics`` converts them

    def convert(findings: list[Finding]) -> list[Diagnostic]:
        return [to_diagnostic(f, path, lines, with_fixes=with_fixes, on_24=severity) for f in findings]

    key = (path, severity)
    basis = analysis.basis
    breaks = last_line(source)
    last, _LAST = _LAST, None
    if basis is None or analysis.findings is not basis.unit_findings:
        return convert(analysis.findings)  # with NXM004 findings (or nothing kept): not kept
    splice = spliced_from(analysis)
    if last is not None and splice is not None and splice.previous is last.analysis and last.key == key:
        previous = last.analysis.findings
        gone = sum(1 for f in previous[splice.found_start : splice.found_end] if _marked(f))
        came = [f for unit in splice.units for f in unit]
        marked = last.marked - gone + sum(1 for f in came if _marked(f))
        if not (last.marked - gone) or breaks == last.lines:
            kept = last.diagnostics
            out = [*kept[: splice.found_start], *convert(came), *kept[splice.found_end :]]
            _LAST = _Converted(analysis, key, out, marked, breaks)
            return out
    out = convert(analysis.findings)
    _LAST = _Converted(analysis, key, out, sum(1 for f in analysis.findings if _marked(f)), breaks)
    return out


def _diagnostics(source: SourceFile, analysis: Analysis, on_24: Severity, splice: bool = False) -> list[Diagnostic]:
    lines = LineNumbers(source)
    path = source.path
    if splice:
        out = list(_converted(source, analysis, on_24, lines))
    elif path is VersionPath.NEXA_30:
        out = [to_diagnostic(f, path, lines) for f in analysis.findings]
    else:
        out = [to_diagnostic(f, path, lines, with_fixes=False, on_24=on_24) for f in analysis.findings]
    if path is VersionPath.NEXA_30:
        return out
    # 2.4 path: the file is valid as it is. A single rewrite would call a method 2.4 does not
    # have, so the hints carry no individual fix; the migrate fix applies them all at once.
    # A file with syntax errors gets no NXM001: those come first (and block migrating).
    broken = any(d.severity is Severity.ERROR for d in source.diagnostics)
    if source.version.declaration is None and source.text and not source.text.isspace() and not broken:
        blockers, edits, ordered = migrate_fix_parts(source, analysis, lines)
        out.append(nxm001_no_version_declaration.diagnostic(source, blockers, edits, on_24, ordered))
    return out
