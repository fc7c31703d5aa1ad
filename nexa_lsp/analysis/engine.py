"""One entry for all diagnostics of a file, shared by the CLI and the server so
both always report exactly the same findings."""

from __future__ import annotations

from dataclasses import dataclass

from nexa_lsp.analysis.migration import migration_diagnostics
from nexa_lsp.analysis.semantic import semantic_diagnostics
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax.diagnostics import Diagnostic
from nexa_lsp.syntax.source import SourceFile


@dataclass(frozen=True, slots=True)
class CheckSettings:
    """Switches shared by `nexa-lsp check` and the server configuration."""

    migration_hints: bool = True


def check_source(
    source: SourceFile, includes: IncludeResolver | None = None, settings: CheckSettings = CheckSettings()
) -> list[Diagnostic]:
    """Syntax, semantic and migration diagnostics of ``source``, sorted by position."""
    diagnostics = list(source.diagnostics)
    diagnostics.extend(semantic_diagnostics(source, includes))
    diagnostics.extend(migration_diagnostics(source, settings.migration_hints))
    diagnostics.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    return diagnostics
