"""``NexaAgent``: an agent's declaration and configuration, and its run entries ``execute``
(new task, or resume) and ``continue_run`` (next turn).

A run is driven on the calling thread by ``run_loop``: events and text deltas are delivered
there, in order.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from nexa_lsp.runtime.artifacts import references_artifacts
from nexa_lsp.runtime.continuation import blockers_for_fingerprint, closed_history, resume_blockers_for_fingerprint
from nexa_lsp.runtime.errors import EmptyInputError
from nexa_lsp.runtime.events import CancelLike, EventHandler, TextHandler
from nexa_lsp.runtime.providers import DEFAULT_PROVIDER, SettingsProvider, provider_from_settings, split_model_id
from nexa_lsp.runtime.providers.base import Provider
from nexa_lsp.runtime.run_loop.context import RunContext, SaveCallback
from nexa_lsp.runtime.run_loop.driver import drive
from nexa_lsp.runtime.run_state import (
    DEFAULT_ARTIFACT_THRESHOLD,
    AgentFingerprint,
    Message,
    RunConfig,
    RunMetadata,
    RunState,
    RunStatus,
    new_run_id,
    new_session_id,
)
from nexa_lsp.runtime.settings import Settings
from nexa_lsp.runtime.tools import Tool, as_tool, tools_fingerprint


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _join_input(args: Iterable[Any]) -> str:
    """Arguments joined with spaces (a run value stands for its output)."""
    return " ".join(str(a) for a in args)


class NexaAgent:
    """An agent: a name, a system prompt, an optional model/provider and tools.

    ``defaults`` are run configuration defaults (e.g. from ``@timeout``/``@limit``
    decorators); ``source`` is the ``.nx`` file the agent was declared in, if any.
    Without any provider named (argument, config, agent, ``provider/model`` id,
    ``PROVIDER`` setting or ``NEXA_PROVIDER``), runs use the offline ``scripted`` provider.
    """

    def __init__(
        self,
        name: str,
        prompt: str = "",
        model: str | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        provider: str | Provider | None = None,
        *,
        role: str | None = None,
        defaults: RunConfig | None = None,
        source: str | None = None,
    ) -> None:
        self.name = name
        self.prompt = prompt
        self.role = role
        self.model = model
        self.provider = provider
        self.tools: tuple[Tool, ...] = tuple(as_tool(t) for t in tools)
        self.defaults = defaults or RunConfig()
        self.source = source
        names = [t.name for t in self.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"agent {name!r} has more than one tool named {', '.join(duplicates)}")

    def __repr__(self) -> str:
        return f"NexaAgent({self.name!r}, model={self.model!r}, tools={[t.name for t in self.tools]!r})"

    # --- definition --------------------------------------------------------------------------
    @property
    def system_prompt(self) -> str:
        return f"Role: {self.role}. {self.prompt}" if self.role else self.prompt

    def tool_named(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def fingerprint(self, config: RunConfig) -> AgentFingerprint:
        """The fingerprint of a run of this agent under a resolved ``config``."""
        prompt = _sha256(self.system_prompt)
        tools = tools_fingerprint(self.tools)
        return AgentFingerprint(
            agent=self.name,
            definition=_sha256(json.dumps([self.name, prompt, tools])),
            prompt=prompt,
            tools=tools,
            tool_names=tuple(sorted(t.name for t in self.tools)),
            model=config.model,
            provider=config.provider or DEFAULT_PROVIDER,
            working_directory=config.working_directory or "",
        )

    # --- configuration -------------------------------------------------------------------------
    def _provider_name_of(self, provider: str | Provider | None) -> str | None:
        if provider is None:
            return None
        return provider if isinstance(provider, str) else provider.name

    def resolve_config(self, config: RunConfig, provider: str | Provider | None = None) -> RunConfig:
        """``config`` with working directory, artifact directory, model and provider filled in."""
        working = Path(config.working_directory or os.getcwd()).resolve()
        settings = self.settings_for(config, working)
        name = self._provider_name_of(provider) or config.provider
        name, _model = split_model_id(config.model, name)
        name = name or settings.provider_name() or DEFAULT_PROVIDER
        model = config.model
        if model is None and name != DEFAULT_PROVIDER:
            model = settings.default_model()
        artifacts = Path(config.artifact_directory) if config.artifact_directory else working / ".nexa" / "artifacts"
        if not artifacts.is_absolute():
            artifacts = working / artifacts
        return replace(
            config,
            working_directory=str(working),
            artifact_directory=str(artifacts),
            model=model,
            provider=name,
            artifact_threshold=config.artifact_threshold or DEFAULT_ARTIFACT_THRESHOLD,
        )

    def settings_for(self, config: RunConfig, working: Path) -> Settings:
        extra = [Path(self.source).resolve().parent] if self.source else []
        return Settings.load(working, config.config_name, extra)

    def new_run_config(self, config: RunConfig | None, provider: str | Provider | None = None) -> RunConfig:
        """The resolved configuration ``execute(task, config=config)`` would use."""
        agent_values = RunConfig(model=self.model, provider=self._provider_name_of(self.provider))
        return self.resolve_config(
            (config or RunConfig()).merged_over(agent_values).merged_over(self.defaults), provider
        )

    def continuation_config(
        self, previous: RunState, config: RunConfig | None, provider: str | Provider | None = None
    ) -> RunConfig:
        """The resolved configuration of a continuation of ``previous``.

        Fields unset in ``config`` keep the previous run's values, except the model and
        provider, which are the agent's own when it names them (so a changed agent is
        detected). The artifact directory stays the previous one whenever history already
        references artifacts there, so earlier large results stay readable.
        """
        base = previous.config
        agent_values = RunConfig(model=self.model, provider=self._provider_name_of(self.provider))
        merged = (config or RunConfig()).merged_over(agent_values.merged_over(base))
        if references_artifacts(previous):
            merged = replace(merged, artifact_directory=base.artifact_directory)
        return self.resolve_config(merged, provider)

    def resume_config(self, state: RunState, provider: str | Provider | None = None) -> RunConfig:
        """The configuration a resume of ``state`` runs with: the original one."""
        name = self._provider_name_of(provider)
        return replace(state.config, provider=name) if name else state.config

    def _provider_for(
        self, config: RunConfig, provider: str | Provider | None
    ) -> tuple[Provider, SettingsProvider | None]:
        """The provider a run uses, and the same again when it was built here (the run closes it)."""
        if provider is not None and not isinstance(provider, str):
            return provider, None
        if self.provider is not None and not isinstance(self.provider, str) and self.provider.name == config.provider:
            return self.provider, None
        working = Path(config.working_directory or os.getcwd())
        built = provider_from_settings(
            config.provider or DEFAULT_PROVIDER,
            self.settings_for(config, working),
            working,
            config.max_retries,
        )
        return built, built

    def _drive(
        self,
        state: RunState,
        resumed: bool,
        config: RunConfig,
        provider: str | Provider | None,
        save: SaveCallback | None,
        on_event: EventHandler | None,
        on_text: TextHandler | None,
        cancel: CancelLike | None,
    ) -> RunState:
        """Drive ``state`` with the provider ``config`` names; a provider built for the run
        (from the settings) is closed when the run stops, so no connection pool leaks."""
        chosen, built = self._provider_for(config, provider)
        context = RunContext(self.system_prompt, self.tools, chosen, save, on_event, on_text, cancel)
        try:
            return drive(context, state, resumed)
        finally:
            if built is not None:
                built.close()

    # --- entries -----------------------------------------------------------------------------------
    def execute(
        self,
        *args: Any,
        state: RunState | None = None,
        config: RunConfig | None = None,
        cancel: CancelLike | None = None,
        save: SaveCallback | None = None,
        on_event: EventHandler | None = None,
        on_text: TextHandler | None = None,
        provider: str | Provider | None = None,
    ) -> RunState:
        """Start an independent task (new run id, session and budget), or with ``state=``
        resume that interrupted or approval-waiting run (same id, configuration, usage, deadline)."""
        if state is not None:
            if args or config is not None:
                raise ValueError("execute(state=...) resumes the run as it was; pass no task or config")
            resolved = self.resume_config(state, provider)
            blockers = resume_blockers_for_fingerprint(state, self.fingerprint(resolved))
            if blockers:
                raise blockers[0]
            resumed = state.evolve(status=RunStatus.RUNNING)
            return self._drive(resumed, True, resolved, provider, save, on_event, on_text, cancel)
        task = _join_input(args)
        if not task.strip():
            raise EmptyInputError("the task is empty; pass what the agent should do")
        resolved = self.new_run_config(config, provider)
        first = self._first_state(task, resolved, RunMetadata(session_id=new_session_id(), source=self.source), ())
        return self._drive(first, False, resolved, provider, save, on_event, on_text, cancel)

    def continue_run(
        self,
        previous: RunState,
        *args: Any,
        config: RunConfig | None = None,
        cancel: CancelLike | None = None,
        save: SaveCallback | None = None,
        on_event: EventHandler | None = None,
        on_text: TextHandler | None = None,
        provider: str | Provider | None = None,
    ) -> RunState:
        """Start the next turn of ``previous``'s conversation: new run id and budget, history kept,
        approvals reset, same session. ``previous`` is not changed. Raises the first
        ``ContinuationError`` from ``continuation_blockers`` when the turn is refused."""
        text = _join_input(args)
        resolved = self.continuation_config(previous, config, provider)
        blockers = blockers_for_fingerprint(previous, text, self.fingerprint(resolved))
        if blockers:
            raise blockers[0]
        metadata = RunMetadata(
            session_id=previous.session_id, parent_run_id=previous.run_id, source=previous.metadata.source
        )
        first = self._first_state(text, resolved, metadata, closed_history(previous))
        return self._drive(first, False, resolved, provider, save, on_event, on_text, cancel)

    def _first_state(
        self, text: str, config: RunConfig, metadata: RunMetadata, history: tuple[Message, ...]
    ) -> RunState:
        """The state a new run starts from: a new id, a fresh start time and deadline, and the
        input appended to ``history`` (the retained history of a continued conversation)."""
        run_id = new_run_id()
        started = time.time()
        return RunState(
            run_id=run_id,
            agent=self.name,
            status=RunStatus.RUNNING,
            input=text,
            config=config,
            fingerprint=self.fingerprint(config),
            metadata=metadata,
            started_at=started,
            deadline=None if config.timeout is None else started + config.timeout,
            history=(*history, Message(role="user", content=text, run_id=run_id)),
            turn_start=len(history),
            updated_at=started,
        )
