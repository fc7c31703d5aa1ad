"""The ``nexa.*`` run commands of docs/commands.md.

Each takes the command's one object argument and answers with a JSON object, or raises
:class:`~nexa_lsp.server.runs.arguments.Refused` with the runtime's reason; a refused
command saves or changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from nexa_lsp.ide import runs as ide
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.continuation import resume_blockers
from nexa_lsp.runtime.control import approve, cancel_run, deny, recover_tool_call
from nexa_lsp.runtime.errors import ApprovalNotPendingError, ApprovalPendingError
from nexa_lsp.runtime.run_state import RunState, RunStatus
from nexa_lsp.runtime.summary import RunSummary
from nexa_lsp.server.documents import path_of_uri, uri_of_path
from nexa_lsp.server.runs import protocol
from nexa_lsp.server.runs.agents import agent_of, agent_of_run, source_path
from nexa_lsp.server.runs.arguments import (
    Refused,
    editor_user,
    guard,
    optional_text,
    required_text,
    run_config,
)
from nexa_lsp.server.runs.live import LiveRun
from nexa_lsp.server.runs.providers import (
    ProviderChoice,
    client_provider_secret,
    client_provider_settings,
    provider_choice,
)

if TYPE_CHECKING:
    from nexa_lsp.runtime.agent import NexaAgent
    from nexa_lsp.server.runs.features import RunFeatures

#: Seconds ``nexa.cancel`` waits for a live run to stop.
CANCEL_WAIT = 10.0


class RunCommands:
    """The command handlers of one server's runs feature."""

    def __init__(self, features: RunFeatures) -> None:
        self.features = features
        self.server = features.server
        self.stores = features.stores
        self.driver = features.driver

    # --- starting runs --------------------------------------------------------------------------

    async def execute(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        uri = required_text(argument, "uri")
        name = required_text(argument, "agent")
        task = argument.get("task")
        if not isinstance(task, str):
            task = ""
        path = path_of_uri(uri)
        self.features.enabled_or_refuse(path)
        path, agent = agent_of(self.server, uri, name)
        folder = self.stores.folder_of(path)
        config = run_config(argument.get("config"))
        if config.working_directory is None:  # runs work in the workspace folder, wherever the server started
            config = replace(config, working_directory=str(folder))
        # a provider named in the command's config wins over the workspace setting
        provider_name = None if config.provider else (self.stores.settings(path).runs_provider or None)
        extra = await client_provider_settings(self.server, folder)
        resolved = guard(lambda: agent.new_run_config(config, provider_name))
        extra.update(await client_provider_secret(self.server, resolved.provider))
        choice = guard(lambda: provider_choice(agent, provider_name, resolved, extra))
        store = guard(lambda: self.stores.store(self.stores.store_path(path), create=True))
        assert store is not None
        live = LiveRun(agent.name, store, secrets=choice.secrets)
        state = await self.features.start(
            live, lambda **kw: agent.execute(task, config=config, provider=choice.argument, **kw)
        )
        return {"run_id": state.run_id, "session_id": state.session_id, "status": live.status}

    async def resume(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = required_text(argument, "run_id")
        store, state = self._locate(run_id)
        with self.driver.holding(run_id, "resume"):
            _path, agent = agent_of_run(self.server, state)
            choice = await self._resume_provider(agent, state)
            live = LiveRun(agent.name, store, secrets=choice.secrets)
            started = await self.features.start(
                live, lambda **kw: agent.execute(state=state, provider=choice.argument, **kw)
            )
        return {"run_id": started.run_id, "session_id": started.session_id, "status": live.status}

    async def continue_(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = required_text(argument, "run_id")
        text = argument.get("input")
        if not isinstance(text, str):
            text = ""
        store, previous = self._locate(run_id)
        config = run_config(argument.get("config")) if argument.get("config") is not None else None
        path, agent = agent_of_run(self.server, previous)
        provider_name = (
            None if config is not None and config.provider else (self.stores.settings(path).runs_provider or None)
        )
        extra = await client_provider_settings(self.server, self.stores.folder_of(path))
        resolved = guard(lambda: agent.continuation_config(previous, config, provider_name))
        extra.update(await client_provider_secret(self.server, resolved.provider))
        choice = guard(lambda: provider_choice(agent, provider_name, resolved, extra))
        live = LiveRun(agent.name, store, secrets=choice.secrets)
        state = await self.features.start(
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
        run_id = required_text(argument, "run_id")
        call_id = required_text(argument, "call_id")
        store, state = self._locate(run_id)
        if state.status is not RunStatus.WAITING_APPROVAL and run_id not in self.driver.live_ids():
            status = state.status.value.replace("_", " ")
            raise Refused(
                str(
                    ApprovalNotPendingError(
                        f"run {run_id} is {status} now, not waiting for approval (it was moved on elsewhere, "
                        "for example by `nexa-lsp agent --resume`); nothing was approved or denied"
                    )
                )
            )
        with self.driver.holding(run_id, "approve" if approved else "deny"):
            decided = guard(lambda: (approve if approved else deny)(state, call_id, by=editor_user()))
            if decided.pending_approvals:
                self._save(store, decided)
                return {"run_id": run_id, "status": decided.status.value}
            _path, agent = agent_of_run(self.server, state)
            choice = await self._resume_provider(agent, decided)
            blockers = guard(lambda: resume_blockers(decided, agent, choice.argument))
            blockers = [b for b in blockers if not isinstance(b, ApprovalPendingError)]
            if blockers:
                raise Refused(str(blockers[0]))
            store.save(decided)
            live = LiveRun(agent.name, store, secrets=choice.secrets)
            await self.features.start(live, lambda **kw: agent.execute(state=decided, provider=choice.argument, **kw))
        return {"run_id": run_id, "status": live.status}

    async def _resume_provider(self, agent: NexaAgent, state: RunState) -> ProviderChoice:
        path = source_path(state)
        provider_name = self.stores.settings(path).runs_provider or None
        extra = await client_provider_settings(self.server, self.stores.folder_of(path))
        config = agent.resume_config(state, provider_name)
        extra.update(await client_provider_secret(self.server, config.provider))
        return guard(lambda: provider_choice(agent, provider_name, config, extra))

    def _locate(self, run_id: str) -> tuple[SQLiteCheckpointStore, RunState]:
        """The store holding ``run_id`` and the run, refused when runs are off for its file."""
        store, state = self.features.locate(run_id)
        self.features.enabled_or_refuse(source_path(state))
        return store, state

    # --- changing stored runs ---------------------------------------------------------------------

    def _save(self, store: SQLiteCheckpointStore, state: RunState) -> None:
        """Save a change made here (not by a run) and tell the editor."""
        store.save(state)
        self.features.runs_changed(state)
        self.features.transcripts.update(state, self.driver.live.get(state.run_id))

    async def cancel(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = required_text(argument, "run_id")
        live = self.driver.executing(run_id)
        if live is not None and live.finished is not None:
            live.cancel.cancel("cancelled from the editor")
            try:
                final = await asyncio.wait_for(asyncio.shield(live.finished), CANCEL_WAIT)
            except TimeoutError:
                return {"run_id": run_id, "status": live.status}
            return {"run_id": run_id, "status": final.status.value}
        if self.driver.is_busy(run_id):
            raise Refused(f"run {run_id} is being started by another command right now; try again in a moment")
        store, state = self.features.locate(run_id)
        cancelled = guard(lambda: cancel_run(state, "cancelled from the editor", by=editor_user()))
        self._save(store, cancelled)
        return {"run_id": run_id, "status": cancelled.status.value}

    async def recover(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = required_text(argument, "run_id")
        call_id = required_text(argument, "call_id")
        outcome = argument.get("outcome")
        if outcome not in ("completed", "not_executed"):
            raise Refused('nexa.recover needs "outcome": "completed" or "not_executed"')
        result = argument.get("result")
        if result is not None and not isinstance(result, str):
            raise Refused('nexa.recover: "result" must be a string')
        store, state = self._locate(run_id)
        self.driver.not_live(run_id, "recover")
        recovered = guard(lambda: recover_tool_call(state, call_id, outcome, result=result, by=editor_user()))
        self._save(store, recovered)
        return {"run_id": run_id, "status": recovered.status.value}

    # --- reading runs ---------------------------------------------------------------------------

    async def show_run(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        run_id = required_text(argument, "run_id")
        store, state = self._locate(run_id)
        path = self.features.transcripts.follow(store, state, self.driver.live.get(run_id))
        uri = uri_of_path(path)
        if not self.features.show_document(uri):  # e.g. Neovim 0.7, eglot 1.9: say where it is
            protocol.show_message(
                self.server,
                f"Nexa: the transcript of run {run_id} is {path} (rewritten while the run goes on)",
                "info",
            )
        return {"uri": uri}

    async def list_runs(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        agent = optional_text(argument, "agent")
        session_id = optional_text(argument, "session_id")
        uri = optional_text(argument, "uri")
        path = path_of_uri(uri) if uri else None
        self.features.enabled_or_refuse(path)
        store_paths = [self.stores.store_path(path)] if path is not None else self.stores.known_paths()
        source = str(path.resolve()) if path is not None else None
        runs: dict[str, tuple[SQLiteCheckpointStore, RunState]] = {}
        for store_path in store_paths:
            store = self.stores.store(store_path, create=False)
            if store is None:
                continue
            for state in store.list_states(agent=agent, session_id=session_id, source=source):
                live = self.driver.live.get(state.run_id)
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
        live_ids = self.driver.live_ids()
        provider = self.stores.settings(source_path(state)).runs_provider or None
        key = (state.metadata.source, state.agent)
        if key not in agents:
            try:
                agents[key] = (agent_of_run(self.server, state)[1], None)
            except Refused as exc:
                agents[key] = (None, str(exc))
        agent, problem = agents[key]
        elsewhere = self.features.views.driven_elsewhere(store, [state], live_ids).get(state.run_id)
        view = ide.run_view(
            state, agent, problem, live=state.run_id in live_ids, provider=provider, elsewhere=elsewhere
        )
        summary["actions"] = list(view.actions)
        return summary
