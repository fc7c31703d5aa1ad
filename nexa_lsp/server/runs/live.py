"""The run driver: each editor run executes on its own thread; the event loop gets its saves.

``RunDriver.start`` calls a runtime entry (``NexaAgent.execute`` / ``continue_run``) on a
thread with the runtime's ``save``, ``on_event`` and ``cancel`` hooks. Every save goes to
the store from that thread (with the run's keys redacted) and is then posted to the event
loop, which keeps the table of runs executing here and tells a :class:`RunObserver`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.errors import NexaRuntimeError
from nexa_lsp.runtime.events import (
    ApprovalNeeded,
    CancelToken,
    RunEvent,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from nexa_lsp.runtime.redaction import redact_state
from nexa_lsp.runtime.run_state import RunState, RunStatus
from nexa_lsp.server.runs.arguments import Refused


@dataclass(eq=False)
class LiveRun:
    """A run this server is driving on a background thread."""

    agent: str
    store: SQLiteCheckpointStore
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

    @property
    def done(self) -> bool:
        return self.finished is not None and self.finished.done()


class RunObserver(Protocol):
    """What the driver tells the rest of the feature (always on the event loop)."""

    def run_started(self, live: LiveRun, state: RunState) -> None: ...

    def run_resumed(self, state: RunState) -> None: ...

    def run_progressed(self, live: LiveRun) -> None: ...

    def run_finished(self, live: LiveRun, final: RunState) -> None: ...

    def run_broke(self, live: LiveRun, exc: BaseException) -> None: ...


class RunDriver:
    """The runs executing in this server, by run id, and the commands about to drive one.

    A run leaves ``live`` as soon as it stops here (settled, waiting for approval, or broken)."""

    def __init__(self, observer: RunObserver) -> None:
        self.observer = observer
        self.live: dict[str, LiveRun] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self._starting: set[LiveRun] = set()
        self._busy: set[str] = set()  # run ids a command is about to drive

    # --- who drives what -----------------------------------------------------------------------

    def live_ids(self) -> set[str]:
        """Ids of the runs executing here now."""
        return {run_id for run_id, live in self.live.items() if not live.done}

    def executing(self, run_id: str) -> LiveRun | None:
        live = self.live.get(run_id)
        return live if live is not None and live.finished is not None and not live.done else None

    def is_busy(self, run_id: str) -> bool:
        return run_id in self._busy

    def not_live(self, run_id: str, verb: str) -> None:
        if run_id in self.live_ids():
            raise Refused(f"run {run_id} is running in this editor now; wait for it, or cancel it, before you {verb}")
        if run_id in self._busy:
            raise Refused(f"run {run_id} is being started by another command right now; try again in a moment")

    @contextlib.contextmanager
    def holding(self, run_id: str, verb: str) -> Iterator[None]:
        """Keep other commands off ``run_id`` from its check until it runs here (or is refused):
        two quick Resume clicks must never drive one run twice."""
        self.not_live(run_id, verb)
        self._busy.add(run_id)
        try:
            yield
        finally:
            self._busy.discard(run_id)

    # --- running ----------------------------------------------------------------------------------

    async def start(self, live: LiveRun, entry: Callable[..., RunState]) -> RunState:
        """Drive ``entry`` on a thread; answer once the run's first state is saved.

        A refusal raised by the runtime before that first save becomes ``Refused``."""
        loop = asyncio.get_running_loop()
        self.loop = loop
        live.started = loop.create_future()
        live.finished = loop.create_future()
        self._starting.add(live)

        def save(state: RunState) -> None:
            state = redact_state(state, live.secrets)  # a provider may echo its key in an error or reply
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
            self._post(self._on_finished, live, redact_state(final, live.secrets))

        live.thread = threading.Thread(target=drive, name=f"nexa-run-{live.agent}", daemon=True)
        live.thread.start()
        try:
            return await asyncio.shield(live.started)
        except NexaRuntimeError as exc:
            raise Refused(str(exc)) from None
        except (ValueError, OSError) as exc:
            raise Refused(f"{type(exc).__name__}: {exc}") from None

    def _post(self, callback: Callable[..., None], *args: Any) -> None:
        loop = self.loop
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
            self.observer.run_started(live, state)
        elif previous is not None and previous.status is not state.status and state.status is RunStatus.RUNNING:
            self.observer.run_resumed(state)
        # a run that stops (settled or waiting for approval) is announced by _on_finished
        self.observer.run_progressed(live)

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
        self.observer.run_progressed(live)

    def _on_failed(self, live: LiveRun, exc: BaseException) -> None:
        self._starting.discard(live)
        if live.started is not None and not live.started.done():
            live.started.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
        if live.finished is not None and not live.finished.done():
            live.finished.set_exception(RuntimeError(str(exc)))
            live.finished.exception()  # retrieved: nobody may await it
        if live.run_id is not None:  # a bug after the run started: say so, keep the store as it is
            self.live.pop(live.run_id, None)
            self.observer.run_broke(live, exc)

    def _on_finished(self, live: LiveRun, final: RunState) -> None:
        if live.run_id is None:  # never saved (no save callback ran): treat as started now
            self._on_saved(live, final)
        live.state = final
        live.streamed.clear()
        live.activity = ""
        if live.finished is not None and not live.finished.done():
            live.finished.set_result(final)
        # it stopped here: from now on the store alone says what the run is (another process
        # may resume, approve or cancel it next)
        if live.run_id is not None and self.live.get(live.run_id) is live:
            del self.live[live.run_id]
        self.observer.run_finished(live, final)

    # --- shutdown -------------------------------------------------------------------------------

    def stop_all(self, wait: float = 5.0) -> None:
        """Cancel every live run (saved as ``cancelled``) and wait a little for them to stop."""
        runs = list(self.live.values()) + list(self._starting)
        for live in runs:
            live.cancel.cancel("the language server stopped")
        deadline = time.monotonic() + wait
        for live in runs:
            if live.thread is not None:
                live.thread.join(max(0.0, deadline - time.monotonic()))
