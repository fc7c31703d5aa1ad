"""Runs inside the editor: code lenses, run code actions, run-aware diagnostics and the
``nexa.*`` run commands of docs/commands.md, with runs executing in the background.

* A run is driven on its own thread by the runtime (``NexaAgent.execute`` /
  ``continue_run``); the event loop only receives its saves and events, so hover,
  completion and every other request keep being answered while a run streams.
* Every step is saved through the runtime's ``save`` into the workspace's store
  (``nexa.runs.store``, default ``.nexa/runs.sqlite3`` in the workspace folder).
* Work-done progress reports the run's status, streamed text and tool activity;
  cancelling the progress cancels the run. ``nexa.showRun`` writes a Markdown transcript
  under ``.nexa/transcripts/`` (next to the store), opens it with ``window/showDocument``
  and rewrites it while the run goes on.
* After a run changes state: ``nexa/runsChanged``, ``workspace/codeLens/refresh`` and the
  run-aware diagnostics (pushed again, or ``workspace/diagnostic/refresh``).
* A refused command answers with an LSP error whose message is the runtime's reason and
  shows it with ``window/showMessage``; nothing is saved or changed.
* Nothing runs unless a command is invoked: lenses, actions and diagnostics only read an
  existing store (never create one) and build agents without importing user code.
* Provider keys come from the environment or from the client setting
  ``nexa.runs.providerSettings``; they go to the provider only (never to the store,
  transcripts, logs, progress or diagnostics).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import getpass
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types as lsp

from nexa_lsp.analysis.run_codes import RUN_CODES
from nexa_lsp.ide import runs as ide
from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.continuation import resume_blockers
from nexa_lsp.runtime.control import approve, cancel_run, deny, recover_tool_call
from nexa_lsp.runtime.errors import ApprovalPendingError, NexaRuntimeError
from nexa_lsp.runtime.events import (
    ApprovalNeeded,
    CancelToken,
    RunEvent,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from nexa_lsp.runtime.owner import current_owner
from nexa_lsp.runtime.providers import provider_from_settings
from nexa_lsp.runtime.providers.base import Provider
from nexa_lsp.runtime.run_state import RunConfig, RunState, RunStatus
from nexa_lsp.runtime.settings import Settings
from nexa_lsp.runtime.summary import RunSummary
from nexa_lsp.runtime.transcript import render_transcript
from nexa_lsp.server.documents import DocumentState, normal_path, path_of_uri, uri_of_path

if TYPE_CHECKING:
    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.server.settings import ServerSettings
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import SourceFile

RUNS_CHANGED = "nexa/runsChanged"
#: Newest runs of a file read for lenses, actions and diagnostics (unsettled runs always).
RECENT_RUNS = 50
#: Seconds between two progress reports / transcript rewrites of one run.
REPORT_INTERVAL = 0.1
#: Seconds ``nexa.cancel`` waits for a live run to stop.
CANCEL_WAIT = 10.0
#: Characters of streamed text shown in a progress report.
REPORT_TEXT = 80
#: Secrets shorter than this are not searched for (they would match ordinary text).
MIN_SECRET = 6
REDACTED = "[redacted]"


class Refused(Exception):
    """A command the runtime (or the editor's rules) refuses; ``str`` is the reason."""


# --- live runs -------------------------------------------------------------------------------


@dataclass(eq=False)
class LiveRun:
    """A run this server is driving on a background thread."""

    agent: str
    store: SQLiteCheckpointStore
    transcripts: Path
    cancel: CancelToken = field(default_factory=CancelToken)
    secrets: frozenset[str] = frozenset()
    run_id: str | None = None
    state: RunState | None = None
    streamed: list[str] = field(default_factory=list)
    activity: str = ""
    progress: str | None = None  # work-done progress token, once begun
    started: asyncio.Future[RunState] | None = None
    finished: asyncio.Future[RunState] | None = None
    thread: threading.Thread | None = None
    report_pending: bool = False
    last_report: float = 0.0

    @property
    def status(self) -> str:
        return "running" if self.state is None else self.state.status.value


@dataclass(frozen=True)
class ProviderChoice:
    """The ``provider=`` argument of a run and the secrets (keys) it must never write."""

    argument: str | Provider | None
    secrets: frozenset[str]


@dataclass(frozen=True)
class _ViewKey:
    stamp: tuple[int, ...]
    generation: int
    enabled: bool
    provider: str
    folders: tuple[Path, ...]


class RunFeatures:
    """The runs feature of one server (see the module docstring)."""

    def __init__(self, server: NexaLanguageServer) -> None:
        self.server = server
        self.live: dict[str, LiveRun] = {}  # by run id
        self._starting: set[LiveRun] = set()
        self._busy: set[str] = set()  # run ids a command is about to drive
        self._stores: dict[Path, SQLiteCheckpointStore] = {}
        self._store_lock = threading.Lock()
        self._followed: dict[str, Path] = {}  # run id -> transcript kept current
        self._generation = 0
        self._views: dict[tuple[str, bool], tuple[_ViewKey, SourceFile, list[ide.AgentView]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._runs_cache: dict[tuple[Path, str], tuple[tuple[object, ...], dict[str, RunState]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        atexit.register(self.stop_all)

    # --- places ---------------------------------------------------------------------------------

    def _folder_of(self, path: Path | None) -> Path:
        """The workspace folder holding ``path`` (longest match), else its directory."""
        folders = self.server.documents.folders
        if path is not None:
            best: Path | None = None
            for folder in folders:
                if (path == folder or folder in path.parents) and (best is None or len(str(folder)) > len(str(best))):
                    best = folder
            if best is not None:
                return best
            return path.parent
        if folders:
            return folders[0]
        return normal_path(os.getcwd())

    def _settings(self, path: Path | None) -> ServerSettings:
        folder = self._folder_of(path)
        return self.server.settings_for(uri_of_path(folder / "_"))

    def _store_path(self, path: Path | None) -> Path:
        folder = self._folder_of(path)
        store = Path(self._settings(path).runs_store or ".nexa/runs.sqlite3").expanduser()
        return store if store.is_absolute() else folder / store

    def _store(self, store_path: Path, create: bool) -> SQLiteCheckpointStore | None:
        """The store at ``store_path``; an absent file is created only when ``create``."""
        with self._store_lock:
            store = self._stores.get(store_path)
            if store is None:
                if not create and not store_path.is_file():
                    return None
                store = SQLiteCheckpointStore(store_path)
                self._stores[store_path] = store
            return store

    def _known_store_paths(self) -> list[Path]:
        paths = [self._store_path(folder / "_") for folder in self.server.documents.folders]
        with self._store_lock:
            paths += [p for p in self._stores if p not in paths]
        return paths

    def _locate(self, run_id: str) -> tuple[SQLiteCheckpointStore, RunState]:
        """The store holding ``run_id`` and the run (the live state when it is running here)."""
        live = self.live.get(run_id)
        if live is not None and live.state is not None:
            return live.store, live.state
        for store_path in self._known_store_paths():
            store = self._store(store_path, create=False)
            if store is None:
                continue
            state = store.get(run_id)
            if state is not None:
                return store, state
        places = ", ".join(str(p) for p in self._known_store_paths()) or "no store"
        raise Refused(f"NXR021: no run {run_id!r} in {places}")

    # --- documents and agents -----------------------------------------------------------------

    def _document_source(self, uri: str) -> tuple[Path | None, SourceFile]:
        """The document's text as the editor has it (open), else as saved on disk."""
        state = self.server.documents.get(uri)
        if state is not None:
            return state.path, self.server.documents.parsed(state)
        path = path_of_uri(uri)
        source = self.server.documents.read(path) if path is not None else None
        if source is None:
            raise Refused(f"NXR042: cannot read {uri}: it is neither open in the editor nor a readable file")
        return path, source

    def _agent(self, uri: str, name: str, path: Path | None = None) -> tuple[Path | None, NexaAgent]:
        if path is not None and (source_file := self.server.documents.read(path)) is not None:
            source: SourceFile = source_file  # open document by path, else the file on disk
        else:
            path, source = self._document_source(uri)
        declared = ide.agent_declarations(source)
        decl = next((d for d in declared if d.name == name), None)
        if decl is None:
            available = ", ".join(d.name for d in declared) or "none"
            raise Refused(f"NXR042: {path or uri} declares no agent {name!r} (agents: {available})")
        agent, problem = ide.build_agent(source, decl, path)
        if agent is None:
            raise Refused(problem or f"NXR042: agent {name} cannot be built")
        return path, agent

    def _agent_of_run(self, state: RunState) -> tuple[Path | None, NexaAgent]:
        source = state.metadata.source
        if not source:
            raise Refused(
                f"run {state.run_id} was not started from a .nx file, so the editor cannot rebuild its agent; "
                "use the Python API or `nexa-lsp agent --resume/--continue ... --file FILE`"
            )
        path = normal_path(source)
        return self._agent(uri_of_path(path), state.agent, path)

    # --- views (lenses, actions, diagnostics) --------------------------------------------------

    def _stamp(self, store_path: Path) -> tuple[int, ...]:
        stamp: list[int] = []
        for suffix in ("", "-wal"):
            try:
                st = os.stat(str(store_path) + suffix)
                stamp += [st.st_mtime_ns, st.st_size]
            except OSError:
                stamp += [0, 0]
        return tuple(stamp)

    def _stored_runs(self, store: SQLiteCheckpointStore, source_path: Path) -> list[RunState]:
        """The file's newest runs and all its unsettled ones (read again only when the store changed)."""
        source = str(source_path.resolve())
        stamp = (self._stamp(store.path), self._generation)
        cached = self._runs_cache.get((store.path, source))
        if cached is not None and cached[0] == stamp:
            found = dict(cached[1])
        else:
            found = {s.run_id: s for s in store.list_states(source=source, limit=RECENT_RUNS)}
            for status in (RunStatus.RUNNING, RunStatus.WAITING_APPROVAL):
                found.update((s.run_id, s) for s in store.list_states(source=source, status=status))
            self._runs_cache[(store.path, source)] = (stamp, dict(found))
        for live in self.live.values():
            if live.state is not None and live.state.metadata.source == source:
                found[live.state.run_id] = live.state
        return list(found.values())

    def views(
        self, uri: str, path: Path | None, source: SourceFile, *, only_with_runs: bool = False
    ) -> list[ide.AgentView]:
        """The agents of a document with their runs (cached until the text, store or runs change);
        ``only_with_runs`` leaves out agents without runs (enough for diagnostics)."""
        settings = self._settings(path)
        store_path = self._store_path(path)
        key = _ViewKey(
            self._stamp(store_path),
            self._generation,
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
        live = self._live_ids()
        if settings.runs_enabled and path is not None:
            try:
                store = self._store(store_path, create=False)
                if store is not None:
                    runs = self._stored_runs(store, path)
                    elsewhere = self._driven_elsewhere(store, runs, live)
            except (NexaRuntimeError, OSError) as exc:  # a damaged store: say so once, show no runs
                self.server.log(f"runs: cannot read {store_path}: {exc}", lsp.MessageType.Warning)
                runs, elsewhere = [], {}
        views = ide.agent_views(
            source,
            path,
            runs,
            live=live,
            provider=settings.runs_provider or None,
            elsewhere=elsewhere,
            only_with_runs=only_with_runs,
        )
        if not elsewhere:  # another process's run can end at any moment: not worth caching then
            self._views[cache_key] = (key, source, views)
        return views

    def _driven_elsewhere(
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

    def _live_ids(self) -> set[str]:
        return {run_id for run_id, live in self.live.items() if live.finished is None or not live.finished.done()}

    def diagnostics_for(self, state: DocumentState, source: SourceFile | None = None) -> list[Diagnostic]:
        """Run-aware diagnostics (NX2xx) of a document; none when runs are disabled."""
        settings = self._settings(state.path)
        if not settings.runs_enabled or state.path is None:
            return []
        source = source or self.server.documents.parsed(state)
        views = self.views(state.uri, state.path, source, only_with_runs=True)
        return ide.run_diagnostics(views, enabled=settings.runs_enabled)

    def code_lens(self, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        from nexa_lsp.server.convert import to_range

        uri = params.text_document.uri
        state = self.server.documents.get(uri)
        if state is None:
            return []
        source = self.server.documents.parsed(state)
        settings = self._settings(state.path)
        if not settings.runs_enabled:
            return []
        views = self.views(uri, state.path, source)
        lenses = []
        for lens in ide.code_lenses(views, uri, enabled=settings.runs_enabled):
            rng = to_range(source.lines, lens.span.start, lens.span.end)
            command = lens.command
            lenses.append(
                lsp.CodeLens(
                    range=rng,
                    command=lsp.Command(title=command.title, command=command.command, arguments=command.arguments),
                )
            )
        return lenses

    def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        """Run actions (kind ``source.nexa.run``) for the agents under the range and the runs
        named by the request's run-aware diagnostics."""
        from nexa_lsp.server.convert import offsets

        only = params.context.only
        if only is not None and not any(
            str(kind) in ("", ide.RUN_ACTION_KIND) or ide.RUN_ACTION_KIND.startswith(str(kind) + ".") for kind in only
        ):
            return []
        uri = params.text_document.uri
        state = self.server.documents.get(uri)
        if state is None:
            return []
        settings = self._settings(state.path)
        if not settings.runs_enabled:
            return []
        source = self.server.documents.parsed(state)
        views = self.views(uri, state.path, source)
        start, end = offsets(source.lines, params.range)
        by_run: dict[str, list[lsp.Diagnostic]] = {}
        for diagnostic in params.context.diagnostics:
            run_id = _diagnostic_run(diagnostic)
            if run_id is not None:
                by_run.setdefault(run_id, []).append(diagnostic)
        actions = []
        for action in ide.code_actions(views, uri, start, end, enabled=True, diagnostic_runs=by_run):
            command = action.command
            attached = [d for d in by_run.get(action.run_id or "", []) if d.code in action.codes]
            actions.append(
                lsp.CodeAction(
                    title=action.title,
                    kind=ide.RUN_ACTION_KIND,
                    diagnostics=attached or None,
                    command=lsp.Command(title=command.title, command=command.command, arguments=command.arguments),
                )
            )
        return actions

    # --- after a change ------------------------------------------------------------------------------

    def settings_changed(self) -> None:
        """Settings decide the store, the provider and whether runs are on: lenses are stale
        (the server re-checks diagnostics itself)."""
        self._generation += 1
        self._views.clear()
        if self.server.client_supports("workspace.code_lens.refresh_support"):
            with contextlib.suppress(Exception):  # not connected yet
                _fire(self.server.workspace_code_lens_refresh(None))

    def runs_changed(self, state: RunState) -> None:
        """Tell the client: ``nexa/runsChanged``, lens refresh, run-aware diagnostics again."""
        self._generation += 1
        self._views.clear()
        server = self.server
        try:
            server.protocol.notify(
                RUNS_CHANGED, {"run_id": state.run_id, "agent": state.agent, "status": state.status.value}
            )
        except Exception as exc:  # the connection is gone (shutdown)
            server.log(f"runs: cannot notify {RUNS_CHANGED}: {exc}", lsp.MessageType.Warning)
            return
        if server.client_supports("workspace.code_lens.refresh_support"):
            _fire(server.workspace_code_lens_refresh(None))
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
            try:
                from nexa_lsp.server import sync
            except ImportError:
                return
            for doc in affected:
                sync.schedule(server, doc, 0)
        elif server.client_supports("workspace.diagnostics.refresh_support"):
            _fire(server.workspace_diagnostic_refresh(None))

    # --- arguments and refusals ------------------------------------------------------------------

    def refuse(self, reason: str) -> Exception:
        """Show ``reason`` (``window/showMessage`` error) and build the LSP error answering the command."""
        from nexa_lsp.server.app import RequestFailed

        self.server.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"Nexa: {reason}"))
        return RequestFailed(reason)

    def _enabled_or_refuse(self, path: Path | None) -> None:
        if not self.server.settings.runs_enabled or not self._settings(path).runs_enabled:
            raise Refused(
                "runs are disabled in this workspace (setting nexa.runs.enabled is false; "
                "the VS Code extension turns it off in untrusted workspaces)"
            )

    async def _provider_settings(self, folder: Path) -> dict[str, str]:
        """``nexa.runs.providerSettings`` of the client for ``folder`` (KEY -> value; never logged)."""
        found: dict[str, str] = {}
        options = self.server.initialization_options
        for candidate in _runs_sections(options):
            found.update(_string_map(candidate.get("providerSettings")))
        if self.server.client_supports("workspace.configuration"):
            try:
                answer = await self.server.workspace_configuration_async(
                    lsp.ConfigurationParams(
                        items=[lsp.ConfigurationItem(scope_uri=uri_of_path(folder), section="nexa.runs")]
                    )
                )
            except Exception:
                answer = None
            if answer:
                value = answer[0]
                if isinstance(value, Mapping):
                    found.update(_string_map(value.get("providerSettings")))
        return found

    def _provider(
        self, agent: NexaAgent, name: str | None, config: RunConfig, extra: Mapping[str, str]
    ) -> ProviderChoice:
        """What to pass as ``provider=``: the setting's name, or - when the client gave provider
        settings (keys) - that provider built with them (same name, so fingerprints match);
        and the secrets the run must never write anywhere (its API key)."""
        working = Path(config.working_directory or os.getcwd())
        extra_dirs = [Path(agent.source).parent] if agent.source else []
        settings = Settings.load(working, config.config_name, extra_dirs, environ={**os.environ, **extra})
        resolved = config.provider or "scripted"
        secrets = {v for k, v in extra.items() if _is_secret_name(k)}
        key = settings.provider(resolved).api_key
        if key:
            secrets.add(key)
        secrets = {s for s in secrets if len(s) >= MIN_SECRET}
        if not extra:
            return ProviderChoice(name, frozenset(secrets))
        built = provider_from_settings(resolved, settings, working, config.max_retries)
        return ProviderChoice(built, frozenset(secrets))

    # --- commands --------------------------------------------------------------------------------

    async def execute(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        uri = _text(argument, "uri")
        name = _text(argument, "agent")
        task = argument.get("task")
        if not isinstance(task, str):
            task = ""
        path = path_of_uri(uri)
        self._enabled_or_refuse(path)
        path, agent = self._agent(uri, name)
        folder = self._folder_of(path)
        config = _config(argument.get("config"))
        if config.working_directory is None:  # runs work in the workspace folder, wherever the server started
            config = replace(config, working_directory=str(folder))
        # a provider named in the command's config wins over the workspace setting
        provider_name = None if config.provider else (self._settings(path).runs_provider or None)
        extra = await self._provider_settings(folder)
        resolved = _guard(lambda: agent.new_run_config(config, provider_name))
        choice = _guard(lambda: self._provider(agent, provider_name, resolved, extra))
        store = _guard(lambda: self._store(self._store_path(path), create=True))
        assert store is not None
        live = self._new_live(agent.name, store, choice.secrets)
        state = await self._start(live, lambda **kw: agent.execute(task, config=config, provider=choice.argument, **kw))
        return {"run_id": state.run_id, "session_id": state.session_id, "status": live.status}

    async def resume(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = _text(argument, "run_id")
        store, state = self._locate(run_id)
        self._enabled_or_refuse(_source_path(state))
        with self._holding(run_id, "resume"):
            _path, agent = self._agent_of_run(state)
            choice = await self._resume_provider(agent, state)
            live = self._new_live(agent.name, store, choice.secrets)
            started = await self._start(live, lambda **kw: agent.execute(state=state, provider=choice.argument, **kw))
        return {"run_id": started.run_id, "session_id": started.session_id, "status": live.status}

    async def continue_(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = _text(argument, "run_id")
        text = argument.get("input")
        if not isinstance(text, str):
            text = ""
        store, previous = self._locate(run_id)
        self._enabled_or_refuse(_source_path(previous))
        config = _config(argument.get("config")) if argument.get("config") is not None else None
        path, agent = self._agent_of_run(previous)
        provider_name = None if config is not None and config.provider else (self._settings(path).runs_provider or None)
        extra = await self._provider_settings(self._folder_of(path))
        resolved = _guard(lambda: agent.continuation_config(previous, config, provider_name))
        choice = _guard(lambda: self._provider(agent, provider_name, resolved, extra))
        live = self._new_live(agent.name, store, choice.secrets)
        state = await self._start(
            live, lambda **kw: agent.continue_run(previous, text, config=config, provider=choice.argument, **kw)
        )
        return {
            "run_id": state.run_id,
            "session_id": state.session_id,
            "parent_run_id": state.parent_run_id,
            "status": live.status,
        }

    async def decide(self, argument: Mapping[str, Any], approved: bool) -> dict[str, Any]:
        """Approve or deny a pending tool call; when none is left pending, resume the run."""
        run_id = _text(argument, "run_id")
        call_id = _text(argument, "call_id")
        store, state = self._locate(run_id)
        self._enabled_or_refuse(_source_path(state))
        with self._holding(run_id, "approve" if approved else "deny"):
            decided = _guard(lambda: (approve if approved else deny)(state, call_id, by=_user()))
            if decided.pending_approvals:
                store.save(decided)
                self.runs_changed(decided)
                self._update_transcript(decided)
                return {"run_id": run_id, "status": decided.status.value}
            _path, agent = self._agent_of_run(state)
            choice = await self._resume_provider(agent, decided)
            blockers = _guard(lambda: resume_blockers(decided, agent, choice.argument))
            blockers = [b for b in blockers if not isinstance(b, ApprovalPendingError)]
            if blockers:
                raise Refused(str(blockers[0]))
            store.save(decided)
            live = self._new_live(agent.name, store, choice.secrets)
            await self._start(live, lambda **kw: agent.execute(state=decided, provider=choice.argument, **kw))
        return {"run_id": run_id, "status": live.status}

    async def _resume_provider(self, agent: NexaAgent, state: RunState) -> ProviderChoice:
        path = _source_path(state)
        settings = self._settings(path)
        provider_name = settings.runs_provider or None
        extra = await self._provider_settings(self._folder_of(path))
        config = agent.resume_config(state, provider_name)
        return _guard(lambda: self._provider(agent, provider_name, config, extra))

    async def cancel(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = _text(argument, "run_id")
        live = self.live.get(run_id)
        if live is not None and live.finished is not None and not live.finished.done():
            live.cancel.cancel("cancelled from the editor")
            try:
                final = await asyncio.wait_for(asyncio.shield(live.finished), CANCEL_WAIT)
            except TimeoutError:
                return {"run_id": run_id, "status": live.status}
            return {"run_id": run_id, "status": final.status.value}
        if run_id in self._busy:
            raise Refused(f"run {run_id} is being started by another command right now; try again in a moment")
        store, state = self._locate(run_id)
        cancelled = _guard(lambda: cancel_run(state, "cancelled from the editor", by=_user()))
        store.save(cancelled)
        self.runs_changed(cancelled)
        self._update_transcript(cancelled)
        return {"run_id": run_id, "status": cancelled.status.value}

    async def recover(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = _text(argument, "run_id")
        call_id = _text(argument, "call_id")
        outcome = argument.get("outcome")
        if outcome not in ("completed", "not_executed"):
            raise Refused('nexa.recover needs "outcome": "completed" or "not_executed"')
        result = argument.get("result")
        if result is not None and not isinstance(result, str):
            raise Refused('nexa.recover: "result" must be a string')
        store, state = self._locate(run_id)
        self._enabled_or_refuse(_source_path(state))
        self._not_live(run_id, "recover")
        recovered = _guard(lambda: recover_tool_call(state, call_id, outcome, result=result, by=_user()))
        store.save(recovered)
        self.runs_changed(recovered)
        self._update_transcript(recovered)
        return {"run_id": run_id, "status": recovered.status.value}

    async def show_run(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = _text(argument, "run_id")
        store, state = self._locate(run_id)
        self._enabled_or_refuse(_source_path(state))
        path = self._transcript_path(store, run_id)
        self._followed[run_id] = path
        self._write_transcript(path, state, self.live.get(run_id))
        uri = uri_of_path(path)
        if self.server.client_supports("window.show_document.support"):
            _fire(self.server.window_show_document(lsp.ShowDocumentParams(uri=uri, take_focus=True)))
        return {"uri": uri}

    async def list_runs(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        agent = _optional_text(argument, "agent")
        session_id = _optional_text(argument, "session_id")
        uri = _optional_text(argument, "uri")
        source_path = path_of_uri(uri) if uri else None
        self._enabled_or_refuse(source_path)
        store_paths = [self._store_path(source_path)] if source_path is not None else self._known_store_paths()
        source = str(source_path.resolve()) if source_path is not None else None
        runs: dict[str, tuple[SQLiteCheckpointStore, RunState]] = {}
        for store_path in store_paths:
            store = self._store(store_path, create=False)
            if store is None:
                continue
            for state in store.list_states(agent=agent, session_id=session_id, source=source):
                live = self.live.get(state.run_id)
                runs[state.run_id] = (store, live.state if live is not None and live.state is not None else state)
        ordered = sorted(runs.values(), key=lambda item: (item[1].started_at, item[1].updated_at))
        agents: dict[tuple[str | None, str], tuple[NexaAgent | None, str | None]] = {}
        return {"runs": [self._summary(store, state, agents) for store, state in ordered]}

    def _summary(
        self,
        store: SQLiteCheckpointStore,
        state: RunState,
        agents: dict[tuple[str | None, str], tuple[NexaAgent | None, str | None]],
    ) -> dict[str, Any]:
        """``RunSummary`` with ``actions`` narrowed to what would be accepted now."""
        summary = RunSummary.of(state).to_dict()
        live_ids = self._live_ids()
        live = state.run_id in live_ids
        source_path = _source_path(state)
        provider = self._settings(source_path).runs_provider or None
        key = (state.metadata.source, state.agent)
        if key not in agents:
            try:
                agents[key] = (self._agent_of_run(state)[1], None)
            except Refused as exc:
                agents[key] = (None, str(exc))
        agent, problem = agents[key]
        elsewhere = self._driven_elsewhere(store, [state], live_ids).get(state.run_id)
        view = ide.run_view(state, agent, problem, live=live, provider=provider, elsewhere=elsewhere)
        summary["actions"] = list(view.actions)
        return summary

    def _not_live(self, run_id: str, verb: str) -> None:
        if run_id in self._live_ids():
            raise Refused(f"run {run_id} is running in this editor now; wait for it, or cancel it, before you {verb}")
        if run_id in self._busy:
            raise Refused(f"run {run_id} is being started by another command right now; try again in a moment")

    @contextlib.contextmanager
    def _holding(self, run_id: str, verb: str) -> Iterator[None]:
        """Keep other commands off ``run_id`` from its check until it runs here (or is refused):
        two quick Resume clicks must never drive one run twice."""
        self._not_live(run_id, verb)
        self._busy.add(run_id)
        try:
            yield
        finally:
            self._busy.discard(run_id)

    # --- running in the background ----------------------------------------------------------------

    def _new_live(self, agent: str, store: SQLiteCheckpointStore, secrets: frozenset[str]) -> LiveRun:
        return LiveRun(agent, store, store.path.parent / "transcripts", secrets=secrets)

    async def _start(self, live: LiveRun, entry: Callable[..., RunState]) -> RunState:
        """Drive ``entry`` on a thread; answer once the run's first state is saved.

        A refusal raised by the runtime before that first save becomes ``Refused``."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        live.started = loop.create_future()
        live.finished = loop.create_future()
        self._starting.add(live)

        def save(state: RunState) -> None:
            state = redact(state, live.secrets)  # a provider may echo its key in an error or reply
            live.store.save(state)
            self._post(self._on_saved, live, state)

        def on_event(event: RunEvent) -> None:
            self._post(self._on_event, live, event)

        def drive() -> None:
            try:
                final = entry(save=save, on_event=on_event, cancel=live.cancel)
            except BaseException as exc:  # a refusal before the first save, or a bug
                self._post(self._on_failed, live, exc)
                return
            self._post(self._on_finished, live, redact(final, live.secrets))

        live.thread = threading.Thread(target=drive, name=f"nexa-run-{live.agent}", daemon=True)
        live.thread.start()
        try:
            first = await asyncio.shield(live.started)
        except NexaRuntimeError as exc:
            raise Refused(str(exc)) from None
        except (ValueError, OSError) as exc:
            raise Refused(f"{type(exc).__name__}: {exc}") from None
        task = asyncio.ensure_future(self._begin_progress(live))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return first

    def _post(self, callback: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile (shutdown)
            loop.call_soon_threadsafe(callback, *args)

    def _on_saved(self, live: LiveRun, state: RunState) -> None:
        previous = live.state
        live.state = state
        if previous is not None and len(previous.history) != len(state.history):
            live.streamed.clear()  # the streamed turn is in the history now
        if live.run_id is None:
            live.run_id = state.run_id
            self.live[state.run_id] = live
            self._starting.discard(live)
            if live.started is not None and not live.started.done():
                live.started.set_result(state)
            self.server.log(f"runs: {state.agent} run {state.run_id} started (session {state.session_id})")
            self.runs_changed(state)
        elif previous is not None and previous.status is not state.status and state.status is RunStatus.RUNNING:
            self.runs_changed(state)
        # a run that stops (settled or waiting for approval) is announced by _on_finished
        self._schedule_report(live)

    def _on_event(self, live: LiveRun, event: RunEvent) -> None:
        if isinstance(event, TextDelta):
            live.streamed.append(event.text)
        elif isinstance(event, ToolCallStarted):
            live.activity = f"tool {event.tool} ({event.call_id}) running"
        elif isinstance(event, ToolCallFinished):
            live.activity = f"tool {event.tool} ({event.call_id}) {event.status}"
        elif isinstance(event, ApprovalNeeded):
            live.activity = f"tool {event.tool} ({event.call_id}) needs approval"
        else:
            return
        self._schedule_report(live)

    def _on_failed(self, live: LiveRun, exc: BaseException) -> None:
        self._starting.discard(live)
        if live.started is not None and not live.started.done():
            live.started.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
        if live.finished is not None and not live.finished.done():
            live.finished.set_exception(RuntimeError(str(exc)))
            live.finished.exception()  # retrieved: nobody may await it
        if live.run_id is not None:  # a bug after the run started: say so, keep the store as it is
            reason = scrub(str(exc), live.secrets)
            self.server.log(f"runs: run {live.run_id} stopped unexpectedly: {reason}", lsp.MessageType.Error)
            self._end_progress(live, f"stopped unexpectedly: {type(exc).__name__}")

    def _on_finished(self, live: LiveRun, final: RunState) -> None:
        if live.run_id is None:  # never saved (no save callback ran): treat as started now
            self._on_saved(live, final)
        live.state = final
        live.streamed.clear()
        live.activity = ""
        if live.finished is not None and not live.finished.done():
            live.finished.set_result(final)
        message = _end_message(final)
        self.server.log(f"runs: {final.agent} run {final.run_id} {message}")
        self._end_progress(live, message)
        self._update_transcript(final)
        self.runs_changed(final)  # lenses: no longer live

    # --- progress ----------------------------------------------------------------------------------

    async def _begin_progress(self, live: LiveRun) -> None:
        server = self.server
        if not server.client_supports("window.work_done_progress"):
            return
        token = f"nexa-run-{uuid.uuid4().hex}"
        try:
            await server.work_done_progress.create_async(token)
        except Exception as exc:
            server.log(f"runs: no progress for run {live.run_id}: {exc}", lsp.MessageType.Warning)
            return
        future = server.work_done_progress.tokens.get(token)
        if future is not None:
            future.add_done_callback(
                lambda f: live.cancel.cancel("cancelled from the editor") if f.cancelled() else None
            )
        live.progress = token
        state = live.state
        title = f"Nexa: {live.agent}"
        server.work_done_progress.begin(
            token,
            lsp.WorkDoneProgressBegin(title=title, cancellable=True, message=_report_message(live)),
        )
        if live.finished is not None and live.finished.done() and state is not None:
            self._end_progress(live, _end_message(live.state or state))

    def _schedule_report(self, live: LiveRun) -> None:
        if live.progress is None and not (live.run_id and live.run_id in self._followed):
            return
        if live.report_pending:
            return
        delay = max(0.0, live.last_report + REPORT_INTERVAL - time.monotonic())
        live.report_pending = True
        loop = self._loop
        if loop is None:
            return
        loop.call_later(delay, self._report, live)

    def _report(self, live: LiveRun) -> None:
        live.report_pending = False
        live.last_report = time.monotonic()
        if live.finished is not None and live.finished.done():
            return
        if live.progress is not None:
            try:
                self.server.work_done_progress.report(
                    live.progress, lsp.WorkDoneProgressReport(message=_report_message(live))
                )
            except Exception:  # the connection is gone
                live.progress = None
        if live.state is not None:
            self._update_transcript(live.state)

    def _end_progress(self, live: LiveRun, message: str) -> None:
        token = live.progress
        if token is None:
            return
        live.progress = None
        with contextlib.suppress(Exception):  # the connection is gone
            self.server.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(token, None)

    # --- transcripts -----------------------------------------------------------------------------

    def _transcript_path(self, store: SQLiteCheckpointStore, run_id: str) -> Path:
        safe = "".join(c for c in run_id if c.isalnum() or c in "_-") or "run"
        return store.path.parent / "transcripts" / f"{safe}.md"

    def _update_transcript(self, state: RunState) -> None:
        path = self._followed.get(state.run_id)
        if path is not None:
            self._write_transcript(path, state, self.live.get(state.run_id))

    def _write_transcript(self, path: Path, state: RunState, live: LiveRun | None) -> None:
        text = render_transcript(state)
        if live is not None and live.finished is not None and not live.finished.done():
            text += "\n## Now\n\n"
            streamed = scrub("".join(live.streamed), live.secrets)
            if streamed:
                text += f"**assistant** (streaming):\n\n{streamed}\n\n"
            if live.activity:
                text += f"- {live.activity}\n"
            if not streamed and not live.activity:
                text += "- waiting for the model\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)

    # --- shutdown ------------------------------------------------------------------------------------

    def stop_all(self, wait: float = 5.0) -> None:
        """Cancel every live run (saved as ``cancelled``) and wait a little for them to stop."""
        runs = list(self.live.values()) + list(self._starting)
        for live in runs:
            live.cancel.cancel("the language server stopped")
        deadline = time.monotonic() + wait
        for live in runs:
            if live.thread is not None:
                live.thread.join(max(0.0, deadline - time.monotonic()))


# --- helpers -----------------------------------------------------------------------------------------


def _fire(future: Any) -> None:
    """Send a request without waiting; a failing answer (unsupported) is ignored."""

    def done(f: Any) -> None:
        with contextlib.suppress(BaseException):
            f.exception()

    add = getattr(future, "add_done_callback", None)
    if add is not None:
        add(done)


T = TypeVar("T")


def _guard(compute: Callable[[], T]) -> T:
    """Run a runtime call made before a run starts; its error becomes a refusal."""
    try:
        return compute()
    except NexaRuntimeError as exc:
        raise Refused(str(exc)) from None
    except (ValueError, OSError) as exc:
        raise Refused(str(exc)) from None


def _text(argument: Mapping[str, Any], key: str) -> str:
    value = argument.get(key)
    if not isinstance(value, str) or not value.strip():
        raise Refused(f'the command argument needs "{key}" (a non-empty string)')
    return value


def _optional_text(argument: Mapping[str, Any], key: str) -> str | None:
    value = argument.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise Refused(f'"{key}" must be a string')
    return value


def _config(value: object) -> RunConfig:
    if value is None:
        return RunConfig()
    if not isinstance(value, Mapping):
        raise Refused('"config" must be an object (timeout, token_budget, tool_call_budget, model, provider, ...)')
    try:
        return RunConfig.from_dict(value)
    except (ValueError, TypeError) as exc:
        raise Refused(f"config: {exc}") from None


def _source_path(state: RunState) -> Path | None:
    return normal_path(state.metadata.source) if state.metadata.source else None


def _user() -> str:
    try:
        return f"{getpass.getuser()} (editor)"
    except Exception:
        return "editor"


def _runs_sections(options: object) -> list[Mapping[str, Any]]:
    """The ``runs`` sections of initialization options in any accepted shape."""
    if not isinstance(options, Mapping):
        return []
    found: list[Mapping[str, Any]] = []
    for holder in (options, options.get("nexa")):
        if isinstance(holder, Mapping) and isinstance(holder.get("runs"), Mapping):
            found.append(holder["runs"])
    if isinstance(options.get("runs.providerSettings"), Mapping):
        found.append({"providerSettings": options["runs.providerSettings"]})
    return found


def _is_secret_name(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in ("KEY", "TOKEN", "SECRET", "PASSWORD"))


def scrub(text: str, secrets: frozenset[str]) -> str:
    """``text`` with every secret replaced by ``[redacted]``."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact(state: RunState, secrets: frozenset[str]) -> RunState:
    """``state`` without any secret in its texts (same ``updated_at``); unchanged when clean."""
    if not secrets or not any(s in state.to_json() for s in secrets):
        return state

    def clean(text: str | None) -> str | None:
        return None if text is None else scrub(text, secrets)

    history = tuple(
        replace(
            m,
            content=scrub(m.content, secrets),
            tool_calls=tuple(replace(c, arguments=scrub(c.arguments, secrets)) for c in m.tool_calls),
        )
        for m in state.history
    )
    journal = tuple(replace(e, arguments=scrub(e.arguments, secrets), result=clean(e.result)) for e in state.journal)
    approvals = tuple(replace(a, arguments=scrub(a.arguments, secrets)) for a in state.approvals)
    error = None if state.error is None else replace(state.error, message=scrub(state.error.message, secrets))
    return replace(
        state,
        input=scrub(state.input, secrets),
        output=scrub(state.output, secrets),
        history=history,
        journal=journal,
        approvals=approvals,
        error=error,
    )


def _string_map(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(k, str) and v is not None}


_RUN_ID = re.compile(r"\brun_[0-9a-f]{32}\b")


def _diagnostic_run(diagnostic: lsp.Diagnostic) -> str | None:
    """The run a run-aware diagnostic is about (its data, else the full run id in its message)."""
    if diagnostic.code not in RUN_CODES:
        return None
    data = diagnostic.data
    if isinstance(data, Mapping) and isinstance(data.get("run_id"), str):
        return str(data["run_id"])
    match = _RUN_ID.search(diagnostic.message)
    return match.group(0) if match else None


def _end_message(state: RunState) -> str:
    if state.status is RunStatus.WAITING_APPROVAL:
        calls = ", ".join(f"{a.tool} ({a.call_id})" for a in state.pending_approvals)
        return f"{ide.short_id(state.run_id)} waits for approval of {calls}"
    text = f"{ide.short_id(state.run_id)} {state.status.value}"
    if state.error is not None and state.status is not RunStatus.COMPLETED:
        text += f": {state.error.code} {state.error.message}"
    return text


def _report_message(live: LiveRun) -> str:
    head = f"{ide.short_id(live.run_id)} {live.status}" if live.run_id else "starting"
    streamed = scrub(" ".join("".join(live.streamed).split()), live.secrets)
    if len(streamed) > REPORT_TEXT:
        streamed = "…" + streamed[-REPORT_TEXT:]
    parts = [head]
    if live.activity:
        parts.append(live.activity)
    if streamed:
        parts.append(streamed)
    return " · ".join(parts)


# --- registration ------------------------------------------------------------------------------------


def register(server: NexaLanguageServer) -> RunFeatures:
    """Register code lenses, run code actions, run-aware diagnostics and the run commands."""
    features = RunFeatures(server)
    server.run_features = features  # type: ignore[attr-defined]

    @server.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
    def code_lens(params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        return features.code_lens(params)

    _register_code_actions(server, features)
    _register_diagnostics(server, features)
    listeners = getattr(server, "settings_listeners", None)
    if isinstance(listeners, list):
        listeners.append(features.settings_changed)

    def command(name: str, handler: Callable[[Mapping[str, Any]], Any]) -> None:
        async def run_command(ls: object, *arguments: object) -> Any:
            try:
                if len(arguments) != 1 or not isinstance(arguments[0], Mapping):
                    raise Refused(f"{name} takes one object argument (see docs/commands.md)")
                return await handler(arguments[0])
            except Refused as exc:
                raise features.refuse(str(exc)) from None

        run_command.__name__ = name.replace(".", "_")
        server.command(name)(run_command)

    command("nexa.execute", features.execute)
    command("nexa.resume", features.resume)
    command("nexa.continue", features.continue_)
    command("nexa.approve", lambda a: features.decide(a, True))
    command("nexa.deny", lambda a: features.decide(a, False))
    command("nexa.cancel", features.cancel)
    command("nexa.recover", features.recover)
    command("nexa.showRun", features.show_run)
    command("nexa.listRuns", features.list_runs)

    fm = server.protocol.fm
    if lsp.SHUTDOWN not in fm.features:

        @server.feature(lsp.SHUTDOWN)
        def shutdown(params: None) -> None:
            features.stop_all()

    return features


def _register_code_actions(server: NexaLanguageServer, features: RunFeatures) -> None:
    """Run actions join the server's ``textDocument/codeAction`` answers (its provider hook)."""
    providers = getattr(server, "code_action_providers", None)
    if not isinstance(providers, list):
        server.log("runs: this server has no code action hook; run code actions are off", lsp.MessageType.Warning)
        return
    providers.append(features.code_actions)
    kinds = getattr(server, "code_action_kinds", None)
    if isinstance(kinds, list) and ide.RUN_ACTION_KIND not in kinds:
        kinds.append(ide.RUN_ACTION_KIND)


def _register_diagnostics(server: NexaLanguageServer, features: RunFeatures) -> None:
    """Run-aware diagnostics join each document's diagnostics (the server's provider hook)."""
    providers = getattr(server, "diagnostic_providers", None)
    if not isinstance(providers, list):
        server.log("runs: this server has no diagnostics hook; run-aware diagnostics are off", lsp.MessageType.Warning)
        return
    providers.append(features.diagnostics_for)
