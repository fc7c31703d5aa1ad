"""Semantic diagnostics (undefined references, duplicates, property checks ...).

Owned by the language-server work (issue 4); returns nothing until it lands.
"""

from __future__ import annotations

from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax.diagnostics import Diagnostic
from nexa_lsp.syntax.source import SourceFile


def semantic_diagnostics(source: SourceFile, includes: IncludeResolver | None = None) -> list[Diagnostic]:
    """Diagnostics that need names resolved across the file and its includes."""
    return []
