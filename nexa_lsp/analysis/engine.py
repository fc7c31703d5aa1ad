"""One entry for all diagnostics of a file, shared by the CLI and the server so
both always report exactly the same findings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from nexa_lsp.analysis.migration import migration_diagnostics
from nexa_lsp.analysis.semantic import semantic_diagnostics
from nexa_lsp.analysis.severity import apply_overrides
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax.diagnostics import Diagnostic, Severity
from nexa_lsp.syntax.source import SourceFile


@dataclass(frozen=True, slots=True)
class CheckSettings:
    """Switches shared by `nexa-lsp check` and the server configuration."""

    migration_hints: bool = True
    #: Severity of the migration lints on 2.4-path files (see :mod:`nexa_lsp.analysis.severity`).
    migration_severity: Severity = Severity.INFORMATION
    #: Chosen severity per code (semantic and migration codes).
    severity_overrides: Mapping[str, Severity] = field(default_factory=dict)


def check_source(
    source: SourceFile, includes: IncludeResolver | None = None, settings: CheckSettings = CheckSettings()
) -> list[Diagnostic]:
    """Syntax, semantic and migration diagnostics of ``source``, sorted by position."""
    diagnostics = list(source.diagnostics)
    diagnostics.extend(semantic_diagnostics(source, includes))
    diagnostics.extend(migration_diagnostics(source, settings.migration_hints, settings.migration_severity, includes))
    diagnostics = apply_overrides(diagnostics, source.path, settings.severity_overrides)
    diagnostics.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    return diagnostics
