"""Server settings (section ``nexa``): defaults, and reading what clients send.

Clients send settings in several shapes: ``initializationOptions`` may hold the
``nexa`` section or its content, ``workspace/configuration`` answers with the
section's content, keys may be nested (``{"runs": {"enabled": true}}``) or
dotted (``{"runs.enabled": true}``). Every shape is accepted; a value of the
wrong type keeps the default and is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

SECTION = "nexa"

#: dotted setting name (below ``nexa.``) -> (field name, type, default)
_SETTINGS: dict[str, tuple[str, type, object]] = {
    "runs.enabled": ("runs_enabled", bool, True),
    "runs.store": ("runs_store", str, ".nexa/runs.sqlite3"),
    "runs.provider": ("runs_provider", str, ""),
    "diagnostics.migrationHints": ("migration_hints", bool, True),
    "diagnostics.debounceMs": ("debounce_ms", int, 150),
    "diagnostics.migrationSeverity": ("migration_severity", str, "information"),
    "diagnostics.severityOverrides": ("severity_overrides", dict, {}),
}
_OVERRIDES = "diagnostics.severityOverrides."


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Every setting, with a default that works without any configuration."""

    runs_enabled: bool = True
    runs_store: str = ".nexa/runs.sqlite3"
    runs_provider: str = ""
    migration_hints: bool = True
    debounce_ms: int = 150
    migration_severity: str = "information"  # one of analysis.severity.SEVERITY_NAMES
    severity_overrides: tuple[tuple[str, str], ...] = ()  # (code, severity word), sorted

    def updated(self, data: object) -> tuple[ServerSettings, list[str]]:
        """These settings with the values of ``data`` applied; also the problems found."""
        values: dict[str, Any] = {}
        problems: list[str] = []
        flat = _flatten(_section(data))
        overrides = [(k.removeprefix(_OVERRIDES), v) for k, v in flat.items() if k.startswith(_OVERRIDES)]
        if overrides or "diagnostics.migrationSeverity" in flat:
            # lazy: the analysis layer is loaded after initialize, not for it
            from nexa_lsp.analysis.severity import SEVERITY_NAMES, parse_overrides
        if overrides:
            chosen, bad = parse_overrides(overrides)
            problems.extend(f"setting nexa.{_OVERRIDES[:-1]}: {p}; ignored" for p in bad)
            values["severity_overrides"] = tuple(sorted((code, level.name.lower()) for code, level in chosen.items()))
        for key, value in flat.items():
            spec = _SETTINGS.get(key)
            if spec is None:
                continue
            name, kind, _default = spec
            if kind is int and isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                problems.append(
                    f"setting nexa.{key} should be a {kind.__name__}, got {value!r}; keeping {getattr(self, name)!r}"
                )
                continue
            if name == "debounce_ms" and isinstance(value, int) and not 0 <= value <= 10_000:
                problems.append(f"setting nexa.{key} should be between 0 and 10000, got {value}")
                continue
            if name == "migration_severity" and value not in SEVERITY_NAMES:
                problems.append(f"setting nexa.{key} should be one of {', '.join(SEVERITY_NAMES)}, got {value!r}")
                continue
            values[name] = value
        return replace(self, **values), problems

    def as_dict(self) -> dict[str, object]:
        by_field = {spec[0]: key for key, spec in _SETTINGS.items()}
        out = {f"{SECTION}.{by_field[f.name]}": getattr(self, f.name) for f in fields(self)}
        out[f"{SECTION}.{_OVERRIDES[:-1]}"] = dict(self.severity_overrides)
        return out


def _section(data: object) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        return {}
    inner = data.get(SECTION)
    if isinstance(inner, Mapping):
        return inner
    return {k.removeprefix(SECTION + "."): v for k, v in data.items() if isinstance(k, str)}


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            continue
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out
