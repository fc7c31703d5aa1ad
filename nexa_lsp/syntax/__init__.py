"""Syntax layer: text -> version path -> Lark parse (with recovery) -> typed nodes."""

from nexa_lsp.syntax.diagnostics import CODES, Diagnostic, Fix, Related, Severity, TextEdit
from nexa_lsp.syntax.source import SourceFile, parse_source
from nexa_lsp.syntax.version import VersionPath, scan_version

__all__ = [
    "CODES",
    "Diagnostic",
    "Fix",
    "Related",
    "Severity",
    "SourceFile",
    "TextEdit",
    "VersionPath",
    "parse_source",
    "scan_version",
]
