"""Garbage collection off the typing path.

The parse trees of a large document are millions of objects; a full collection
of them takes 100+ ms and, left to Python's thresholds, lands in the middle of
edits. After each check the objects alive are frozen (``gc.freeze``, cheap) so
routine collections skip them; objects freed by reference counting (parse trees
are acyclic) still go at once, and when the editor has been quiet for a moment
the server unfreezes, collects everything, and freezes again. Work in worker
threads that builds many objects (a workspace scan) freezes as it goes and holds
the idle collection off until it is done (:meth:`IdleCollector.busy`), so no full
collection stops the event loop in the middle of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator

IDLE_SECONDS = 2.0


class IdleCollector:
    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self._handle: asyncio.TimerHandle | None = None
        self.collections = 0
        self._busy = 0  # worker jobs running that hold the idle collection off
        self._deferred = False  # an idle collection came due while busy

    def activity(self) -> None:
        """Note editor activity: collect once it has been quiet for ``idle_seconds``."""
        if self._handle is not None:
            self._handle.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._handle = loop.call_later(self.idle_seconds, self.collect)

    def settle(self) -> None:
        """Freeze what is alive now (after a check built new parse trees)."""
        gc.freeze()

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """While this runs (around a worker job, entered on the event loop), no idle collection."""
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1
            if not self._busy and self._deferred:
                self._deferred = False
                self.activity()  # counted from the job's end

    def collect(self) -> None:
        self._handle = None
        if self._busy:
            self._deferred = True  # collected once the job is done and it has been quiet again
            return
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.collections += 1
