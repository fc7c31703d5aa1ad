"""`nexa-lsp agent` and `nexa-lsp runs` as real subprocesses."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from runtime_helpers import PROJECT_ROOT, subprocess_env

EXAMPLES = PROJECT_ROOT / "examples" / "runs"
DEMO = [str(EXAMPLES / "analyst.nx"), "Analyst"]
DEMO_FLAGS = [
    "--script",
    str(EXAMPLES / "analyst.script.json"),
    "--tools",
    str(EXAMPLES / "evidence_tools.py"),
]


def nexa(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nexa_lsp", *args],
        cwd=cwd,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )


def runs_json(cwd: Path) -> list[dict[str, Any]]:
    result = nexa("runs", "list", "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    listed: list[dict[str, Any]] = json.loads(result.stdout)
    return listed


def test_demo_run_waits_for_approval_then_resume_and_continue(isolated_environment: Path) -> None:
    cwd = isolated_environment
    first = nexa("agent", *DEMO, "Analyze the evidence", *DEMO_FLAGS, cwd=cwd)
    assert first.returncode == 3, first.stderr
    assert "Looking up the evidence" in first.stdout
    assert "needs approval" in first.stderr and "--resume" in first.stderr
    (waiting,) = runs_json(cwd)
    assert waiting["status"] == "waiting_approval"
    assert waiting["pending_approvals"] == [{"call_id": "call_publish", "tool": "publish_report"}]
    assert waiting["actions"] == ["approve", "deny", "cancel", "show"]
    assert (cwd / ".nexa" / "runs.sqlite3").is_file(), "default store under the current folder"

    resumed = nexa("agent", "--resume", waiting["run_id"], "--approve", *DEMO_FLAGS, cwd=cwd)
    assert resumed.returncode == 0, resumed.stderr
    assert "Finding: badge 4411" in resumed.stdout
    second = nexa("agent", "--continue", waiting["run_id"], "Summarize the conclusion", *DEMO_FLAGS, cwd=cwd)
    assert second.returncode == 0, second.stderr
    assert "Conclusion:" in second.stdout
    listed = runs_json(cwd)
    assert [r["status"] for r in listed] == ["completed", "completed"]
    assert listed[0]["run_id"] == waiting["run_id"], "resume keeps the original run id"
    assert listed[1]["parent_run_id"] == waiting["run_id"]
    assert listed[1]["session_id"] == waiting["session_id"]

    shown = nexa("runs", "show", waiting["run_id"], cwd=cwd)
    assert shown.returncode == 0
    assert "published 'Case 7'" in shown.stdout and "approved by cli" in shown.stdout
    plain = nexa("runs", "list", cwd=cwd)
    assert waiting["run_id"] in plain.stdout and "<- " + waiting["run_id"] in plain.stdout


def test_deny_flag_keeps_the_tool_from_running(isolated_environment: Path) -> None:
    result = nexa("agent", *DEMO, "Analyze", *DEMO_FLAGS, "--deny", "--json", cwd=isolated_environment)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["status"] == "completed" and summary["usage"]["tool_calls"] == 1
    state = json.loads(nexa("runs", "show", summary["run_id"], "--json", cwd=isolated_environment).stdout)
    assert [(e["call_id"], e["status"]) for e in state["journal"]] == [
        ("call_lookup", "completed"),
        ("call_publish", "not_executed"),
    ]


def test_refused_continuations_print_the_reason_and_exit_non_zero(isolated_environment: Path) -> None:
    cwd = isolated_environment
    nexa("agent", *DEMO, "Analyze", *DEMO_FLAGS, cwd=cwd)
    (waiting,) = runs_json(cwd)
    not_settled = nexa("agent", "--continue", waiting["run_id"], "next", *DEMO_FLAGS, cwd=cwd)
    assert not_settled.returncode == 2
    assert "NXR001" in not_settled.stderr and "resume" in not_settled.stderr
    nexa("agent", "--resume", waiting["run_id"], "--approve", *DEMO_FLAGS, cwd=cwd)
    empty = nexa("agent", "--continue", waiting["run_id"], "", *DEMO_FLAGS, cwd=cwd)
    assert empty.returncode == 2 and "NXR003" in empty.stderr
    settled = nexa("agent", "--resume", waiting["run_id"], *DEMO_FLAGS, cwd=cwd)
    assert settled.returncode == 2 and "NXR008" in settled.stderr
    missing = nexa("agent", "--continue", "run_nope", "x", cwd=cwd)
    assert missing.returncode == 2 and "NXR021" in missing.stderr


def test_changed_agent_file_refuses_continuation(isolated_environment: Path) -> None:
    cwd = isolated_environment
    source = cwd / "a.nx"
    source.write_text('agent Writer { prompt: "写短句" }\n', encoding="utf-8")
    first = nexa("agent", str(source), "Writer", "写一句话", "--json", cwd=cwd)
    run_id = json.loads(first.stdout)["run_id"]
    source.write_text('agent Writer { prompt: "写长文" }\n', encoding="utf-8")
    refused = nexa("agent", "--continue", run_id, "再写一句", cwd=cwd)
    assert refused.returncode == 2 and "NXR004" in refused.stderr and "prompt" in refused.stderr


def test_text_streams_as_it_arrives(isolated_environment: Path) -> None:
    script = isolated_environment / "slow.json"
    script.write_text(json.dumps({"replies": [{"text": "逐字 " * 40, "chunk_delay": 0.03}]}), encoding="utf-8")
    source = isolated_environment / "a.nx"
    source.write_text('agent Talker { prompt: "talk" }\n', encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "nexa_lsp", "agent", str(source), "Talker", "go", "--script", str(script)],
        cwd=isolated_environment,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    first = process.stdout.read1(64)  # type: ignore[attr-defined]
    still_running = process.poll() is None
    rest = process.stdout.read()
    process.wait(timeout=30)
    assert first.decode("utf-8", "ignore").startswith("逐字")
    assert still_running, "the first text arrived while the run was still going"
    assert (first + rest).decode().count("逐字") == 40


def test_ctrl_c_cancels_and_saves_the_run(isolated_environment: Path) -> None:
    script = isolated_environment / "slow.json"
    script.write_text(json.dumps({"replies": [{"text": "x", "delay": 30}]}), encoding="utf-8")
    source = isolated_environment / "a.nx"
    source.write_text('agent Slow { prompt: "wait" }\n', encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "nexa_lsp", "agent", str(source), "Slow", "go", "--script", str(script)],
        cwd=isolated_environment,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    store = isolated_environment / ".nexa" / "runs.sqlite3"
    deadline = time.monotonic() + 20
    while not runs_json_if_any(isolated_environment, store) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=10)
    assert process.returncode == 130
    (run,) = runs_json(isolated_environment)
    assert run["status"] == "cancelled" and run["actions"] == ["continue", "show"]


def runs_json_if_any(cwd: Path, store: Path) -> bool:
    return store.exists() and bool(runs_json(cwd))


def test_terminal_prompt_asks_for_approval(isolated_environment: Path) -> None:
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "nexa_lsp", "agent", *DEMO, "Analyze", *DEMO_FLAGS],
        cwd=isolated_environment,
        env=subprocess_env(),
        stdin=slave,
        stderr=slave,
        stdout=subprocess.PIPE,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 30
    while b"[y/N]" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            seen += os.read(master, 4096)
    assert b"Allow publish_report" in seen
    os.write(master, b"y\n")
    assert process.stdout is not None
    out = process.stdout.read().decode()
    process.wait(timeout=30)
    os.close(master)
    assert process.returncode == 0
    assert "Finding: badge 4411" in out


def test_cli_recovery_after_sigkill(isolated_environment: Path) -> None:
    cwd = isolated_environment
    counter = cwd / "count.txt"
    tools = cwd / "ops_tools.py"
    tools.write_text(
        "import os, time\n"
        "from pathlib import Path\n"
        "def deploy(version: str) -> str:\n"
        f"    path = Path({str(counter)!r})\n"
        "    n = int(path.read_text()) + 1 if path.exists() else 1\n"
        "    path.write_text(str(n))\n"
        "    if os.environ.get('HANG'):\n"
        "        time.sleep(60)\n"
        "    return 'deployed ' + version\n",
        encoding="utf-8",
    )
    (cwd / "ops.nx").write_text(
        'tool deploy { description: "Deploy", parameters: {"version": "string"} }\n'
        'agent Ops uses deploy { prompt: "部署" }\n',
        encoding="utf-8",
    )
    script = cwd / "ops.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"tool_calls": [{"id": "call_1", "name": "deploy", "arguments": {"version": "v2"}}]},
                    {"text": "部署完成"},
                    {"text": "一切正常"},
                ]
            }
        ),
        encoding="utf-8",
    )
    flags = ["--script", str(script), "--tools", str(tools)]
    child = subprocess.Popen(
        [sys.executable, "-m", "nexa_lsp", "agent", str(cwd / "ops.nx"), "Ops", "deploy v2", *flags],
        cwd=cwd,
        env=subprocess_env(HANG="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not counter.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    (run,) = runs_json(cwd)
    assert run["status"] == "running"
    assert run["unknown_outcomes"] == [{"call_id": "call_1", "tool": "deploy"}]
    assert run["actions"] == ["cancel", "recover", "show"]
    refused = nexa("agent", "--continue", run["run_id"], "状态？", *flags, cwd=cwd)
    assert refused.returncode == 2 and "NXR002" in refused.stderr and "runs recover" in refused.stderr
    recovered = nexa("runs", "recover", run["run_id"], "call_1", "--completed", "deployed v2", cwd=cwd)
    assert recovered.returncode == 0 and "--resume" in recovered.stderr
    resumed = nexa("agent", "--resume", run["run_id"], *flags, cwd=cwd)
    assert resumed.returncode == 0 and "部署完成" in resumed.stdout, resumed.stderr
    continued = nexa("agent", "--continue", run["run_id"], "状态？", *flags, cwd=cwd)
    assert continued.returncode == 0 and "一切正常" in continued.stdout
    assert counter.read_text() == "1"


def test_runs_cancel_and_approve_commands(isolated_environment: Path) -> None:
    cwd = isolated_environment
    nexa("agent", *DEMO, "Analyze", *DEMO_FLAGS, cwd=cwd)
    (waiting,) = runs_json(cwd)
    approved = nexa("runs", "approve", waiting["run_id"], "call_publish", "--by", "王", cwd=cwd)
    assert approved.returncode == 0 and "--resume" in approved.stderr
    again = nexa("runs", "approve", waiting["run_id"], "call_publish", cwd=cwd)
    assert again.returncode == 2 and "NXR010" in again.stderr
    (after,) = runs_json(cwd)
    assert after["actions"] == ["resume", "cancel", "show"]
    cancelled = nexa("runs", "cancel", waiting["run_id"], cwd=cwd)
    assert cancelled.returncode == 0
    (final,) = runs_json(cwd)
    assert final["status"] == "cancelled"
