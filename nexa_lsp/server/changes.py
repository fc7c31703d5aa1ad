"""A count of the changes that may alter diagnostics, that held requests wait on (event loop only)."""

from __future__ import annotations

import asyncio


class DiagnosticChanges:
    """Bumped on every edit, file, settings or runs change; :meth:`wait` returns after the next
    one (or after :meth:`wake`, for a waiter that should look again without a change)."""

    def __init__(self) -> None:
        self.count = 0
        self._event: asyncio.Event | None = None

    def note(self) -> None:
        self.count += 1
        self.wake()

    def wake(self) -> None:
        if self._event is not None:
            self._event.set()
            self._event = None

    async def wait(self) -> None:
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()
