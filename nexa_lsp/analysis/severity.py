"""Severities a user chooses: of the migration findings on the 2.4 path, and per code.

``nexa.diagnostics.migrationSeverity`` / ``nexa-lsp check --migration-severity`` set the
severity of the migration lints (NXM001-NXM006) on files on the 2.4 compatibility path
(default information: listed in a Problems panel, not alarming). Per-code overrides
(``{"NXM002": "warning"}``, ``--severity NXM002=warning``) set the severity of one
semantic or migration code. A 3.0 file's migration errors stay errors whatever is
chosen: the file does not run as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from nexa_lsp.analysis.migration import MIGRATION_CODES
from nexa_lsp.analysis.semantic import SEMANTIC_CODES
from nexa_lsp.syntax.diagnostics import Diagnostic, Severity
from nexa_lsp.syntax.version import VersionPath

#: The words a setting or an option may use, as LSP and VS Code spell them.
SEVERITY_NAMES: dict[str, Severity] = {
    "hint": Severity.HINT,
    "information": Severity.INFORMATION,
    "warning": Severity.WARNING,
    "error": Severity.ERROR,
}
#: Codes whose severity can be overridden (the analysis codes; syntax errors cannot).
OVERRIDABLE = frozenset(SEMANTIC_CODES) | frozenset(MIGRATION_CODES)


def severity_named(word: str) -> Severity:
    """The severity called ``word``; ValueError naming the accepted words otherwise."""
    found = SEVERITY_NAMES.get(word.strip().lower())
    if found is None:
        raise ValueError(f"unknown severity {word!r}: use one of {', '.join(SEVERITY_NAMES)}")
    return found


def parse_overrides(pairs: Iterable[tuple[object, object]]) -> tuple[dict[str, Severity], list[str]]:
    """``(code, severity word)`` pairs as overrides; also the problems of the pairs left out."""
    out: dict[str, Severity] = {}
    problems: list[str] = []
    for code, word in pairs:
        if not isinstance(code, str) or code.strip().upper() not in OVERRIDABLE:
            problems.append(f"unknown code {code!r} (severity overrides take NX1xx and NXMxxx codes)")
            continue
        if not isinstance(word, str):
            problems.append(f"severity of {code} should be a word ({', '.join(SEVERITY_NAMES)}), got {word!r}")
            continue
        try:
            out[code.strip().upper()] = severity_named(word)
        except ValueError as exc:
            problems.append(f"{code}: {exc}")
    return out, problems


def apply_overrides(
    diagnostics: list[Diagnostic], path: VersionPath, overrides: Mapping[str, Severity]
) -> list[Diagnostic]:
    """``diagnostics`` with the overridden codes at their chosen severity."""
    if not overrides:
        return diagnostics
    out = []
    for d in diagnostics:
        chosen = overrides.get(d.code)
        if chosen is None or chosen is d.severity or d.code not in OVERRIDABLE or _stays_error(d, path):
            out.append(d)
        else:
            out.append(Diagnostic(d.code, d.message, d.span, chosen, d.fixes, d.related, d.unnecessary, dict(d.data)))
    return out


def _stays_error(d: Diagnostic, path: VersionPath) -> bool:
    return path is VersionPath.NEXA_30 and d.severity is Severity.ERROR and d.code in MIGRATION_CODES
