"""How an editor run ended, told to the user: an outcome is never silent.

* **Waits for approval**: ``window/showMessageRequest`` per pending call with
  ``Approve`` / ``Deny`` / ``Show``; the answer is acted on (``Show`` opens the transcript,
  then asks again). A call decided meanwhile (lens, action, another process) is left alone.
* **Failed** (also timed out, budget exhausted, stopped by a bug): the reason in words with
  its NXR code. Clients that prompt (``experimental.nexa.runPrompts``) get a message request
  with ``Show transcript``; the others a ``window/showMessage`` naming the transcript file,
  which is written for them.
* **Completed** or **cancelled**: a ``window/showMessage`` (Info).

The setting ``nexa.runs.notify`` chooses: ``all`` (default), ``failures`` (approvals and
failures only) or ``none``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from typing import TYPE_CHECKING, Any

from nexa_lsp.ide.runs import short_id
from nexa_lsp.runtime.run_state import Approval, RunState, RunStatus
from nexa_lsp.server import from_lsp
from nexa_lsp.server.runs import protocol
from nexa_lsp.server.runs.agents import source_path
from nexa_lsp.server.runs.arguments import Refused
from nexa_lsp.server.runs.redaction import scrub
from nexa_lsp.server.to_lsp import runs as to_lsp_runs

if TYPE_CHECKING:
    from nexa_lsp.server.runs.features import RunFeatures
    from nexa_lsp.server.runs.live import LiveRun

NOTIFY_LEVELS = ("all", "failures", "none")
APPROVE = "Approve"
DENY = "Deny"
SHOW = "Show"
SHOW_TRANSCRIPT = "Show transcript"
#: Characters of a tool call's arguments shown in an approval request.
ARGUMENTS_SHOWN = 200
#: Times one approval is asked again after ``Show``.
ASK_AGAIN = 3

_FAILED = (RunStatus.FAILED, RunStatus.TIMED_OUT, RunStatus.BUDGET_EXHAUSTED)


def failure_text(state: RunState) -> str:
    """``Nexa: Analyst run run_1a2b3c4d failed: NXR032 ...`` (the reason in words, with its code)."""
    text = f"Nexa: {state.agent} run {short_id(state.run_id)} {state.status.value.replace('_', ' ')}"
    if state.error is not None:
        text += f": {state.error.code} {state.error.message}"
    return text


def approval_text(state: RunState, approval: Approval, secrets: frozenset[str]) -> str:
    arguments = scrub(" ".join(approval.arguments.split()), secrets)
    if len(arguments) > ARGUMENTS_SHOWN:
        arguments = arguments[: ARGUMENTS_SHOWN - 1] + "…"
    return (
        f"Nexa: {state.agent} run {short_id(state.run_id)} asks to run {approval.tool}({arguments}) "
        f"[call {approval.call_id}]. Approve it?"
    )


class RunOutcomes:
    """Announces the end of each run this server drives (see the module docstring)."""

    def __init__(self, features: RunFeatures) -> None:
        self.features = features
        self.server = features.server
        self._tasks: set[asyncio.Task[None]] = set()

    def level(self, state: RunState) -> str:
        value = self.features.stores.settings(source_path(state)).runs_notify
        return value if value in NOTIFY_LEVELS else "all"

    def announce(self, live: LiveRun, final: RunState) -> None:
        """Tell the user how ``final`` stopped (called once per run stop, on the event loop)."""
        level = self.level(final)
        if level == "none":
            return
        if final.status is RunStatus.WAITING_APPROVAL:
            self._spawn(self._ask_approvals(final, live.secrets))
        elif final.status in _FAILED:
            self.failed(final, failure_text(final))
        elif level == "all":
            what = final.status.value.replace("_", " ")
            protocol.show_message(self.server, f"Nexa: {final.agent} run {short_id(final.run_id)} {what}", "info")

    def broke(self, live: LiveRun, reason: str) -> None:
        """A run stopped by a bug of the server (its store is left as it was)."""
        state = live.state
        if state is None or self.level(state) == "none":
            return
        self.failed(state, f"Nexa: {state.agent} run {short_id(state.run_id)} stopped unexpectedly: {reason}")

    def failed(self, state: RunState, text: str) -> None:
        if self.server.client.run_prompts:
            self._spawn(self._offer_transcript(state, text))
            return
        try:  # clients that cannot open a document: say where the transcript is
            store, stored = self.features.locate(state.run_id)
            path = self.features.transcripts.follow(store, stored, None)
        except (Refused, OSError) as exc:
            protocol.log(self.server, f"runs: no transcript for run {state.run_id}: {exc}", "warning")
        else:
            text += f" - transcript: {path}"
        protocol.show_message(self.server, text, "error")

    # --- asking ------------------------------------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _ask(self, text: str, level: str, actions: list[str]) -> str | None:
        try:
            answer = await self.server.window_show_message_request_async(
                to_lsp_runs.message_request(text, level, actions)
            )
        except Exception as exc:  # unsupported, or the connection is gone
            protocol.log(self.server, f"runs: window/showMessageRequest failed: {exc}", "warning")
            return None
        return from_lsp.chosen_action(answer)

    async def _offer_transcript(self, state: RunState, text: str) -> None:
        if await self._ask(text, "error", [SHOW_TRANSCRIPT]) == SHOW_TRANSCRIPT:
            await self._act(self.features.commands.show_run({"run_id": state.run_id}))

    async def _ask_approvals(self, state: RunState, secrets: frozenset[str]) -> None:
        for approval in state.pending_approvals:
            for _ in range(ASK_AGAIN + 1):
                answer = await self._ask(approval_text(state, approval, secrets), "warning", [APPROVE, DENY, SHOW])
                if answer == SHOW:
                    await self._act(self.features.commands.show_run({"run_id": state.run_id}))
                    continue
                if answer in (APPROVE, DENY) and self._still_pending(state.run_id, approval.call_id):
                    argument = {"run_id": state.run_id, "call_id": approval.call_id}
                    await self._act(self.features.commands.decide(argument, answer == APPROVE))
                break
            if not self._still_pending(state.run_id, approval.call_id):
                continue
            return  # dismissed: the lenses, actions and NX201 still offer the decision

    def _still_pending(self, run_id: str, call_id: str) -> bool:
        try:
            _store, stored = self.features.locate(run_id)
        except Refused:
            return False
        return stored.status is RunStatus.WAITING_APPROVAL and any(
            a.call_id == call_id for a in stored.pending_approvals
        )

    async def _act(self, command: Awaitable[object]) -> None:
        """Run a command chosen in a message; a refusal is shown like a refused command."""
        try:
            await command
        except Refused as exc:
            self.features.refuse(str(exc))
