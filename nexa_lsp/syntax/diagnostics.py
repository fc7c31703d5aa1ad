"""Diagnostics shared by every layer: severity, fixes, and the registry of codes.

Every code is stable: once published it keeps its meaning. ``docs/diagnostics.md``
documents each code of :data:`CODES` (a test keeps the two in step).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from nexa_lsp.syntax.tree import Span


class Severity(enum.IntEnum):
    """Same numbering as LSP ``DiagnosticSeverity``."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        return {1: "error", 2: "warning", 3: "info", 4: "hint"}[int(self)]


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``span`` with ``new_text``."""

    span: Span
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A mechanical repair. ``safe`` fixes may be applied without review (fix-all)."""

    title: str
    edits: tuple[TextEdit, ...]
    safe: bool = True
    why_unsafe: str | None = None


@dataclass(frozen=True, slots=True)
class Related:
    """A second location that explains a diagnostic (e.g. where a brace was opened)."""

    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    span: Span
    severity: Severity = Severity.ERROR
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    unnecessary: bool = False
    data: dict[str, object] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class CodeInfo:
    title: str
    severity: Severity
    category: str


def _c(title: str, severity: Severity, category: str) -> CodeInfo:
    return CodeInfo(title, severity, category)


E, W, INFO, H = Severity.ERROR, Severity.WARNING, Severity.INFORMATION, Severity.HINT

#: Every diagnostic code nexa-lsp can produce, with its default severity.
CODES: dict[str, CodeInfo] = {
    # syntax (parser)
    "NX001": _c("unexpected token", E, "syntax"),
    "NX002": _c("unexpected character", E, "syntax"),
    "NX003": _c("unclosed bracket", E, "syntax"),
    "NX004": _c("missing semicolon", W, "syntax"),
    "NX005": _c("too many syntax errors", INFO, "syntax"),
    "NX006": _c("nesting too deep", E, "syntax"),
    "NX007": _c("item could not be read", E, "syntax"),
    # version declaration
    "NX010": _c("unsupported Nexa version", E, "version"),
    "NX011": _c("version declaration is not first", E, "version"),
    "NX012": _c("duplicate version declaration", E, "version"),
    "NX013": _c("malformed version declaration", E, "version"),
    # forms the 2.x language does not have (parsed to give a precise message)
    "NX020": _c("empty flow parameter list", E, "syntax"),
    "NX021": _c("negative literal", E, "syntax"),
    "NX022": _c("list literal", E, "syntax"),
    "NX023": _c("assignment to a member or index", E, "syntax"),
    "NX024": _c("parenthesised expression", E, "syntax"),
    "NX025": _c("print without parentheses", W, "syntax"),
    "NX026": _c("await used as a value", W, "syntax"),
    "NX027": _c("value kind not accepted here", E, "syntax"),
    "NX028": _c("semicolon inside a declaration body", E, "syntax"),
    "NX030": _c("include / use config out of order", E, "syntax"),
    "NX031": _c("statement not allowed at top level", E, "syntax"),
    "NX032": _c("malformed tool body", E, "syntax"),
    "NX033": _c("malformed declaration part", E, "syntax"),
    "NX034": _c("unknown agent decorator", E, "syntax"),
    # files
    "NX090": _c("file is not UTF-8", E, "file"),
    "NX091": _c("file is empty", INFO, "file"),
    "NX092": _c("file too large", E, "file"),
    "NX093": _c("file cannot be read", E, "file"),
}
