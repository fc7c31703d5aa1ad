"""Small helpers for syntax tests."""

from __future__ import annotations

from nexa_lsp.syntax import Severity, parse_source
from nexa_lsp.syntax.source import SourceFile


def errors_of(source: SourceFile) -> list[str]:
    """`line:col CODE message` of each error, for readable assertion failures."""
    out = []
    for d in source.diagnostics:
        if d.severity is Severity.ERROR:
            pos = source.lines.position(d.span.start)
            out.append(f"{pos.line + 1}:{pos.character + 1} {d.code} {d.message}")
    return out


def parse_ok(text: str) -> SourceFile:
    """Parse and assert there is no error."""
    source = parse_source(text)
    assert errors_of(source) == [], text
    return source


def codes(source: SourceFile) -> list[str]:
    return [d.code for d in source.diagnostics]
