"""The idle collector (``server/memory.py``): no full collection while a worker job runs."""

from __future__ import annotations

import asyncio

import pytest

from nexa_lsp.server.memory import IdleCollector


async def wait_for(predicate: object, seconds: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not predicate():  # type: ignore[operator]
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


@pytest.mark.asyncio
async def test_a_collection_due_during_a_job_waits_for_its_end() -> None:
    collector = IdleCollector(idle_seconds=0.05)
    with collector.busy():
        collector.activity()
        await asyncio.sleep(0.3)  # the collection came due meanwhile
        assert collector.collections == 0
    await wait_for(lambda: collector.collections == 1)


@pytest.mark.asyncio
async def test_without_a_job_it_collects_once_quiet() -> None:
    collector = IdleCollector(idle_seconds=0.05)
    collector.activity()
    await wait_for(lambda: collector.collections == 1)
