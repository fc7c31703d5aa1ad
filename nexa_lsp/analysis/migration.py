"""Migration lints 2.4 -> 3.0 (spec sections 3.3 and 4).

Owned by the migration work (issue 5); returns nothing until it lands.
"""

from __future__ import annotations

from nexa_lsp.syntax.diagnostics import Diagnostic
from nexa_lsp.syntax.source import SourceFile


def migration_diagnostics(source: SourceFile, hints_on_24: bool = True) -> list[Diagnostic]:
    """Lints for the 2.4 -> 3.0 move: hints on the 2.4 path, errors on 3.0."""
    return []
