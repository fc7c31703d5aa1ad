"""Typed run events and the cancel token.

Events are delivered to ``on_event`` on the thread that drives the run (the caller of
``execute`` / ``continue_run``), in order, each carrying the run id it belongs to.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    session_id: str
    parent_run_id: str | None
    agent: str
    resumed: bool


@dataclass(frozen=True)
class TextDelta:
    run_id: str
    text: str


@dataclass(frozen=True)
class ToolCallRequested:
    run_id: str
    call_id: str
    tool: str
    arguments: str


@dataclass(frozen=True)
class ApprovalNeeded:
    run_id: str
    call_id: str
    tool: str
    arguments: str


@dataclass(frozen=True)
class ToolCallStarted:
    run_id: str
    call_id: str
    tool: str


@dataclass(frozen=True)
class ToolCallFinished:
    run_id: str
    call_id: str
    tool: str
    status: str
    result_preview: str


@dataclass(frozen=True)
class RunEnded:
    """The run stopped: settled, or paused in ``waiting_approval``."""

    run_id: str
    status: str
    error: str | None


RunEvent: TypeAlias = (
    RunStarted | TextDelta | ToolCallRequested | ApprovalNeeded | ToolCallStarted | ToolCallFinished | RunEnded
)
EventHandler: TypeAlias = Callable[[RunEvent], None]
TextHandler: TypeAlias = Callable[[str], None]


class CancelToken:
    """Set from any thread to stop a run promptly with status ``cancelled``.

    A provider call in flight is abandoned at once; a tool already running finishes first
    so that its outcome is recorded (no unknown outcome is created by cancelling).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: str | None = None

    def cancel(self, reason: str = "cancelled by the user") -> None:
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)


CancelLike: TypeAlias = CancelToken | threading.Event


def is_cancelled(cancel: CancelLike | None) -> bool:
    if cancel is None:
        return False
    if isinstance(cancel, CancelToken):
        return cancel.cancelled
    return cancel.is_set()
