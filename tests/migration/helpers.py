"""Shared helpers of the migration tests: lint a text, apply a fix, re-parse on the 3.0 path."""

from __future__ import annotations

from nexa_lsp.analysis.fixes import apply_edits
from nexa_lsp.analysis.migration import migration_diagnostics
from nexa_lsp.syntax import Diagnostic, Fix, Severity, SourceFile, VersionPath, parse_source

V30 = "nexa 3.0;\n"


def lint(text: str, hints: bool = True) -> list[Diagnostic]:
    return migration_diagnostics(parse_source(text), hints)


def codes(text: str) -> list[str]:
    return [d.code for d in lint(text)]


def only(text: str, code: str) -> Diagnostic:
    found = [d for d in lint(text) if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in lint(text)]
    return found[0]


def all_of(text: str, code: str) -> list[Diagnostic]:
    return [d for d in lint(text) if d.code == code]


def apply(text: str, fix: Fix) -> str:
    return apply_edits(text, fix.edits)


def errors_30(text: str) -> list[Diagnostic]:
    """Every error of ``text`` on the 3.0 path: parser and migration checks."""
    source = parse_source(text)
    assert source.path is VersionPath.NEXA_30
    found = [d for d in source.diagnostics if d.severity is Severity.ERROR]
    found += [d for d in migration_diagnostics(source) if d.severity is Severity.ERROR]
    return found


def parses_30(text: str) -> SourceFile:
    """``text`` parses on the 3.0 path with no syntax error."""
    source = parse_source(text)
    assert source.path is VersionPath.NEXA_30
    assert [d for d in source.diagnostics if d.severity is Severity.ERROR] == []
    return source


def fix_titled(diag: Diagnostic, start: str) -> Fix:
    for fix in diag.fixes:
        if fix.title.startswith(start):
            return fix
    raise AssertionError(f"no fix starting {start!r}: {[f.title for f in diag.fixes]}")
