"""Syntax layer: text -> version path -> Lark parse (with recovery) -> typed nodes.

The names below load on first use (PEP 562), so importing one submodule (for example
``nexa_lsp.syntax.diagnostics`` for the code tables) does not load the parser and Lark.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nexa_lsp.syntax.diagnostics import CODES, Diagnostic, Fix, Related, Severity, TextEdit
    from nexa_lsp.syntax.source import SourceFile, parse_source
    from nexa_lsp.syntax.version import VersionPath, scan_version

#: Where each exported name lives.
_HOMES = {
    "CODES": "diagnostics",
    "Diagnostic": "diagnostics",
    "Fix": "diagnostics",
    "Related": "diagnostics",
    "Severity": "diagnostics",
    "TextEdit": "diagnostics",
    "SourceFile": "source",
    "parse_source": "source",
    "VersionPath": "version",
    "scan_version": "version",
}

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


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
