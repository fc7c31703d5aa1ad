"""What every part of the run loop shares: the run's provider, tools and callbacks."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from nexa_lsp.runtime.errors import RUN_BUDGET_EXHAUSTED, RUN_CANCELLED, RUN_TIMED_OUT
from nexa_lsp.runtime.events import CancelLike, CancelToken, EventHandler, RunEvent, TextHandler, is_cancelled
from nexa_lsp.runtime.providers.base import Provider
from nexa_lsp.runtime.run_state import RunError, RunState, RunStatus
from nexa_lsp.runtime.tools import Tool

SaveCallback = Callable[[RunState], object]
"""Called with every state worth keeping; ``SQLiteCheckpointStore.save`` fits. It must save
each state it is given (or none): the run counts one store revision per save."""


class Stop(Exception):
    """The run reached a state where it stops (settled, or waiting for approval)."""

    def __init__(self, state: RunState) -> None:
        super().__init__(state.status.value)
        self.state = state


@dataclass
class RunContext:
    """One run being driven: what the model sees (system prompt, tools), who answers
    (provider), and where states, events and text go."""

    system_prompt: str
    tools: tuple[Tool, ...]
    provider: Provider
    save_callback: SaveCallback | None = None
    on_event: EventHandler | None = None
    on_text: TextHandler | None = None
    cancel: CancelLike | None = None
    latest: RunState | None = None
    """The last state saved: where a run that fails unexpectedly continues from."""

    def tool_named(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def save(self, state: RunState) -> RunState:
        """Hand ``state`` to the save callback and return it as saved: based on the next
        revision, since every accepted save makes the stored run one revision newer."""
        if self.save_callback is not None:
            self.save_callback(state)
            state = state.at_revision(state.revision + 1)
        self.latest = state
        return state

    def emit(self, event: RunEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def settle(self, state: RunState, status: RunStatus, error: RunError | None) -> RunState:
        """Save ``state`` with ``status`` and return it (the caller stops driving)."""
        return self.save(state.evolve(status=status, error=error))

    def stop(self, state: RunState, status: RunStatus, error: RunError | None) -> Stop:
        """The ``Stop`` to raise after settling ``state`` with ``status``."""
        return Stop(self.settle(state, status, error))

    def check_budget(self, state: RunState, budget: int | None, used: int, what: str) -> None:
        """Stop the run (budget exhausted) when ``used`` reached the ``what`` budget (if any)."""
        if budget is not None and used >= budget:
            raise self.stop(
                state,
                RunStatus.BUDGET_EXHAUSTED,
                RunError(RUN_BUDGET_EXHAUSTED, f"the {what} budget ({budget}) is used up"),
            )

    def check_interrupts(self, state: RunState, partial_output: list[str] | None = None) -> None:
        """Stop the run (cancelled or timed out) when its cancel token is set or its deadline passed."""
        cancelled = is_cancelled(self.cancel)
        late = state.deadline is not None and time.time() >= state.deadline
        if (cancelled or late) and partial_output:
            state = state.evolve(output="".join(partial_output))
        if cancelled:
            reason = (self.cancel.reason if isinstance(self.cancel, CancelToken) else None) or "cancelled by the user"
            raise self.stop(state, RunStatus.CANCELLED, RunError(RUN_CANCELLED, reason))
        if late:
            timeout = state.config.timeout or 0
            raise self.stop(
                state,
                RunStatus.TIMED_OUT,
                RunError(RUN_TIMED_OUT, f"the run's deadline ({timeout:g}s from its start) passed"),
            )
