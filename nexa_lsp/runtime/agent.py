"""``NexaAgent``: run entries ``execute`` (new task or resume) and ``continue_run`` (next turn).

A run is driven on the calling thread: events and text deltas are delivered there, in
order. Provider calls happen on a helper thread so that cancellation and the deadline
stop a run promptly even while a model is slow to answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from nexa_lsp.runtime.artifacts import artifact_reference, references_artifacts, write_artifact
from nexa_lsp.runtime.continuation import blockers_for_fingerprint, closed_history, resume_blockers
from nexa_lsp.runtime.errors import (
    RUN_BUDGET_EXHAUSTED,
    RUN_CANCELLED,
    RUN_INTERNAL_ERROR,
    RUN_REJECTED_CALLS,
    RUN_TIMED_OUT,
    TOOL_FAILED,
    EmptyInputError,
    NexaRuntimeError,
    ProviderResponseError,
    UnknownToolOutcomeError,
)
from nexa_lsp.runtime.events import (
    ApprovalNeeded,
    CancelLike,
    CancelToken,
    EventHandler,
    RunEnded,
    RunEvent,
    RunStarted,
    TextDelta,
    TextHandler,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
    is_cancelled,
)
from nexa_lsp.runtime.providers import DEFAULT_PROVIDER, provider_from_settings, split_model_id
from nexa_lsp.runtime.providers.base import Provider, ProviderReply, ProviderRequest, ToolSpec
from nexa_lsp.runtime.providers.http import ProviderCancelled
from nexa_lsp.runtime.run_state import (
    DEFAULT_ARTIFACT_THRESHOLD,
    AgentFingerprint,
    Approval,
    JournalEntry,
    Message,
    RunConfig,
    RunError,
    RunMetadata,
    RunState,
    RunStatus,
    ToolCall,
    new_run_id,
    new_session_id,
    unanswered_tool_calls,
)
from nexa_lsp.runtime.settings import Settings
from nexa_lsp.runtime.tools import Tool, as_tool, tools_fingerprint

SaveCallback = Callable[[RunState], None]
PROVIDER_POLL_SECONDS = 0.02
MAX_REJECTED_TURNS = 5
"""Model turns in a row whose tool calls were all rejected (unknown tool, invalid arguments)
before the run fails with NXR054 instead of asking the model again and again."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with lone surrogates (invalid Unicode a provider may send) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


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

    def _provider_for(self, config: RunConfig, provider: str | Provider | None) -> Provider:
        if provider is not None and not isinstance(provider, str):
            return provider
        if self.provider is not None and not isinstance(self.provider, str) and self.provider.name == config.provider:
            return self.provider
        working = Path(config.working_directory or os.getcwd())
        return provider_from_settings(
            config.provider or DEFAULT_PROVIDER,
            self.settings_for(config, working),
            working,
            config.max_retries,
        )

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
            blockers = resume_blockers(state, self, provider)
            if blockers:
                raise blockers[0]
            resolved = self.resume_config(state, provider)
            driver = _RunDriver(self, self._provider_for(resolved, provider), save, on_event, on_text, cancel)
            return driver.drive(state.evolve(status=RunStatus.RUNNING), resumed=True)
        task = _join_input(args)
        if not task.strip():
            raise EmptyInputError("the task is empty; pass what the agent should do")
        resolved = self.new_run_config(config, provider)
        first = self._first_state(task, resolved, RunMetadata(session_id=new_session_id(), source=self.source), ())
        driver = _RunDriver(self, self._provider_for(resolved, provider), save, on_event, on_text, cancel)
        return driver.drive(first, resumed=False)

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
        driver = _RunDriver(self, self._provider_for(resolved, provider), save, on_event, on_text, cancel)
        return driver.drive(first, resumed=False)

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


class _Stop(Exception):
    """Internal: the run reached a state where it stops (settled or waiting for approval)."""

    def __init__(self, state: RunState) -> None:
        super().__init__(state.status.value)
        self.state = state


class _RunDriver:
    """Drives one run from a state until it settles or waits for approval."""

    def __init__(
        self,
        agent: NexaAgent,
        provider: Provider,
        save: SaveCallback | None,
        on_event: EventHandler | None,
        on_text: TextHandler | None,
        cancel: CancelLike | None,
    ) -> None:
        self.agent = agent
        self.provider = provider
        self._save = save
        self._on_event = on_event
        self._on_text = on_text
        self.cancel = cancel

    def save(self, state: RunState) -> RunState:
        if self._save is not None:
            self._save(state)
        return state

    def emit(self, event: RunEvent) -> None:
        if self._on_event is not None:
            self._on_event(event)

    def drive(self, state: RunState, resumed: bool) -> RunState:
        self.emit(RunStarted(state.run_id, state.session_id, state.parent_run_id, state.agent, resumed))
        self.save(state)
        try:
            state = self._loop(state)
        except _Stop as stop:
            state = stop.state
        except NexaRuntimeError as exc:
            state = self._settle(state, RunStatus.FAILED, RunError(exc.code, exc.message), end=False)
        except Exception as exc:  # a bug or an unexpected library error: keep the reason
            state = self._settle(
                state,
                RunStatus.FAILED,
                RunError(RUN_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"),
                end=False,
            )
        self.emit(RunEnded(state.run_id, state.status.value, None if state.error is None else state.error.message))
        return state

    def _settle(self, state: RunState, status: RunStatus, error: RunError | None, end: bool = True) -> RunState:
        state = self.save(state.evolve(status=status, error=error))
        if end:
            raise _Stop(state)
        return state

    def _check_interrupts(self, state: RunState, partial_output: list[str] | None = None) -> None:
        stopping = is_cancelled(self.cancel) or (state.deadline is not None and time.time() >= state.deadline)
        if stopping and partial_output:
            state = state.evolve(output="".join(partial_output))
        if is_cancelled(self.cancel):
            reason = getattr(self.cancel, "reason", None) or "cancelled by the user"
            self._settle(state, RunStatus.CANCELLED, RunError(RUN_CANCELLED, reason))
        if state.deadline is not None and time.time() >= state.deadline:
            self._settle(
                state,
                RunStatus.TIMED_OUT,
                RunError(RUN_TIMED_OUT, f"the run's deadline ({state.config.timeout:g}s from its start) passed"),
            )

    def _loop(self, state: RunState) -> RunState:
        final = state.history[-1] if state.history else None
        if final is not None and final.role == "assistant" and not final.tool_calls and final.run_id == state.run_id:
            # the model's final answer was saved, but the process died before the run settled:
            # the run is complete; asking the model again would spend tokens and change the answer
            self._settle(state.evolve(output=final.content), RunStatus.COMPLETED, None)
        while True:
            self._check_interrupts(state)
            pending = unanswered_tool_calls(state.history)
            if pending:
                state = self._handle_call(state, pending[0])
                continue
            budget = state.config.token_budget
            if budget is not None and state.usage.total_tokens >= budget:
                self._settle(
                    state,
                    RunStatus.BUDGET_EXHAUSTED,
                    RunError(RUN_BUDGET_EXHAUSTED, f"the token budget ({budget}) is used up"),
                )
            self._check_rejections(state)
            reply, streamed = self._ask_model(state)
            reply = self._with_unique_call_ids(state, reply)
            state = state.evolve(
                history=(
                    *state.history,
                    Message(
                        role="assistant",
                        content=reply.text,
                        tool_calls=reply.tool_calls,
                        provider=self.provider.name,
                        opaque=reply.opaque,
                        response_id=reply.response_id,
                        run_id=state.run_id,
                    ),
                ),
                usage=state.usage.plus(reply.input_tokens, reply.output_tokens),
                output=reply.text or streamed,
            )
            self.save(state)
            for call in reply.tool_calls:
                self.emit(ToolCallRequested(state.run_id, call.call_id, call.name, call.arguments))
            if not reply.tool_calls:
                self._settle(state, RunStatus.COMPLETED, None)
            if budget is not None and state.usage.total_tokens >= budget:
                self._settle(
                    state,
                    RunStatus.BUDGET_EXHAUSTED,
                    RunError(RUN_BUDGET_EXHAUSTED, f"the token budget ({budget}) is used up"),
                )

    def _check_rejections(self, state: RunState) -> None:
        """Fail the run when the model's last ``MAX_REJECTED_TURNS`` turns only made rejected calls.

        A rejected call (unknown tool, arguments that are not valid) is answered with an error
        and has no journal entry; a model that keeps making them would otherwise loop forever.
        """
        turns = 0
        last_problem = ""
        index = len(state.history) - 1
        while index >= 0:
            results: list[Message] = []
            while index >= 0 and state.history[index].role == "tool":
                results.append(state.history[index])
                index -= 1
            if index < 0 or state.history[index].role != "assistant" or not results:
                break
            assistant = state.history[index]
            if assistant.run_id != state.run_id or not assistant.tool_calls:
                break
            rejected = all(m.is_error and state.journal_entry(m.tool_call_id or "") is None for m in results)
            if not rejected:
                break
            turns += 1
            last_problem = last_problem or results[0].content
            index -= 1
        if turns >= MAX_REJECTED_TURNS:
            self._settle(
                state,
                RunStatus.FAILED,
                RunError(
                    RUN_REJECTED_CALLS,
                    f"the model made only invalid tool calls in {turns} turns in a row (last: {last_problem[:300]}); "
                    "check the agent's tools and the model",
                ),
            )

    def _with_unique_call_ids(self, state: RunState, reply: ProviderReply) -> ProviderReply:
        """Tool call ids unique within the run (the journal and approvals are keyed by them), and
        text without lone surrogates (so output can be printed, sent and stored).

        Some endpoints reuse ids such as ``call_0`` on every turn; a reused id would find the
        earlier call's journal entry and get its old result instead of running. Ids are
        renamed when the reply carries no native items (they would repeat the old id); a
        reply with native items and a reused id is refused as malformed.
        """
        seen = {c.call_id for m in state.history if m.run_id == state.run_id for c in m.tool_calls}
        seen.update(e.call_id for e in state.journal)
        seen.update(a.call_id for a in state.approvals)
        calls: list[ToolCall] = []
        renamed = False
        for call in reply.tool_calls:
            if clean_text(call.name + call.arguments) != call.name + call.arguments:
                call = replace(call, name=clean_text(call.name), arguments=clean_text(call.arguments))
                renamed = True
            call_id = call.call_id
            if call_id in seen or not call_id:
                if reply.opaque or reply.response_id:
                    raise ProviderResponseError(
                        f"{self.provider.name} sent tool call id {call_id!r} that this run already used; "
                        "the answer cannot be matched to its results"
                    )
                number = 2
                while f"{call_id or 'call'}~{number}" in seen:
                    number += 1
                call_id = f"{call_id or 'call'}~{number}"
                call = replace(call, call_id=call_id)
                renamed = True
            seen.add(call_id)
            calls.append(call)
        text = clean_text(reply.text)
        if renamed or text is not reply.text:
            return replace(reply, text=text, tool_calls=tuple(calls))
        return reply

    # --- model turns -----------------------------------------------------------------------------
    def _ask_model(self, state: RunState) -> tuple[ProviderReply, str]:
        _provider, model = split_model_id(state.config.model, state.config.provider)
        request = ProviderRequest(
            system=self.agent.system_prompt,
            history=state.history,
            tools=tuple(ToolSpec(t.name, t.description, t.parameters) for t in self.agent.tools),
            model=model,
            max_output_tokens=state.config.max_output_tokens,
            run_id=state.run_id,
        )
        messages: queue.Queue[tuple[str, Any]] = queue.Queue()
        inner = CancelToken()

        def call_provider() -> None:
            try:
                reply = self.provider.complete(request, lambda text: messages.put(("text", text)), inner)
                messages.put(("done", reply))
            except BaseException as exc:  # handed to the run's thread
                messages.put(("error", exc))

        threading.Thread(target=call_provider, name=f"nexa-provider-{state.run_id}", daemon=True).start()
        streamed: list[str] = []
        try:
            while True:
                self._check_interrupts(state, streamed)
                try:
                    kind, value = messages.get(timeout=PROVIDER_POLL_SECONDS)
                except queue.Empty:
                    continue
                if kind == "text":
                    value = clean_text(value)
                    streamed.append(value)
                    if self._on_text is not None:
                        self._on_text(value)
                    self.emit(TextDelta(state.run_id, value))
                elif kind == "done":
                    return value, "".join(streamed)
                elif isinstance(value, ProviderCancelled):
                    self._settle(
                        state.evolve(output="".join(streamed)),
                        RunStatus.CANCELLED,
                        RunError(RUN_CANCELLED, "cancelled by the user"),
                    )
                else:
                    raise value
        finally:
            inner.cancel("run stopped")

    # --- tool calls ----------------------------------------------------------------------------------
    def _answer(
        self, state: RunState, call: ToolCall, content: str, is_error: bool, artifact: str | None = None
    ) -> RunState:
        message = Message(
            role="tool",
            content=content,
            tool_call_id=call.call_id,
            tool_name=call.name,
            is_error=is_error,
            artifact=artifact,
            run_id=state.run_id,
        )
        return state.evolve(history=(*state.history, message))

    def _handle_call(self, state: RunState, call: ToolCall) -> RunState:
        entry = state.journal_entry(call.call_id)
        if entry is not None:
            if entry.status == "started":
                raise UnknownToolOutcomeError(f"call {call.call_id} has an unknown outcome", (call.call_id,))
            # already executed, denied or recovered: its saved result answers it; never run it again
            answered = self._answer(
                state, call, entry.result or entry.status, entry.status != "completed", entry.artifact
            )
            return self.save(answered)
        tool = self.agent.tool_named(call.name)
        if tool is None:
            known = ", ".join(t.name for t in self.agent.tools) or "none"
            return self.save(self._answer(state, call, f"Error: no tool named {call.name!r} (tools: {known}).", True))
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            return self.save(
                self._answer(state, call, f"Error: the arguments of {call.name} are not a JSON object.", True)
            )
        problem = tool.argument_problem(arguments)
        if problem is not None:
            expected = json.dumps(dict(tool.parameters), ensure_ascii=False)[:600]
            return self.save(
                self._answer(
                    state,
                    call,
                    f"Error: invalid arguments for {call.name}: {problem}; it was not executed. "
                    f"Its parameters: {expected}",
                    True,
                )
            )
        if tool.approval_required:
            approval = state.approval_for(call.call_id)
            if approval is None or approval.status == "pending":
                if approval is None:
                    approval = Approval(call.call_id, call.name, call.arguments, "pending", time.time())
                    state = state.with_approval(approval)
                self.emit(ApprovalNeeded(state.run_id, call.call_id, call.name, call.arguments))
                self._settle(state, RunStatus.WAITING_APPROVAL, None)
            if approval.status == "denied":
                who = approval.decided_by or "user"
                text = (
                    f"Tool call to {call.name} was denied by {who}"
                    + (f": {approval.reason}" if approval.reason else "")
                    + "; it was not executed."
                )
                now = time.time()
                state = state.with_journal(
                    JournalEntry(call.call_id, call.name, call.arguments, "not_executed", now, now, text)
                )
                return self.save(self._answer(state, call, text, True))
        calls_budget = state.config.tool_call_budget
        if calls_budget is not None and state.usage.tool_calls >= calls_budget:
            self._settle(
                state,
                RunStatus.BUDGET_EXHAUSTED,
                RunError(RUN_BUDGET_EXHAUSTED, f"the tool-call budget ({calls_budget}) is used up"),
            )
        started = JournalEntry(call.call_id, call.name, call.arguments, "started", time.time())
        state = self.save(state.with_journal(started).evolve(usage=state.usage.plus(tool_calls=1)))
        self.emit(ToolCallStarted(state.run_id, call.call_id, call.name))
        failed = False
        try:
            result = tool.call(arguments)
        except Exception as exc:  # the tool's own failure: recorded, then the run fails
            failed = True
            result = f"Tool {call.name} failed: {type(exc).__name__}: {exc}"
        artifact: str | None = None
        content = result
        threshold = state.config.artifact_threshold or DEFAULT_ARTIFACT_THRESHOLD
        if len(result.encode("utf-8")) > threshold and state.config.artifact_directory:
            artifact = write_artifact(state.config.artifact_directory, state.run_id, call.call_id, result)
            content = artifact_reference(artifact, result)
        finished = replace(
            started,
            status="failed" if failed else "completed",
            finished_at=time.time(),
            result=content,
            artifact=artifact,
        )
        state = self.save(self._answer(state.with_journal(finished), call, content, failed, artifact))
        self.emit(ToolCallFinished(state.run_id, call.call_id, call.name, finished.status, content[:200]))
        if failed:
            self._settle(state, RunStatus.FAILED, RunError(TOOL_FAILED, result))
        return state
