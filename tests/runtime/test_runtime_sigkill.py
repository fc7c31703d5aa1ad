"""A process killed (SIGKILL) in the middle of a tool call: unknown outcome, refusal, recovery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from runtime_helpers import subprocess_env

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.control import recover_tool_call
from nexa_lsp.runtime.errors import UnknownToolOutcomeError
from nexa_lsp.runtime.run_state import RunStatus

AGENT_MODULE = textwrap.dedent(
    """
    from pathlib import Path
    from nexa_lsp.runtime.agent import NexaAgent
    from nexa_lsp.runtime.providers.scripted import ScriptedProvider
    from nexa_lsp.runtime.tools import tool

    def build(counter: Path, hang: bool) -> NexaAgent:
        def deploy(version: str) -> str:
            runs = int(counter.read_text()) + 1 if counter.exists() else 1
            counter.write_text(str(runs))
            if hang:
                import time
                time.sleep(60)
            return f"deployed {version}"

        script = {
            "replies": [
                {
                    "text": "部署中",
                    "tool_calls": [{"id": "call_1", "name": "deploy", "arguments": {"version": "v2"}}],
                },
                {"text": "部署完成"},
                {"text": "v2 已上线"},
            ]
        }
        return NexaAgent(
            "Ops",
            prompt="Deploy carefully",
            tools=[tool(deploy, parameters={"type": "object", "properties": {"version": {}}})],
            provider=ScriptedProvider(script),
        )
    """
)

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from ops_agent import build
    from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
    store = SQLiteCheckpointStore(sys.argv[2])
    build(Path(sys.argv[3]), hang=True).execute("部署 v2", save=store.save)
    """
)


def wait_for(path: Path, timeout: float = 20.0) -> None:
    """Wait until ``path`` exists and holds text (the tool writes it in two steps)."""
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text(encoding="utf-8").strip()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.02)


def test_sigkill_mid_tool_call_leaves_an_unknown_outcome_that_recovery_resolves(tmp_path: Path) -> None:
    (tmp_path / "ops_agent.py").write_text(AGENT_MODULE, encoding="utf-8")
    store_path = tmp_path / "runs.sqlite3"
    counter = tmp_path / "deploy-count"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path), str(store_path), str(counter)],
        env=subprocess_env(),
        cwd=Path.cwd(),
    )
    try:
        wait_for(counter)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=20)
    assert child.returncode == -signal.SIGKILL

    sys.path.insert(0, str(tmp_path))
    try:
        from ops_agent import build  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    agent = build(counter, hang=False)

    with SQLiteCheckpointStore(store_path) as store:
        (killed,) = store.list_states(agent="Ops")
        assert killed.status is RunStatus.RUNNING
        assert [(e.call_id, e.status) for e in killed.unknown_outcomes] == [("call_1", "started")]
        with pytest.raises(UnknownToolOutcomeError) as refused:
            agent.continue_run(killed, "状态如何？")
        assert "recover" in str(refused.value) and "call_1" in str(refused.value)
        with pytest.raises(UnknownToolOutcomeError):
            agent.execute(state=killed)

        recovered = recover_tool_call(killed, "call_1", "completed", result="deployed v2", by="oncall")
        store.save(recovered)
        finished = agent.execute(state=store.load(killed.run_id), save=store.save)
        assert finished.success and finished.output == "部署完成"
        assert finished.run_id == killed.run_id
        nxt = agent.continue_run(store.load(killed.run_id), "状态如何？", save=store.save)
        assert nxt.success and nxt.output == "v2 已上线"
        assert nxt.parent_run_id == killed.run_id
    assert counter.read_text() == "1", "the tool ran exactly once"
    assert json.loads(finished.to_json())["journal"][0]["recovered_by"] == "oncall"
