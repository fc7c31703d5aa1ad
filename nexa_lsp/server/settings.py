"""Server settings (section ``nexa``): defaults, and reading the one shape clients send.

The accepted shape is the content of the ``nexa`` section, nested, exactly as VS Code
answers ``workspace/configuration`` for section ``nexa``::

    {"diagnostics": {"migrationHints": true, "debounceMs": 150}, "runs": {"enabled": true}}

It arrives the same way from every source (``workspace/configuration`` answers and
``initializationOptions``; see docs/configuration.md). Keys the server does not know
are ignored (the section also holds the editor extension's own settings); a value of
the wrong type keeps the previous value and is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

SECTION = "nexa"

#: setting path below ``nexa`` -> (field name, type)
_SETTINGS: dict[tuple[str, ...], tuple[str, type]] = {
    ("runs", "enabled"): ("runs_enabled", bool),
    ("runs", "store"): ("runs_store", str),
    ("runs", "provider"): ("runs_provider", str),
    ("runs", "notify"): ("runs_notify", str),
    ("diagnostics", "migrationHints"): ("migration_hints", bool),
    ("diagnostics", "debounceMs"): ("debounce_ms", int),
    ("diagnostics", "migrationSeverity"): ("migration_severity", str),
}
_OVERRIDES = ("diagnostics", "severityOverrides")
_TOOL_MODULES = ("runs", "toolModules")
_MISSING = object()
#: the words of ``diagnostics.migrationSeverity`` (as analysis.severity.SEVERITY_NAMES spells them)
_SEVERITY_WORDS = ("hint", "information", "warning", "error")


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Every setting, with a default that works without any configuration."""

    runs_enabled: bool = True
    runs_store: str = ".nexa/runs.sqlite3"
    runs_provider: str = ""
    runs_notify: str = "all"  # all | failures | none: which run outcomes are shown as messages
    migration_hints: bool = True
    debounce_ms: int = 150
    migration_severity: str = "information"  # one of analysis.severity.SEVERITY_NAMES
    severity_overrides: tuple[tuple[str, str], ...] = ()  # (code, severity word), sorted
    runs_tool_modules: tuple[str, ...] = ()  # Python files of tool functions, relative to the folder

    def updated(self, section: object) -> tuple[ServerSettings, list[str]]:
        """These settings with the values of ``section`` (the ``nexa`` section's content)
        applied; also the problems found."""
        if not isinstance(section, Mapping):
            return self, []
        values: dict[str, Any] = {}
        problems: list[str] = []
        for path, (name, kind) in _SETTINGS.items():
            value = _lookup(section, path)
            if value is _MISSING:
                continue
            dotted = ".".join((SECTION, *path))
            if kind is int and isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                problems.append(
                    f"setting {dotted} should be a {kind.__name__}, got {value!r}; keeping {getattr(self, name)!r}"
                )
                continue
            if name == "debounce_ms" and isinstance(value, int) and not 0 <= value <= 10_000:
                problems.append(f"setting {dotted} should be between 0 and 10000, got {value}")
                continue
            if name == "migration_severity" and value not in _SEVERITY_WORDS:
                problems.append(f"setting {dotted} should be one of {', '.join(_SEVERITY_WORDS)}, got {value!r}")
                continue
            values[name] = value
        overrides = _lookup(section, _OVERRIDES)
        if overrides is not _MISSING:
            dotted = ".".join((SECTION, *_OVERRIDES))
            if not isinstance(overrides, Mapping):
                problems.append(f"setting {dotted} should be an object of code -> severity, got {overrides!r}")
            else:
                # lazy: the analysis layer is loaded after initialize, not for it
                from nexa_lsp.analysis.severity import parse_overrides

                chosen, bad = parse_overrides(overrides.items())
                problems.extend(f"setting {dotted}: {p}; ignored" for p in bad)
                values["severity_overrides"] = tuple(
                    sorted((code, level.name.lower()) for code, level in chosen.items())
                )
        modules = _lookup(section, _TOOL_MODULES)
        if modules is not _MISSING:
            found = _tool_modules(modules)
            if found is None:
                dotted = ".".join((SECTION, *_TOOL_MODULES))
                problems.append(f"setting {dotted} should be a list of paths, got {modules!r}; ignored")
            else:
                values["runs_tool_modules"] = found
        return replace(self, **values), problems


def _tool_modules(value: object) -> tuple[str, ...] | None:
    """``nexa.runs.toolModules``: a list of paths (a string of comma-separated paths is
    accepted too); None when it is neither."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(v.strip() for v in value if v.strip())


def _lookup(section: Mapping[Any, Any], path: tuple[str, ...]) -> object:
    value: object = section
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return _MISSING
        value = value[key]
    return value


def settings_for_uri(uri: str | None, base: ServerSettings, per_folder: Mapping[str, ServerSettings]) -> ServerSettings:
    """The settings of the innermost workspace folder (uri) holding ``uri``, else ``base``."""
    best = ""
    if uri is not None:
        for folder in per_folder:
            if uri.startswith(folder.rstrip("/") + "/") and len(folder) > len(best):
                best = folder
    return per_folder[best] if best else base
