"""Helpers shared by the runtime tests (plain module, imported by name)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))

from nexa_lsp.runtime.events import RunEvent  # noqa: E402
from nexa_lsp.runtime.providers.scripted import ScriptedProvider  # noqa: E402
from nexa_lsp.runtime.tools import Tool, tool  # noqa: E402


class Counter:
    """A tool body with a side effect: counts how often it really ran."""

    def __init__(self, result: str | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.result = result

    def __call__(self, **arguments: Any) -> str:
        self.calls.append(arguments)
        return self.result if self.result is not None else f"done #{len(self.calls)}"


def counting_tool(
    name: str = "send_mail", approval_required: bool = False, result: str | None = None
) -> tuple[Tool, Counter]:
    counter = Counter(result)
    built: Tool = tool(
        counter,
        name=name,
        description=f"{name} (counted)",
        parameters={"type": "object", "properties": {"to": {"type": "string"}}},
        approval_required=approval_required,
    )
    return built, counter


def scripted(*replies: dict[str, Any], **extra: Any) -> ScriptedProvider:
    return ScriptedProvider({"replies": list(replies), **extra})


def call(name: str, call_id: str | None = None, **arguments: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "arguments": arguments}
    if call_id:
        entry["id"] = call_id
    return entry


class EventLog:
    """Collects events and the thread each arrived on."""

    def __init__(self) -> None:
        self.events: list[RunEvent] = []
        self.threads: set[int] = set()

    def __call__(self, event: RunEvent) -> None:
        import threading

        self.events.append(event)
        self.threads.add(threading.get_ident())

    def kinds(self) -> list[str]:
        return [type(e).__name__ for e in self.events]


def subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(PROJECT_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def write_script(path: Path, *replies: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"replies": list(replies)}, ensure_ascii=False), encoding="utf-8")
    return path
