"""Compare-and-swap saves and claims: a stale save writes nothing, only one resume wins."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from runtime_helpers import call, counting_tool, scripted, subprocess_env

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.control import approve, cancel_run
from nexa_lsp.runtime.errors import RunChangedError, RunInUseError
from nexa_lsp.runtime.run_state import RunState, RunStatus


def waiting(store: SQLiteCheckpointStore) -> tuple[NexaAgent, RunState, list[dict[str, object]]]:
    mail, counter = counting_tool(approval_required=True)
    agent = NexaAgent("Mailer", prompt="p", tools=[mail])
    provider = scripted({"text": "发送", "tool_calls": [call("send_mail", "call_1", to="李雷")]}, {"text": "已发送"})
    state = agent.execute("发邮件", save=store.save, provider=provider)
    assert state.status is RunStatus.WAITING_APPROVAL
    agent.provider = provider
    return agent, state, counter.calls


def row(store: SQLiteCheckpointStore, run_id: str) -> tuple[object, ...]:
    raw = sqlite3.connect(store.path)
    found: tuple[object, ...] = raw.execute(
        "SELECT revision, status, state FROM runs WHERE run_id = ?", (run_id,)
    ).fetchone()
    raw.close()
    return found


def test_states_carry_the_revision_they_were_saved_at(store: SQLiteCheckpointStore) -> None:
    _agent, state, _calls = waiting(store)
    loaded = store.load(state.run_id)
    assert loaded.revision == state.revision == row(store, state.run_id)[0] == 3
    assert "revision" not in loaded.to_dict(), "store bookkeeping, not part of the JSON"
    again = store.save(loaded.evolve(output="x"))
    assert again.revision == 4 and store.load(state.run_id).revision == 4


def test_a_stale_save_is_refused_and_writes_nothing(store: SQLiteCheckpointStore) -> None:
    _agent, state, _calls = waiting(store)
    first = store.load(state.run_id)
    second = store.load(state.run_id)
    store.save(approve(first, "call_1", by="甲"))
    before = row(store, state.run_id)
    with pytest.raises(RunChangedError) as refused:
        store.save(approve(second, "call_1", by="乙"))
    assert refused.value.code == "NXR027" and "revision 3" in str(refused.value) and "revision 4" in str(refused.value)
    assert row(store, state.run_id) == before
    assert store.load(state.run_id).approvals[0].decided_by == "甲"


def test_repeating_a_save_writes_nothing_more(store: SQLiteCheckpointStore) -> None:
    _agent, state, _calls = waiting(store)
    decided = approve(store.load(state.run_id), "call_1")
    saved = store.save(decided)
    before = row(store, state.run_id)
    assert store.save(decided).revision == saved.revision == 4
    assert row(store, state.run_id) == before


def test_resuming_the_object_that_was_saved_works(store: SQLiteCheckpointStore) -> None:
    """The language server's pattern: save the decided state, then resume that same object."""
    agent, state, calls = waiting(store)
    decided = approve(store.load(state.run_id), "call_1")
    store.save(decided)  # the returned state (one revision further) is not used
    final = agent.execute(state=decided, save=store.save)
    assert final.success and len(calls) == 1
    assert final.revision == store.load(state.run_id).revision


def test_a_run_settled_meanwhile_is_never_taken_back(store: SQLiteCheckpointStore) -> None:
    """Regression (found by the claim race): a claim based on the revision before another
    process settled the run only by its status must not reopen it."""
    agent, state, calls = waiting(store)
    approved = store.save(approve(store.load(state.run_id), "call_1"))
    final = agent.execute(state=approved, save=store.save)
    assert final.success
    before_settle = final.at_revision(final.revision - 1).evolve(status=RunStatus.RUNNING)
    with pytest.raises(RunChangedError):
        store.save(before_settle)
    assert store.load(state.run_id).status is RunStatus.COMPLETED and len(calls) == 1


def test_only_one_of_two_resumes_of_a_waiting_run_wins(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    with SQLiteCheckpointStore(path) as setup:
        agent, state, calls = waiting(setup)
        approved = setup.save(approve(setup.load(state.run_id), "call_1"))
    go = threading.Barrier(2)
    results: list[object] = []

    def resume() -> None:
        with SQLiteCheckpointStore(path) as store:  # each its own connections, like two processes
            go.wait()
            try:
                results.append(agent.execute(state=approved, save=store.save))
            except (RunChangedError, RunInUseError) as exc:
                results.append(exc)

    threads = [threading.Thread(target=resume) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert sorted(type(r).__name__ for r in results) == ["RunChangedError", "RunState"]
    with SQLiteCheckpointStore(path) as store:
        assert store.load(state.run_id).success


def test_a_claim_held_by_a_dead_process_can_be_taken_over(store: SQLiteCheckpointStore) -> None:
    agent, state, calls = waiting(store)
    claimed = store.save(approve(store.load(state.run_id), "call_1").evolve(status=RunStatus.RUNNING))
    dead = subprocess.run(
        [sys.executable, "-c", "from nexa_lsp.runtime.owner import current_owner; print(current_owner())"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    raw = sqlite3.connect(store.path)
    raw.execute("UPDATE runs SET owner = ? WHERE run_id = ?", (dead, state.run_id))
    raw.commit()
    raw.close()
    assert store.is_interrupted(state.run_id)
    store.check_current(claimed)  # nobody drives it: free
    final = agent.execute(state=claimed, save=store.save)
    assert final.success and len(calls) == 1


def test_a_live_claim_refuses_every_other_process(store: SQLiteCheckpointStore, tmp_path: Path) -> None:
    """While another process drives a run, even a cancel from here is refused (NXR024)."""
    _agent, state, _calls = waiting(store)
    approved = store.save(approve(store.load(state.run_id), "call_1"))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore\n"
            "store = SQLiteCheckpointStore(sys.argv[1])\n"
            "state = store.load(sys.argv[2])\n"
            "from nexa_lsp.runtime.run_state import RunStatus\n"
            "store.save(state.evolve(status=RunStatus.RUNNING))\n"
            "print('claimed', flush=True)\n"
            "time.sleep(30)\n",
            str(store.path),
            state.run_id,
        ],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "claimed"
        current = store.load(state.run_id)
        with pytest.raises(RunInUseError):
            store.check_current(current)
        with pytest.raises(RunInUseError) as refused:
            store.save(cancel_run(current))
        assert str(holder.pid) in str(refused.value)
        with pytest.raises(RunInUseError):
            store.save(approved.evolve(status=RunStatus.RUNNING))  # a second claim
    finally:
        holder.kill()
        holder.wait(timeout=20)
