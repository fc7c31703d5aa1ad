"""SIGKILL crash matrix: a run in a child process is killed at each point of a step.

After each kill the store is reopened and checked: the file is intact, nothing that was
acknowledged as saved is lost (and a save in flight is either whole or absent), the run's
status is truthful (``running``, detected as interrupted because its process is gone),
unknown tool outcomes are detected exactly where a tool may have run without its end
being recorded, continuation and resume follow the rules (NXR001/NXR002), and after the
operator's recovery the run finishes with every side effect having happened exactly once.
A second test kills a child that runs tasks back to back at random moments.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.continuation import valid_actions
from nexa_lsp.runtime.control import cancel_run, recover_tool_call
from nexa_lsp.runtime.errors import RunNotSettledError, UnknownToolOutcomeError
from nexa_lsp.runtime.run_state import RunState, RunStatus
from tests.robustness.crash_agent import POINTS, UNKNOWN_AFTER, Effects, build_agent, digest
from tests.robustness.helpers import budget, subprocess_env, wait_for_file

CHILD = [sys.executable, "-m", "tests.robustness.crash_agent"]


def start_child(tmp_path: Path, point: str) -> tuple[subprocess.Popen[bytes], Path, Path, Path]:
    store, effects, log = tmp_path / "runs.sqlite3", tmp_path / "effects.txt", tmp_path / "saves.log"
    child = subprocess.Popen(
        [*CHILD, str(store), str(effects), str(log), point],
        env=subprocess_env(),
        cwd=Path.cwd(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return child, store, effects, log


def kill(child: subprocess.Popen[bytes]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=20)
    assert child.returncode == -signal.SIGKILL


def acknowledged(log: Path) -> dict[str, tuple[str | None, str | None]]:
    """Per run: the digest of the last acknowledged save, and of a save begun after it (in flight)."""
    runs: dict[str, tuple[str | None, str | None]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        kind, run_id, value = line.split()
        last, _pending = runs.get(run_id, (None, None))
        runs[run_id] = (value, None) if kind == "A" else (last, value)
    return runs


def stored_texts(store: Path) -> dict[str, str]:
    raw = sqlite3.connect(store)
    try:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return {run_id: text for run_id, text in raw.execute("SELECT run_id, state FROM runs")}
    finally:
        raw.close()


def check_nothing_saved_is_lost(store: Path, log: Path) -> dict[str, str]:
    """Every acknowledged save is in the store (or the whole save that was in flight after it)."""
    texts = stored_texts(store)
    for run_id, (last, pending) in acknowledged(log).items():
        if last is None and run_id not in texts:
            continue  # its first save was in flight when the process died: not acknowledged, not there
        assert run_id in texts, f"run {run_id} was acknowledged as saved but is missing"
        allowed = {last, pending} - {None}
        assert digest(texts[run_id]) in allowed, (
            f"run {run_id}: the stored state is neither the acknowledged one nor whole"
        )
    return texts


def recover_from_effects(state: RunState, effects: Effects) -> RunState:
    """What an operator does: look at the outside world, then record what really happened."""
    lines = effects.lines()
    for entry in state.unknown_outcomes:
        version = state.input.split()[1]
        effect = f"deploy {version}" if entry.tool == "deploy" else f"notify ops {version}"
        if effect in lines:
            result = f"deployed {version}" if entry.tool == "deploy" else "told ops"
            state = recover_tool_call(state, entry.call_id, "completed", result=result, by="oncall")
        else:
            state = recover_tool_call(state, entry.call_id, "not_executed", by="oncall")
    return state


@pytest.mark.parametrize("point", POINTS)
def test_sigkill_at_each_point_of_a_step(tmp_path: Path, point: str) -> None:
    child, store_path, effects_path, log = start_child(tmp_path, point)
    marker = Path(f"{effects_path}.reached")
    try:
        reached = wait_for_file(marker, what=f"the child reaching {point}")
        assert reached.startswith(point), reached
        kill(child)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    effects = Effects(effects_path)
    texts = check_nothing_saved_is_lost(store_path, log)
    (run_id,) = texts
    last, pending = acknowledged(log)[run_id]
    if point in ("save_insert", "save_commit", "final_save"):
        assert pending is not None and digest(texts[run_id]) == last, "a save killed before COMMIT left no trace"

    with SQLiteCheckpointStore(store_path) as store:
        killed = store.load(run_id)
        # truthful status: the run did not settle, and no process drives it any more
        assert killed.status is RunStatus.RUNNING and killed.error is None
        assert store.is_interrupted(run_id) and store.interrupted_runs() == [run_id]
        # unknown outcomes exactly where a tool may have run without its end being recorded
        expected_unknown = UNKNOWN_AFTER.get(point, ())
        assert tuple(e.call_id for e in killed.unknown_outcomes) == expected_unknown
        for entry in killed.journal:
            effect_seen = any(line.startswith(entry.tool) for line in effects.lines())
            if entry.status == "completed":
                assert effect_seen, f"{entry.call_id} is recorded as completed but its effect never happened"
        assert len(effects.lines()) == len(set(effects.lines())), "a side effect happened twice"

        # continuation rules
        agent = build_agent(effects)
        with pytest.raises(RunNotSettledError if not expected_unknown else UnknownToolOutcomeError):
            agent.continue_run(killed, "Anything else?")
        if expected_unknown:
            assert valid_actions(killed) == ["cancel", "recover", "show"]
            with pytest.raises(UnknownToolOutcomeError):
                agent.execute(state=killed)
            # cancelling does not make an unknown outcome go away
            with pytest.raises(UnknownToolOutcomeError):
                agent.continue_run(cancel_run(killed), "Anything else?")
            killed = recover_from_effects(killed, effects)
            store.save(killed)
        else:
            assert valid_actions(killed) == ["resume", "cancel", "show"]

        finished = agent.execute(state=store.load(run_id), save=store.save)
        assert finished.success and finished.run_id == run_id, finished.error
        assert finished.output == "Deployed v2 and told ops."
        assert not store.is_interrupted(run_id)
        following = agent.continue_run(store.load(run_id), "Anything else?", save=store.save)
        assert following.success and following.parent_run_id == run_id

    # exactly once, whatever happened
    assert sorted(effects.lines()) == ["deploy v2", "notify ops v2"]


def test_sigkill_at_random_moments_of_back_to_back_runs(tmp_path: Path) -> None:
    """Kill a child that runs tasks back to back, many times; every invariant holds after each kill."""
    rng = random.Random(8)
    effects = Effects(tmp_path / "effects.txt")
    store_path, log = tmp_path / "runs.sqlite3", tmp_path / "saves.log"
    next_task = 0
    kills = budget(ci=12, long=200)
    for _ in range(kills):
        child = subprocess.Popen(
            [*CHILD, str(store_path), str(effects.path), str(log), f"random:{next_task}"],
            env=subprocess_env(),
            cwd=Path.cwd(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        # the child needs ~0.3 s to start; kill it somewhere in the first few runs
        time.sleep(rng.uniform(0.35, 0.9))
        kill(child)
        texts = check_nothing_saved_is_lost(store_path, log) if log.exists() else {}
        with SQLiteCheckpointStore(store_path) as store:
            states = store.list_states()
            assert {s.run_id for s in states} == set(texts)
            for state in states:
                assert state.status in (RunStatus.RUNNING, RunStatus.COMPLETED), state.status
                if state.status is RunStatus.RUNNING:
                    assert store.is_interrupted(state.run_id)
                version = state.input.split()[1]
                for entry in state.journal:
                    effect = f"deploy {version}" if entry.tool == "deploy" else f"notify ops {version}"
                    if entry.status == "completed":
                        assert effect in effects.lines()
                # write-ahead: an effect without any journal entry would be a lost side effect
                for tool_name, effect in (("deploy", f"deploy {version}"), ("notify", f"notify ops {version}")):
                    if effect in effects.lines():
                        assert any(e.tool == tool_name for e in state.journal), f"{effect} happened unrecorded"
        next_task += 50
    assert len(effects.lines()) == len(set(effects.lines())), "a side effect happened twice"

    # finish every interrupted run: recover what is unknown, resume; nothing runs twice
    with SQLiteCheckpointStore(store_path) as store:
        interrupted = store.interrupted_runs()
        unknown = sum(len(store.load(run_id).unknown_outcomes) for run_id in interrupted)
        for run_id in interrupted:
            state = recover_from_effects(store.load(run_id), effects)
            version = state.input.split()[1]
            agent = build_agent(effects, version)
            finished = agent.execute(state=state, save=store.save)
            assert finished.success, finished.error
        final = store.list_states()
    assert all(s.status is RunStatus.COMPLETED for s in final)
    lines = effects.lines()
    assert len(lines) == len(set(lines)), "a side effect happened twice"
    # every journal entry tells the truth about the outside world
    for state in final:
        version = state.input.split()[1]
        assert {e.tool for e in state.journal} == {"deploy", "notify"}
        for entry in state.journal:
            effect = f"deploy {version}" if entry.tool == "deploy" else f"notify ops {version}"
            assert entry.status in ("completed", "not_executed"), entry
            assert (effect in lines) == (entry.status == "completed"), (state.run_id, entry)
    assert len(interrupted) >= 1
    print(
        f"\n{kills} kills, {len(final)} runs, {len(interrupted)} interrupted, {unknown} unknown outcomes, "
        f"{len(lines)} side effects, 0 lost, 0 replayed"
    )
