"""Runs from real editors, as shipped: the ``examples/runs`` demo from Neovim's code lenses and
from Emacs eglot's code actions, with the approval question answered the way a user does.

The editors load the documented configurations (``editors/nexa.lua``, ``editors/nexa.el``);
the drivers (``editors/driver_runs.lua``, ``editors/driver_runs.el``) override only the
pickers a user would answer, and record what the editor showed. The store is then read by a
real ``nexa-lsp runs list --json`` subprocess. A failing run (a provider on loopback that
refuses the key) must show its NXR code in Neovim and in Emacs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.robustness.helpers import PROJECT_ROOT
from tests.robustness.test_editors import (
    EDITORS,
    NEOVIMS,
    assert_neovim_version,
    editor_env,
    neovim_command,
    require,
    require_neovim,
    run_editor,
)

DEMO = PROJECT_ROOT / "examples" / "runs"
EXECUTE_TASK, CONTINUE_INPUT = "Analyze the evidence", "Summarize the conclusion"
COMPLETED = r"Nexa: Analyst run (run_[0-9a-f]+) completed"


def demo_workspace(tmp_path: Path) -> Path:
    """A copy of the examples/runs folder as shipped (nothing added, nothing it left behind)."""
    root = tmp_path / "runs"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", ".nexa"))
    return root


def stored_runs(env: dict[str, str], workspace: Path) -> list[dict[str, Any]]:
    """What `nexa-lsp runs list --json` (a real subprocess, this checkout's) says is in the store."""
    store = workspace / ".nexa" / "runs.sqlite3"
    assert store.exists(), f"no store at {store}"
    launcher = Path(env["PATH"].split(os.pathsep)[0]) / "nexa-lsp"  # editor_env puts it first
    done = subprocess.run(
        [str(launcher), "runs", "list", "--json", "--store", str(store)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    runs: list[dict[str, Any]] = json.loads(done.stdout)
    return runs


def assert_executed_approved_continued(data: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    """One approval question answered Approve; the run, then its continuation, completed."""
    questions = data["questions"]
    assert len(questions) == 1, questions
    assert "publish_report" in questions[0]["prompt"] and "Approve it?" in questions[0]["prompt"], questions
    assert {"Approve", "Deny", "Show"} <= set(questions[0]["choices"]), questions
    shown = [re.search(COMPLETED, step["message"]) for step in data["steps"]]
    assert all(shown) and len(shown) == 2, data["steps"]
    first_id, second_id = (match.group(1) for match in shown if match)
    assert len(runs) == 2, runs
    first = next(run for run in runs if run["parent_run_id"] is None)
    second = next(run for run in runs if run["parent_run_id"] is not None)
    assert first["run_id"].startswith(first_id) and second["run_id"].startswith(second_id), (shown, runs)
    assert first["status"] == second["status"] == "completed", runs
    assert second["parent_run_id"] == first["run_id"] and second["session_id"] == first["session_id"], runs
    assert first["agent"] == second["agent"] == "Analyst", runs
    assert first["usage"]["tool_calls"] == 2, first  # lookup_evidence, then the approved publish_report
    assert first["pending_approvals"] == [] and first["unknown_outcomes"] == [], first


def assert_quiet_neovim_log(tmp_path: Path) -> None:
    """Neovim logs what the server writes to stderr as ERROR: a run, failed or not, writes none."""
    logs = list((tmp_path / "home").rglob("lsp.log"))
    errors = [line for log in logs for line in log.read_text(encoding="utf-8", errors="replace").splitlines()]
    assert not [line for line in errors if "ERROR" in line or "Traceback" in line], errors


def lens_steps(*steps: tuple[str, str]) -> str:
    return json.dumps([{"lens": lens, "until": until} for lens, until in steps])


@pytest.mark.parametrize("version", NEOVIMS)
def test_neovim_runs_the_shipped_demo_from_its_lenses(tmp_path: Path, version: str) -> None:
    nvim, path = require_neovim(version)
    workspace = demo_workspace(tmp_path)
    source = workspace / "analyst.nx"
    env = editor_env(
        tmp_path,
        source,
        path,
        NEXA_ANSWER="Approve",
        # Lua patterns: the step ends when Neovim shows that the run completed
        NEXA_LENS_STEPS=lens_steps(
            (f'Execute "{EXECUTE_TASK}"', "Analyst run run_%x+ completed"),
            (f'Continue "{CONTINUE_INPUT}"', "Analyst run run_%x+ completed"),
        ),
    )
    data = run_editor(neovim_command(nvim, "driver_runs.lua", source), env, workspace, Path(env["NEXA_TEST_RESULT"]))
    assert_neovim_version(data, version)
    assert data["capabilities"] is True, data
    # the lenses carry the file's own task and input literals
    assert f'▶ Execute "{EXECUTE_TASK}"' in data["steps"][0]["lenses_before"], data["steps"]
    assert any(re.fullmatch(r"run_[0-9a-f]+ completed", t) for t in data["steps"][1]["lenses_before"]), data["steps"]
    assert_executed_approved_continued(data, stored_runs(env, workspace))
    assert_quiet_neovim_log(tmp_path)


def test_emacs_eglot_runs_the_shipped_demo_from_code_actions(tmp_path: Path) -> None:
    emacs = require("emacs")
    workspace = demo_workspace(tmp_path)
    source = workspace / "analyst.nx"
    env = editor_env(
        tmp_path,
        source,
        NEXA_ANSWER="Approve",
        NEXA_ACTION_AT="agent Analyst",
        NEXA_ACTION_STEPS=json.dumps(
            [
                {"action": f'Execute Analyst "{EXECUTE_TASK}"', "until": r"Analyst run run_[0-9a-f]+ completed"},
                {"action": f'Continue "{CONTINUE_INPUT}"', "until": r"Analyst run run_[0-9a-f]+ completed"},
            ]
        ),
    )
    data = run_editor(
        [emacs, "--batch", "-l", str(EDITORS / "nexa.el"), "-l", str(EDITORS / "driver_runs.el")],
        env,
        workspace,
        Path(env["NEXA_TEST_RESULT"]),
    )
    assert data["managed"] is True, data
    assert f'Nexa: Execute Analyst "{EXECUTE_TASK}"' in data["steps"][0]["actions_before"], data["steps"]
    continue_titles = [
        t for t in data["steps"][1]["actions_before"] if t.startswith(f'Nexa: Continue "{CONTINUE_INPUT}"')
    ]
    assert len(continue_titles) == 1 and "completed" in continue_titles[0], data["steps"]
    assert_executed_approved_continued(data, stored_runs(env, workspace))


class RefusingProvider(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that refuses every key (401)."""

    requests: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        RefusingProvider.requests.append(self.path)
        body = json.dumps({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def refusing_provider() -> Iterator[str]:
    RefusingProvider.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), RefusingProvider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


KEY = "sk-not-a-real-key"
GREETER = """nexa 3.0;

// 问候: the task literal below becomes the Execute lens
agent Greeter {
    prompt: "Greet the user",
    max_tool_calls: 1
}

flow main {
    r = Greeter.execute("Say hello");
    print(r);
}
"""


def greeter_workspace(tmp_path: Path, provider_url: str) -> Path:
    """A project whose agent runs against the provider at ``provider_url`` (a .nxs file)."""
    workspace = tmp_path / "project"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "greeter.nx").write_text(GREETER, encoding="utf-8")
    (workspace / "project.nxs").write_text(
        f'PROVIDER = "loopback"\nLOOPBACK_API_KEY = "{KEY}"\nLOOPBACK_BASE_URL = {provider_url}\nMODEL = "gpt-test"\n',
        encoding="utf-8",
    )
    return workspace


def assert_failure_shown(message: str, data: dict[str, Any], env: dict[str, str], workspace: Path) -> None:
    """The message names the run, NXR032 and the transcript; the store has the failed run."""
    assert RefusingProvider.requests, "the run never reached the provider"
    shown = re.search(r"Nexa: Greeter run (run_[0-9a-f]+) failed: NXR032 ", message)
    assert shown, message
    assert "- transcript: " in message and str(workspace / ".nexa" / "transcripts") in message, message
    assert KEY not in json.dumps(data), "the key was shown"
    (run,) = stored_runs(env, workspace)
    assert run["status"] == "failed" and run["run_id"].startswith(shown.group(1)), run


@pytest.mark.parametrize("version", NEOVIMS)
def test_neovim_shows_a_failed_run_with_its_code(tmp_path: Path, version: str, refusing_provider: str) -> None:
    nvim, path = require_neovim(version)
    workspace = greeter_workspace(tmp_path, refusing_provider)
    source = workspace / "greeter.nx"
    steps = lens_steps(('Execute "Say hello"', "Greeter run run_%x+ failed"))
    env = editor_env(tmp_path, source, path, NEXA_LENS_STEPS=steps)
    data = run_editor(neovim_command(nvim, "driver_runs.lua", source), env, workspace, Path(env["NEXA_TEST_RESULT"]))
    assert_neovim_version(data, version)
    assert_failure_shown(data["steps"][0]["message"], data, env, workspace)
    assert_quiet_neovim_log(tmp_path)


def test_emacs_eglot_shows_a_failed_run_with_its_code(tmp_path: Path, refusing_provider: str) -> None:
    emacs = require("emacs")
    workspace = greeter_workspace(tmp_path, refusing_provider)
    source = workspace / "greeter.nx"
    steps = [{"action": 'Execute Greeter "Say hello"', "until": r"Greeter run run_[0-9a-f]+ failed"}]
    env = editor_env(tmp_path, source, NEXA_ACTION_AT="agent Greeter", NEXA_ACTION_STEPS=json.dumps(steps))
    data = run_editor(
        [emacs, "--batch", "-l", str(EDITORS / "nexa.el"), "-l", str(EDITORS / "driver_runs.el")],
        env,
        workspace,
        Path(env["NEXA_TEST_RESULT"]),
    )
    message = data["steps"][0]["message"]
    assert message.startswith("[eglot] Server reports (type=1): "), message  # 1: Error
    assert_failure_shown(message, data, env, workspace)
