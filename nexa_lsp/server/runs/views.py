"""Run lenses, run code actions and run-aware diagnostics of open documents.

They read an existing store only (never create one) and build agents from their
declarations without importing user code (``nexa_lsp.ide.runs``). The agents of a document
with their runs are cached until the text, the store, the settings or a run change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nexa_lsp.ide import run_commands, run_diagnostics
from nexa_lsp.ide import runs as ide
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.errors import NexaRuntimeError
from nexa_lsp.runtime.owner import current_owner
from nexa_lsp.runtime.run_state import RunState, RunStatus
from nexa_lsp.server.runs import protocol
from nexa_lsp.server.runs.agents import editor_tool_modules
from nexa_lsp.server.runs.stores import RunStores, store_stamp
from nexa_lsp.server.runs.transcripts import display_path, transcript_path

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.server.documents import DocumentState
    from nexa_lsp.server.runs.live import RunDriver
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import SourceFile

#: Newest runs of a file read for lenses, actions and diagnostics (unsettled runs always).
RECENT_RUNS = 50


@dataclass(frozen=True)
class _ViewKey:
    stamp: tuple[int, ...]
    generation: int
    enabled: bool
    provider: str
    folders: tuple[Path, ...]


@dataclass(frozen=True)
class _Live:
    """The runs this server drives now: their ids and latest states."""

    ids: frozenset[str]
    states: tuple[RunState, ...]


class RunViews:
    """The agents of open documents with their runs, as lenses, actions and diagnostics."""

    def __init__(self, server: NexaLanguageServer, stores: RunStores, driver: RunDriver) -> None:
        self.server = server
        self.stores = stores
        self.driver = driver
        self.generation = 0
        self._views: dict[tuple[str, bool], tuple[_ViewKey, SourceFile, list[ide.AgentView]]] = {}
        self._runs_cache: dict[tuple[Path, str], tuple[tuple[object, ...], dict[str, RunState]]] = {}

    def invalidate(self) -> None:
        """Runs or settings changed: every view is stale."""
        self.generation += 1
        self._views.clear()

    # --- reading runs ---------------------------------------------------------------------------

    def live_snapshot(self) -> _Live:
        """The runs this server drives now, read on the event loop (which changes them)."""
        live = list(self.driver.live.items())
        return _Live(frozenset(i for i, x in live if not x.done), tuple(x.state for _, x in live if x.state))

    def stored_runs(self, store: SQLiteCheckpointStore, source_path: Path, live: _Live | None = None) -> list[RunState]:
        """The file's newest runs and all its unsettled ones (read again only when the store changed)."""
        source = str(source_path.resolve())
        stamp = (store_stamp(store.path), self.generation)
        cached = self._runs_cache.get((store.path, source))
        if cached is not None and cached[0] == stamp:
            found = dict(cached[1])
        else:
            found = {s.run_id: s for s in store.list_states(source=source, limit=RECENT_RUNS)}
            for status in (RunStatus.RUNNING, RunStatus.WAITING_APPROVAL):
                found.update((s.run_id, s) for s in store.list_states(source=source, status=status))
            self._runs_cache[(store.path, source)] = (stamp, dict(found))
        for state in (live or self.live_snapshot()).states:
            if state.metadata.source == source:
                found[state.run_id] = state
        return list(found.values())

    def driven_elsewhere(
        self, store: SQLiteCheckpointStore, runs: Sequence[RunState], live: set[str]
    ) -> dict[str, str]:
        """Running runs (not driven here) whose owner process is alive: id -> that process."""
        found: dict[str, str] = {}
        for state in runs:
            if state.status is not RunStatus.RUNNING or state.run_id in live:
                continue
            if store.is_interrupted(state.run_id):
                continue
            owner = store.owner(state.run_id)
            if owner is not None and owner != current_owner():
                found[state.run_id] = owner.describe()
        return found

    def views(
        self,
        uri: str,
        path: Path | None,
        source: SourceFile,
        *,
        only_with_runs: bool = False,
        live_runs: _Live | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> list[ide.AgentView]:
        """The agents of a document with their runs (cached until the text, store or runs change);
        ``only_with_runs`` leaves out agents without runs (enough for diagnostics).

        Called in a worker thread (``code_lens``), it gets ``live_runs`` read on the loop and
        reports problems to ``warn`` instead of logging them."""
        settings = self.stores.settings(path)
        store_path = self.stores.store_path(path)
        key = _ViewKey(
            store_stamp(store_path),
            self.generation,
            settings.runs_enabled,
            settings.runs_provider,
            tuple(self.server.documents.folders),
        )
        cache_key = (uri, only_with_runs)
        cached = self._views.get(cache_key)
        if cached is not None and cached[0] == key and cached[1] is source:
            return cached[2]
        runs: list[RunState] = []
        elsewhere: dict[str, str] = {}
        live_runs = live_runs or self.live_snapshot()
        live = set(live_runs.ids)
        if settings.runs_enabled and path is not None:
            try:
                store = self.stores.store(store_path, create=False)
                if store is not None:
                    runs = self.stored_runs(store, path, live_runs)
                    elsewhere = self.driven_elsewhere(store, runs, live)
            except (NexaRuntimeError, OSError) as exc:  # a damaged store: say so once, show no runs
                problem = f"runs: cannot read {store_path}: {exc}"
                if warn is not None:
                    warn(problem)
                else:
                    protocol.log(self.server, problem, "warning")
                runs, elsewhere = [], {}
        views = ide.agent_views(
            source,
            path,
            runs,
            live=live,
            provider=settings.runs_provider or None,
            elsewhere=elsewhere,
            only_with_runs=only_with_runs,
            tool_modules=editor_tool_modules(self.server, path),
        )
        if not elsewhere:  # another process's run can end at any moment: not worth caching then
            self._views[cache_key] = (key, source, views)
        return views

    # --- what the editor shows ----------------------------------------------------------------

    def diagnostics_for(self, state: DocumentState, source: SourceFile | None = None) -> list[Diagnostic]:
        """Run-aware diagnostics (NX2xx) of a document; none when runs are disabled."""
        settings = self.stores.settings(state.path)
        if not settings.runs_enabled or state.path is None:
            return []
        source = source or self.server.documents.parsed(state)
        views = self.views(state.uri, state.path, source, only_with_runs=True)
        return run_diagnostics.run_diagnostics(views, enabled=settings.runs_enabled)

    async def code_lens(self, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        """The run lenses of a document. The views (store reads, agents built with their
        ``.nxs`` settings, transcript files) are computed in a worker thread (issue 12)."""
        uri = params.text_document.uri
        state = self.server.documents.get(uri)
        if state is None:
            return []
        source = self.server.documents.parsed(state)
        settings = self.stores.settings(state.path)
        if not settings.runs_enabled:
            return []
        live_runs = self.live_snapshot()
        problems: list[str] = []
        paths_shown = not self.server.client_supports("window.show_document.support")

        def compute() -> tuple[list[ide.AgentView], dict[str, str]]:
            views = self.views(uri, state.path, source, live_runs=live_runs, warn=problems.append)
            return views, self.transcripts_of(views) if paths_shown else {}

        views, transcripts = await asyncio.to_thread(compute)
        for problem in problems:
            protocol.log(self.server, problem, "warning")
        prompts = protocol.client_prompts_for_runs(self.server)
        found = run_commands.code_lenses(
            views, uri, enabled=settings.runs_enabled, prompts=prompts, transcripts=transcripts
        )
        return [protocol.code_lens(source.lines, lens) for lens in found]

    def transcripts_of(self, views: Sequence[ide.AgentView]) -> dict[str, str]:
        """Run id -> where its transcript file is (relative to its workspace folder when inside),
        for the runs shown that have one: clients that cannot open a document see the path."""
        found: dict[str, str] = {}
        for view in views:
            for run in view.runs:
                source = run.state.metadata.source
                path = Path(source) if source else None
                store = self.stores.store(self.stores.store_path(path), create=False)
                if store is None:
                    continue
                transcript = transcript_path(store, run.run_id)
                if transcript.is_file():
                    found[run.run_id] = display_path(transcript, self.stores.folder_of(path))
        return found

    def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        """Run actions (kind ``source.nexa.run``) for the agents under the range and the runs
        named by the request's run-aware diagnostics."""
        if not protocol.wants_kind(params.context.only, run_commands.RUN_ACTION_KIND):
            return []
        uri = params.text_document.uri
        state = self.server.documents.get(uri)
        if state is None:
            return []
        settings = self.stores.settings(state.path)
        if not settings.runs_enabled:
            return []
        source = self.server.documents.parsed(state)
        views = self.views(uri, state.path, source)
        start, end = protocol.action_range(source.lines, params)
        by_run: dict[str, list[lsp.Diagnostic]] = {}
        for diagnostic in params.context.diagnostics:
            run_id = protocol.diagnostic_run(diagnostic)
            if run_id is not None:
                by_run.setdefault(run_id, []).append(diagnostic)
        actions = []
        prompts = protocol.client_prompts_for_runs(self.server)
        actions_here = run_commands.code_actions(
            views, uri, start, end, enabled=True, diagnostic_runs=by_run, prompts=prompts
        )
        for action in actions_here:
            attached = [d for d in by_run.get(action.run_id or "", []) if protocol.diagnostic_code(d) in action.codes]
            actions.append(protocol.code_action(action, run_commands.RUN_ACTION_KIND, attached))
        return actions
