"""Several processes on one store at once: no lost or torn writes, no "database is locked".

Writers start together (they wait for a start file), each saves its own 500 runs and also
keeps rewriting a few runs that every writer shares; a reader lists runs the whole time.
Afterwards every run of every writer is there, and every stored state is whole: its
output is the digest of its own input, so a torn or mixed row would show. A live process
driving a run keeps its ownership: another process cannot resume it (no double execution).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.control import recover_tool_call
from nexa_lsp.runtime.errors import RunInUseError, UnknownToolOutcomeError
from tests.robustness.crash_agent import Effects, build_agent
from tests.robustness.helpers import budget, subprocess_env, wait_for_file

CRASH_CHILD = [sys.executable, "-m", "tests.robustness.crash_agent"]
WRITER = textwrap.dedent(
    """
    import hashlib, sys, time
    from pathlib import Path
    from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
    from nexa_lsp.runtime.errors import RunChangedError
    from nexa_lsp.runtime.run_state import (AgentFingerprint, RunConfig, RunMetadata, RunState, RunStatus)

    path, tag, count, shared, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
    fingerprint = AgentFingerprint("Writer", "d", "p", "t", (), None, "scripted", "/w")
    store = SQLiteCheckpointStore(path)
    while not go.exists():
        time.sleep(0.001)

    def state(run_id, text, status):
        return RunState(
            run_id=run_id, agent="Writer", status=status, input=text, config=RunConfig(),
            fingerprint=fingerprint, metadata=RunMetadata(session_id="ses_" + tag),
            started_at=time.time(), deadline=None, output=hashlib.sha256(text.encode()).hexdigest(),
        )

    shared_saves = refused = 0
    for index in range(count):
        text = f"{tag} {index} " + "字" * (index % 200)
        store.save(state(f"run_{tag}_{index}", text, RunStatus.COMPLETED))
        if index % 10 == 0:
            # everyone rewrites the same few runs: read, change, save (compare-and-swap);
            # a save based on a stale read is refused and retried
            run_id = f"run_shared_{(index // 10) % shared}"
            while True:
                current = store.get(run_id)
                new = state(run_id, text + " shared", RunStatus.COMPLETED)
                try:
                    store.save(new if current is None else new.at_revision(current.revision))
                    shared_saves += 1
                    break
                except RunChangedError:
                    refused += 1
    print("saved", count, shared_saves, refused)
    """
)

READER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
    path, go, stop = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    while not go.exists():
        time.sleep(0.001)
    reads = 0
    while not stop.exists():
        with SQLiteCheckpointStore(path) as store:  # a new connection each time, like a CLI call
            store.list_runs(limit=50)
            store.count()
        reads += 1
    print("reads", reads)
    """
)


def test_processes_saving_500_states_each_at_once_lose_nothing(tmp_path: Path) -> None:
    store_path = tmp_path / "runs.sqlite3"
    go, stop = tmp_path / "go", tmp_path / "stop"
    writers = budget(ci=3, long=6)
    count = budget(ci=500, long=3000)
    shared = 5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store_path), f"w{n}", str(count), str(shared), str(go)],
            env=subprocess_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(writers)
    ]
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(store_path), str(go), str(stop)],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)  # every process imported and opened the store
    go.touch()
    outputs = [proc.communicate(timeout=120) for proc in procs]
    stop.touch()
    reader_out, reader_err = reader.communicate(timeout=60)
    shared_saves = 0
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err and out.startswith(f"saved {count} ")
        shared_saves += int(out.split()[2])
    assert reader.returncode == 0 and "locked" not in reader_err, reader_err
    assert int(reader_out.split()[1]) > 0

    with SQLiteCheckpointStore(store_path) as store:
        states = store.list_states()
        assert store.unreadable == {}
        assert store.count() == writers * count + shared
        by_id = {s.run_id: s for s in states}
        for n in range(writers):
            for index in range(count):
                assert f"run_w{n}_{index}" in by_id, f"lost run_w{n}_{index}"
        for state in states:
            assert state.output == hashlib.sha256(state.input.encode()).hexdigest(), f"torn {state.run_id}"
        # no lost update: every accepted shared save made its run exactly one revision newer
        assert sum(by_id[f"run_shared_{n}"].revision for n in range(shared)) == shared_saves
    # the writes really were concurrent: in insertion order the writers alternate many times
    raw = sqlite3.connect(store_path)
    order = [row[0].split("_")[1] for row in raw.execute("SELECT run_id FROM runs ORDER BY rowid") if "_w" in row[0]]
    raw.close()
    switches = sum(1 for a, b in itertools.pairwise(order) if a != b)
    assert switches >= 20, f"the writers barely overlapped ({switches} switches)"


def test_a_run_driven_by_a_live_process_cannot_be_resumed_elsewhere(tmp_path: Path) -> None:
    """Two drivers of one run would run its tools twice: the store refuses the second one."""
    store_path, effects_path, log = tmp_path / "runs.sqlite3", tmp_path / "effects.txt", tmp_path / "saves.log"
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.robustness.crash_agent",
            str(store_path),
            str(effects_path),
            str(log),
            "tool_started",
        ],
        env=subprocess_env(),
        cwd=Path.cwd(),
        stderr=subprocess.PIPE,
    )
    effects = Effects(effects_path)
    try:
        wait_for_file(Path(f"{effects_path}.reached"))
        with SQLiteCheckpointStore(store_path) as store:
            (running,) = store.list_states()
            assert not store.is_interrupted(running.run_id), "its process is alive: it is running, not interrupted"
            owner = store.owner(running.run_id)
            assert owner is not None and owner.pid == child.pid
            # the journal says deploy started: resume is refused anyway; recover it wrongly as
            # "not executed" (a hasty operator) and the store still refuses a second driver
            with pytest.raises(UnknownToolOutcomeError):
                build_agent(effects).execute(state=running)
            hasty = recover_tool_call(running, "call_1", "not_executed", by="hasty")
            with pytest.raises(RunInUseError) as refused:
                build_agent(effects).execute(state=hasty, save=store.save)
            assert refused.value.code == "NXR024" and str(child.pid) in str(refused.value)
            assert store.load(running.run_id) == running, "the refused driver changed nothing"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=20)
    assert effects.lines() == ["deploy v2"], "deploy ran once, in the child only"
    with SQLiteCheckpointStore(store_path) as store:
        (killed,) = store.list_states()
        assert store.is_interrupted(killed.run_id)
        recovered = recover_tool_call(killed, "call_1", "completed", result="deployed v2", by="oncall")
        finished = build_agent(effects).execute(state=recovered, save=store.save)
        assert finished.success
    assert sorted(effects.lines()) == ["deploy v2", "notify ops v2"]
