"""Work-done progress of an editor run: its status, the tool it runs, the end of the text
streaming from the model; cancelling the progress cancels the run."""

from __future__ import annotations

import contextlib
import uuid
from typing import TYPE_CHECKING

from nexa_lsp.ide.runs import short_id
from nexa_lsp.runtime.run_state import RunState, RunStatus
from nexa_lsp.server.runs import protocol
from nexa_lsp.server.runs.redaction import scrub
from nexa_lsp.server.to_lsp import runs as to_lsp_runs

if TYPE_CHECKING:
    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.server.runs.live import LiveRun

#: Characters of streamed text shown in a progress report.
REPORT_TEXT = 80


def end_message(state: RunState) -> str:
    """How a run stopped, in a few words (``run_1a2b3c4d failed: NXR032 ...``)."""
    if state.status is RunStatus.WAITING_APPROVAL:
        calls = ", ".join(f"{a.tool} ({a.call_id})" for a in state.pending_approvals)
        return f"{short_id(state.run_id)} waits for approval of {calls}"
    text = f"{short_id(state.run_id)} {state.status.value}"
    if state.error is not None and state.status is not RunStatus.COMPLETED:
        text += f": {state.error.code} {state.error.message}"
    return text


def report_message(live: LiveRun) -> str:
    """The run's status, activity and the end of its streamed text, for a progress report."""
    head = f"{short_id(live.run_id)} {live.status}" if live.run_id else "starting"
    streamed = scrub(" ".join("".join(live.streamed).split()), live.secrets)
    if len(streamed) > REPORT_TEXT:
        streamed = "…" + streamed[-REPORT_TEXT:]
    parts = [head]
    if live.activity:
        parts.append(live.activity)
    if streamed:
        parts.append(streamed)
    return " · ".join(parts)


class RunProgress:
    """``$/progress`` for the runs of one server."""

    def __init__(self, server: NexaLanguageServer) -> None:
        self.server = server

    async def begin(self, live: LiveRun) -> None:
        """Create a cancellable progress for ``live`` (when the client supports progress)."""
        server = self.server
        if not server.client_supports("window.work_done_progress"):
            return
        token = f"nexa-run-{uuid.uuid4().hex}"
        try:
            await server.work_done_progress.create_async(token)
        except Exception as exc:
            protocol.log(server, f"runs: no progress for run {live.run_id}: {exc}", "warning")
            return
        future = server.work_done_progress.tokens.get(token)
        if future is not None:
            future.add_done_callback(
                lambda f: live.cancel.cancel("cancelled from the editor") if f.cancelled() else None
            )
        live.progress = token
        state = live.state
        server.work_done_progress.begin(token, to_lsp_runs.progress_begin(f"Nexa: {live.agent}", report_message(live)))
        if live.done and state is not None:
            self.end(live, end_message(live.state or state))

    def report(self, live: LiveRun) -> None:
        if live.progress is None:
            return
        try:
            self.server.work_done_progress.report(live.progress, to_lsp_runs.progress_report(report_message(live)))
        except Exception:  # the connection is gone
            live.progress = None

    def end(self, live: LiveRun, message: str) -> None:
        token = live.progress
        if token is None:
            return
        live.progress = None
        with contextlib.suppress(Exception):  # the connection is gone
            self.server.work_done_progress.end(token, to_lsp_runs.progress_end(message))
        self.server.work_done_progress.tokens.pop(token, None)
