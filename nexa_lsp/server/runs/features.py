"""The runs feature of one server: its parts, and what happens after a run changes.

After a run changes state the editor hears of it: ``nexa/runsChanged``, a lens refresh and
the run-aware diagnostics again (pushed, or ``workspace/diagnostic/refresh``). While a run
streams, its progress report and followed transcript are refreshed at most every
``REPORT_INTERVAL`` seconds.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.run_state import RunState
from nexa_lsp.server import sync
from nexa_lsp.server.app import RequestFailed
from nexa_lsp.server.runs import protocol
from nexa_lsp.server.runs.arguments import Refused
from nexa_lsp.server.runs.commands import RunCommands
from nexa_lsp.server.runs.details import RunDetailsFeed
from nexa_lsp.server.runs.live import LiveRun, RunDriver
from nexa_lsp.server.runs.outcomes import RunOutcomes
from nexa_lsp.server.runs.progress import RunProgress, end_message
from nexa_lsp.server.runs.redaction import scrub
from nexa_lsp.server.runs.stores import RunStores
from nexa_lsp.server.runs.transcripts import Transcripts
from nexa_lsp.server.runs.views import RunViews
from nexa_lsp.server.to_lsp import runs as to_lsp_runs

if TYPE_CHECKING:
    from nexa_lsp.server.app import NexaLanguageServer

RUNS_CHANGED = "nexa/runsChanged"
#: Seconds between two progress reports / transcript rewrites of one run.
REPORT_INTERVAL = 0.1


class RunFeatures:
    """Lenses, actions, diagnostics and commands of the runs feature, and the runs it drives."""

    def __init__(self, server: NexaLanguageServer) -> None:
        self.server = server
        self.stores = RunStores(server)
        self.driver = RunDriver(self)
        self.progress = RunProgress(server)
        self.transcripts = Transcripts()
        self.views = RunViews(server, self.stores, self.driver)
        self.commands = RunCommands(self)
        self.outcomes = RunOutcomes(self)
        self.details = RunDetailsFeed(self)
        self._tasks: set[asyncio.Task[None]] = set()
        atexit.register(self.driver.stop_all)

    # --- shared by the commands -------------------------------------------------------------------

    def locate(self, run_id: str) -> tuple[SQLiteCheckpointStore, RunState]:
        """The store holding ``run_id`` and the run as stored now: the store is the truth,
        since another process (``nexa-lsp agent``, another editor) may have moved it on."""
        return self.stores.locate(run_id)

    def enabled_or_refuse(self, path: Path | None) -> None:
        if not self.server.settings.runs_enabled or not self.stores.settings(path).runs_enabled:
            raise Refused(
                "runs are disabled in this workspace (setting nexa.runs.enabled is false; "
                "the VS Code extension turns it off in untrusted workspaces)"
            )

    def refuse(self, reason: str) -> Exception:
        """Show ``reason`` (``window/showMessage`` error) and build the LSP error answering the command."""
        protocol.show_message(self.server, f"Nexa: {reason}", "error")
        return RequestFailed(reason)

    def show_document(self, uri: str) -> bool:
        """Ask the client to open ``uri``; False when it cannot (no ``window/showDocument``)."""
        if not self.server.client_supports("window.show_document.support"):
            return False
        protocol.fire(self.server.window_show_document(to_lsp_runs.show_document(uri)))
        return True

    async def start(self, live: LiveRun, entry: Callable[..., RunState]) -> RunState:
        """Start ``live`` (see ``RunDriver.start``), then its progress."""
        first = await self.driver.start(live, entry)
        task = asyncio.ensure_future(self.progress.begin(live))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return first

    # --- the driver's observer ----------------------------------------------------------------

    def run_started(self, live: LiveRun, state: RunState) -> None:
        protocol.log(self.server, f"runs: {state.agent} run {state.run_id} started (session {state.session_id})")
        self.runs_changed(state)

    def run_resumed(self, state: RunState) -> None:
        self.runs_changed(state)

    def run_progressed(self, live: LiveRun) -> None:
        """Schedule a progress report / transcript rewrite / panel update, at most one per
        ``REPORT_INTERVAL``."""
        if (
            live.progress is None
            and not self.transcripts.is_followed(live.run_id)
            and not self.details.is_watched(live.run_id)
        ):
            return
        if live.report_pending:
            return
        loop = self.driver.loop
        if loop is None:
            return
        live.report_pending = True
        loop.call_later(max(0.0, live.last_report + REPORT_INTERVAL - time.monotonic()), self._report, live)

    def _report(self, live: LiveRun) -> None:
        live.report_pending = False
        live.last_report = time.monotonic()
        if live.done:
            return
        self.progress.report(live)
        if live.state is not None:
            self.transcripts.update(live.state, live)
        self.details.changed(live.run_id)

    def run_finished(self, live: LiveRun, final: RunState) -> None:
        message = end_message(final)
        protocol.log(self.server, f"runs: {final.agent} run {final.run_id} {message}")
        self.progress.end(live, message)
        self.transcripts.update(final, live)
        self.runs_changed(final)  # lenses: no longer live
        self.outcomes.announce(live, final)

    def run_broke(self, live: LiveRun, exc: BaseException) -> None:
        reason = scrub(str(exc), live.secrets)
        protocol.log(self.server, f"runs: run {live.run_id} stopped unexpectedly: {reason}", "error")
        self.progress.end(live, f"stopped unexpectedly: {type(exc).__name__}")
        self.outcomes.broke(live, reason)

    # --- after a change -----------------------------------------------------------------------------

    def settings_changed(self) -> None:
        """Settings decide the store, the provider and whether runs are on: lenses are stale
        (the server re-checks diagnostics itself)."""
        self.views.invalidate()
        if self.server.client_supports("workspace.code_lens.refresh_support"):
            with contextlib.suppress(Exception):  # not connected yet
                protocol.fire(self.server.workspace_code_lens_refresh(None))

    def runs_changed(self, state: RunState) -> None:
        """Tell the client: ``nexa/runsChanged``, lens refresh, run-aware diagnostics again,
        and a watching run panel (``nexa/runUpdated``)."""
        self.views.invalidate()
        self.details.changed(state.run_id)
        server = self.server
        try:
            server.protocol.notify(
                RUNS_CHANGED, {"run_id": state.run_id, "agent": state.agent, "status": state.status.value}
            )
        except Exception as exc:  # the connection is gone (shutdown)
            protocol.log(server, f"runs: cannot notify {RUNS_CHANGED}: {exc}", "warning")
            return
        if server.client_supports("workspace.code_lens.refresh_support"):
            protocol.fire(server.workspace_code_lens_refresh(None))
        self._refresh_diagnostics(state.metadata.source)

    def _refresh_diagnostics(self, source: str | None) -> None:
        server = self.server
        affected = [
            doc
            for doc in server.documents
            if source is None or (doc.path is not None and str(doc.path.resolve()) == source)
        ]
        for doc in affected:
            doc.checked = None  # the run-aware part of its diagnostics is stale
        if server.push_diagnostics:
            for doc in affected:
                sync.schedule(server, doc, 0)
        elif server.client_supports("workspace.diagnostics.refresh_support"):
            protocol.fire(server.workspace_diagnostic_refresh(None))

    def stop_all(self) -> None:
        """Cancel every run executing here (the server stops)."""
        self.driver.stop_all()
