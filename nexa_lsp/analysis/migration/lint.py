"""Migration diagnostics of one source.

The work is kept per body (see ``findings``): an edit inside one flow re-walks that flow,
and the flows whose answers from the rest of the file changed, and reuses everything
else. Spans are anchored to their chunks, so kept findings move with an edit above them;
line numbers in messages are written in when the diagnostics are made (``positions``).
"""

from __future__ import annotations

import threading

from nexa_lsp.analysis.migration.findings import Analysis, analyse
from nexa_lsp.analysis.migration.plan import to_diagnostic
from nexa_lsp.analysis.migration.positions import LineNumbers
from nexa_lsp.analysis.migration.program import included_sources
from nexa_lsp.analysis.migration.rules import nxm001_no_version_declaration
from nexa_lsp.analysis.migration.unit_plans import migrate_fix_parts
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
        return _diagnostics(source, analyse(source, included=included), severity_on_24)


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


def _diagnostics(source: SourceFile, analysis: Analysis, on_24: Severity) -> list[Diagnostic]:
    lines = LineNumbers(source)
    if source.path is VersionPath.NEXA_30:
        return [to_diagnostic(f, source.path, lines) for f in analysis.findings]
    # 2.4 path: the file is valid as it is. A single rewrite would call a method 2.4 does not
    # have, so the hints carry no individual fix; the migrate fix applies them all at once.
    # A file with syntax errors gets no NXM001: those come first (and block migrating).
    out = [to_diagnostic(f, source.path, lines, with_fixes=False, on_24=on_24) for f in analysis.findings]
    broken = any(d.severity is Severity.ERROR for d in source.diagnostics)
    if source.version.declaration is None and source.text.strip() and not broken:
        blockers, edits, ordered = migrate_fix_parts(source, analysis, lines)
        out.append(nxm001_no_version_declaration.diagnostic(source, blockers, edits, on_24, ordered))
    return out
