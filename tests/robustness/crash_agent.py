"""The agent of the crash matrix, and the child process that runs it until it is killed.

``python -m tests.robustness.crash_agent STORE EFFECTS LOG POINT`` runs one task of the
``Ops`` agent with the store's ``save``. When the run reaches ``POINT`` the child writes
``EFFECTS.reached`` and waits to be killed (SIGKILL from the test). Every tool appends
one line to ``EFFECTS`` (its side effect) before it returns, so the test can count how
often each side effect really happened. ``LOG`` records, around each save, the digest
of the state text about to be saved (``I``) and, once ``save`` returned, again (``A``),
each line flushed to disk at once, so the test knows exactly what was acknowledged.

``random`` runs tasks one after another (``deploy v0``, ``v1`` ...) with small delays
until killed: the test kills it at a random moment.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.events import CancelToken
from nexa_lsp.runtime.providers.base import ProviderReply, ProviderRequest
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.run_state import RunState
from nexa_lsp.runtime.tools import Tool, tool

POINTS = (
    "before_provider",  # the first model call started, nothing answered yet
    "streaming",  # the model streamed part of its first answer
    "tool_started",  # deploy is running (its side effect already happened)
    "tool_returned",  # deploy returned; its completion is not saved yet
    "tool_recorded",  # deploy's completion is saved
    "save_insert",  # inside the SQLite statement that writes deploy's completion
    "save_commit",  # that statement ran, its transaction is not committed yet
    "second_tool_started",  # notify is running after deploy completed and was saved
    "final_save",  # the final answer is being saved (before COMMIT)
)

UNKNOWN_AFTER = {
    "tool_started": ("call_1",),
    "tool_returned": ("call_1",),
    "save_insert": ("call_1",),
    "save_commit": ("call_1",),
    "second_tool_started": ("call_2",),
}


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def script(version: str = "v2") -> dict[str, Any]:
    return {
        "replies": [
            {
                "text": "Deploying the new version now, then telling the on-call channel.",
                "tool_calls": [
                    {"id": "call_1", "name": "deploy", "arguments": {"version": version}},
                    {"id": "call_2", "name": "notify", "arguments": {"channel": "ops"}},
                ],
            },
            {"text": f"Deployed {version} and told ops."},
            {"text": f"{version} is live; nothing else to do."},
        ]
    }


class Effects:
    """Side effects are lines appended to a file (flushed at once, like a real external action)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, line: str) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def lines(self) -> list[str]:
        return self.path.read_text(encoding="utf-8").splitlines() if self.path.exists() else []


def build_agent(
    effects: Effects,
    version: str = "v2",
    on_tool: Callable[[str], None] | None = None,
    provider: Any = None,
) -> NexaAgent:
    def deploy(version: str) -> str:
        effects.record(f"deploy {version}")
        if on_tool is not None:
            on_tool("deploy")
        return f"deployed {version}"

    def notify(channel: str) -> str:
        effects.record(f"notify {channel} {version}")
        if on_tool is not None:
            on_tool("notify")
        return f"told {channel}"

    tools: list[Tool] = [
        tool(deploy, parameters={"type": "object", "properties": {"version": {"type": "string"}}}),
        tool(notify, parameters={"type": "object", "properties": {"channel": {"type": "string"}}}),
    ]
    return NexaAgent(
        "Ops",
        prompt="Deploy carefully and report.",
        tools=tools,
        provider=provider if provider is not None else ScriptedProvider(script(version)),
    )


# --- the child process ------------------------------------------------------------------------


def pause(marker: Path, point: str) -> None:
    """Tell the test this point is reached, then wait to be killed."""
    marker.write_text(point, encoding="utf-8")
    time.sleep(120)
    raise SystemExit(f"not killed at {point}")


class HookedProvider:
    """The scripted provider, pausing before its first answer or in the middle of streaming it."""

    def __init__(self, inner: ScriptedProvider, point: str, marker: Path) -> None:
        self.name = inner.name
        self.inner = inner
        self.point = point
        self.marker = marker

    def complete(self, request: ProviderRequest, on_text: Callable[[str], None], cancel: CancelToken) -> ProviderReply:
        first_turn = not any(m.role == "assistant" for m in request.history)
        if first_turn and self.point == "before_provider":
            pause(self.marker, self.point)
        if first_turn and self.point == "streaming":
            sent: list[str] = []

            def counting(text: str) -> None:
                on_text(text)
                sent.append(text)

            reply = self.inner.complete(request, counting, cancel)
            time.sleep(0.2)  # let the run's thread take the deltas
            if len(sent) >= 2:
                pause(self.marker, self.point)
            return reply
        return self.inner.complete(request, on_text, cancel)


def completed(state: RunState, call_id: str) -> bool:
    entry = state.journal_entry(call_id)
    return entry is not None and entry.status == "completed"


class LoggedSave:
    """``store.save`` with the intent/acknowledgement log and the pauses around or inside it."""

    def __init__(self, store: SQLiteCheckpointStore, log: Path, point: str, marker: Path) -> None:
        self.store = store
        self.log = open(log, "a", encoding="utf-8")  # noqa: SIM115 (kept open for the process)
        self.point = point
        self.marker = marker
        self.paused_once = False

    def write(self, line: str) -> None:
        self.log.write(line + "\n")
        self.log.flush()
        os.fsync(self.log.fileno())

    def __call__(self, state: RunState) -> None:
        text = state.to_json()
        first_completion = completed(state, "call_1") and not self.paused_once
        if self.point == "tool_returned" and first_completion:
            pause(self.marker, self.point)
        connection = self.store._connection()
        if self.point == "save_insert" and first_completion:
            statements: list[str] = []
            connection.set_trace_callback(statements.append)

            def inside_statement() -> int:
                if statements and statements[-1].startswith(("INSERT", "UPDATE")):  # the write
                    pause(self.marker, f"{self.point} inside {statements[-1].split()[0]}")
                return 0

            connection.set_progress_handler(inside_statement, 20)
        if (self.point == "save_commit" and first_completion) or (self.point == "final_save" and state.settled):

            def before_commit(statement: str) -> None:
                if statement == "COMMIT":
                    pause(self.marker, self.point)

            connection.set_trace_callback(before_commit)
        self.write(f"I {state.run_id} {digest(text)}")
        self.store.save(state)
        self.write(f"A {state.run_id} {digest(text)}")
        if self.point == "tool_recorded" and first_completion:
            pause(self.marker, self.point)


def run_point(store_path: Path, effects_path: Path, log: Path, point: str) -> None:
    marker = Path(f"{effects_path}.reached")
    effects = Effects(effects_path)
    provider = HookedProvider(ScriptedProvider(script()), point, marker)

    def on_tool(name: str) -> None:
        if (point, name) in (("tool_started", "deploy"), ("second_tool_started", "notify")):
            pause(marker, point)

    agent = build_agent(effects, on_tool=on_tool, provider=provider)
    store = SQLiteCheckpointStore(store_path)
    state = agent.execute("Deploy v2 and tell ops", save=LoggedSave(store, log, point, marker))
    marker.write_text(f"finished {state.status.value}", encoding="utf-8")


def run_random(store_path: Path, effects_path: Path, log: Path, first: int) -> None:
    """Tasks one after another, each with a short model delay, until the process is killed."""
    store = SQLiteCheckpointStore(store_path)
    saver = LoggedSave(store, log, "none", Path(f"{effects_path}.reached"))
    index = first
    while True:
        version = f"v{index}"
        replies = script(version)
        for reply in replies["replies"]:
            reply["delay"] = 0.01
            reply["chunk_delay"] = 0.002
        agent = build_agent(Effects(effects_path), version, provider=ScriptedProvider(replies))
        agent.execute(f"Deploy {version} and tell ops", save=saver)
        index += 1


def main(argv: list[str]) -> None:
    store_path, effects_path, log, point = Path(argv[0]), Path(argv[1]), Path(argv[2]), argv[3]
    if point.startswith("random"):
        run_random(store_path, effects_path, log, int(point.partition(":")[2] or 0))
    else:
        run_point(store_path, effects_path, log, point)


if __name__ == "__main__":
    sqlite3.enable_callback_tracebacks(True)
    main(sys.argv[1:])
