"""The contract's two-turn example, unchanged except for the import prefix, end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from loopback import LoopbackServer, chat_text
from runtime_helpers import subprocess_env

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore

SEED_EXAMPLE = """\
from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.run_state import RunConfig

agent = NexaAgent("Analyst", prompt="Work from evidence")
store = SQLiteCheckpointStore(".nexa/runs.sqlite3")
first = agent.execute("Analyze the evidence", config=RunConfig(timeout=120), save=store.save)
if first.success:
    second = agent.continue_run(first, "Summarize the conclusion", save=store.save)
    print(second.run_id, second.status.value)
"""


def run_example(cwd: Path) -> tuple[str, str]:
    script = cwd / "example.py"
    script.write_text(SEED_EXAMPLE, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    run_id, status = result.stdout.split()
    return run_id, status


def check_store(cwd: Path, run_id: str, provider: str) -> None:
    with SQLiteCheckpointStore(cwd / ".nexa" / "runs.sqlite3") as store:
        second = store.load(run_id)
        assert second.parent_run_id is not None
        first = store.load(second.parent_run_id)
        assert first.session_id == second.session_id
        assert first.config.timeout == 120 and second.config.timeout == 120
        assert second.config.provider == first.config.provider == provider
        assert [m.content for m in second.history if m.role == "user"] == [
            "Analyze the evidence",
            "Summarize the conclusion",
        ]


def test_seed_example_runs_offline_with_the_default_scripted_provider(isolated_environment: Path) -> None:
    run_id, status = run_example(isolated_environment)
    assert run_id.startswith("run_") and status == "completed"
    check_store(isolated_environment, run_id, "scripted")


def test_seed_example_runs_against_a_configured_http_provider(
    isolated_environment: Path, loopback: LoopbackServer
) -> None:
    loopback.answers += [chat_text("证据指向 A"), chat_text("结论：A")]
    (isolated_environment / "provider.nxs").write_text(
        f'PROVIDER = "openai"\nOPENAI_API_KEY = "sk-seed"\nOPENAI_BASE_URL = "{loopback.url}/v1"\nMODEL = "gpt-seed"\n',
        encoding="utf-8",
    )
    run_id, status = run_example(isolated_environment)
    assert status == "completed"
    check_store(isolated_environment, run_id, "openai")
    first_request, second_request = loopback.bodies()
    assert second_request["messages"] == [
        {"role": "system", "content": "Work from evidence"},
        {"role": "user", "content": "Analyze the evidence"},
        {"role": "assistant", "content": "证据指向 A"},
        {"role": "user", "content": "Summarize the conclusion"},
    ]
    assert first_request["model"] == second_request["model"] == "gpt-seed"
