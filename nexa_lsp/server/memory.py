"""Garbage collection off the typing path.

The parse trees of a large document are millions of objects; a full collection
of them takes 100+ ms and, left to Python's thresholds, lands in the middle of
edits. After each check the objects alive are frozen (``gc.freeze``, cheap) so
routine collections skip them; objects freed by reference counting (parse trees
are acyclic) still go at once, and when the editor has been quiet for a moment
the server unfreezes, collects everything, and freezes again.
"""

from __future__ import annotations

import asyncio
import gc

IDLE_SECONDS = 2.0


class IdleCollector:
    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self._handle: asyncio.TimerHandle | None = None
        self.collections = 0

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

    def collect(self) -> None:
        self._handle = None
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.collections += 1
