"""Declared tools run in a process of their own, in the run's working directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from loopback import LoopbackServer, chat_text
from runtime_helpers import call, scripted, subprocess_env

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.declarations import load_agent
from nexa_lsp.runtime.run_state import RunConfig, RunState, RunStatus
from nexa_lsp.runtime.tools import tool, working_directory

PROGRAM = """nexa 3.0;

tool where_am_i { python: "place_tools.where_am_i" }
tool note { python: "place_tools.note" }

agent Clerk uses where_am_i, note {
    prompt: "记录"
}
"""
TOOLS = """import os
from pathlib import Path


def where_am_i() -> str:
    print("this goes to stderr, never into the caller's stdout")
    return os.getcwd()


def note(text: str) -> dict:
    Path("note.txt").write_text(text, encoding="utf-8")  # relative: the run's working directory
    return {"written": text, "pid": os.getpid()}
"""


def clerk(folder: Path) -> NexaAgent:
    (folder / "clerk.nx").write_text(PROGRAM, encoding="utf-8")
    (folder / "place_tools.py").write_text(TOOLS, encoding="utf-8")
    return load_agent(folder / "clerk.nx", "Clerk")


def calls(*names_and_arguments: tuple[str, dict[str, Any]]) -> Any:
    return scripted(
        {"tool_calls": [call(name, f"c{n}", **arguments) for n, (name, arguments) in enumerate(names_and_arguments)]},
        {"text": "好"},
    )


def results(state: RunState) -> list[str]:
    return [m.content for m in state.history if m.role == "tool"]


def test_two_concurrent_runs_each_run_tools_in_their_own_working_directory(tmp_path: Path) -> None:
    agent = clerk(tmp_path)
    process_directory = os.getcwd()
    folders = [tmp_path / "甲", tmp_path / "乙"]
    finished: dict[Path, RunState] = {}
    start = threading.Barrier(2)

    def run(folder: Path) -> None:
        folder.mkdir()
        start.wait()
        finished[folder] = agent.execute(
            "记下",
            config=RunConfig(working_directory=str(folder)),
            provider=calls(*[("where_am_i", {}), ("note", {"text": folder.name})] * 3),
        )

    threads = [threading.Thread(target=run, args=(folder,)) for folder in folders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for folder in folders:
        state = finished[folder]
        assert state.success, state.error
        outputs = results(state)
        assert outputs[0::2] == [str(folder.resolve())] * 3
        assert all(json.loads(text)["written"] == folder.name for text in outputs[1::2])
        assert (folder / "note.txt").read_text(encoding="utf-8") == folder.name
        assert json.loads(outputs[1])["pid"] != os.getpid(), "the tool ran in a process of its own"
    assert os.getcwd() == process_directory, "the runtime never changed this process's current directory"


def test_a_python_object_tool_is_told_its_runs_working_directory(tmp_path: Path) -> None:
    seen: dict[str, str] = {}

    @tool
    def here(label: str) -> str:
        """Report the run's working directory."""
        seen[label] = str(working_directory())
        return "ok"

    agent = NexaAgent("A", tools=[here])
    threads = []
    for label in ("x", "y"):
        folder = tmp_path / label
        folder.mkdir()
        provider = calls(("here", {"label": label}))
        config = RunConfig(working_directory=str(folder))
        threads.append(
            threading.Thread(target=agent.execute, args=("go",), kwargs={"config": config, "provider": provider})
        )
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"x": str((tmp_path / "x").resolve()), "y": str((tmp_path / "y").resolve())}


def test_a_changed_tool_module_is_used_at_the_next_call(tmp_path: Path) -> None:
    agent = clerk(tmp_path)
    first = agent.execute(
        "一", config=RunConfig(working_directory=str(tmp_path)), provider=calls(("note", {"text": "a"}))
    )
    assert json.loads(results(first)[0])["written"] == "a"
    (tmp_path / "place_tools.py").write_text(
        TOOLS.replace('{"written": text', '{"written": text + "!"'), encoding="utf-8"
    )
    second = agent.execute(
        "二", config=RunConfig(working_directory=str(tmp_path)), provider=calls(("note", {"text": "b"}))
    )
    assert json.loads(results(second)[0])["written"] == "b!"


@pytest.mark.parametrize(
    ("module_text", "expected"),
    [
        (None, "cannot import place_tools (ModuleNotFoundError"),
        ("x = 1\n", "place_tools has no function 'where_am_i'"),
        ("where_am_i = 42\nnote = 1\n", "place_tools.where_am_i is not callable (it is a int)"),
        ("def where_am_i():\n    raise KeyError('no desk')\n", "Tool where_am_i failed: KeyError: 'no desk'"),
        ("import sys\ndef where_am_i():\n    sys.exit(3)\n", "Tool where_am_i failed: SystemExit: 3"),
        ("import os\ndef where_am_i():\n    os._exit(9)\n", "ended with exit code 9 without a result"),
    ],
)
def test_tool_process_failures_fail_the_run_with_the_reason(
    tmp_path: Path, module_text: str | None, expected: str
) -> None:
    agent = clerk(tmp_path)
    if module_text is None:
        (tmp_path / "place_tools.py").unlink()
    else:
        (tmp_path / "place_tools.py").write_text(module_text, encoding="utf-8")
    state = agent.execute("看", config=RunConfig(working_directory=str(tmp_path)), provider=calls(("where_am_i", {})))
    assert state.status is RunStatus.FAILED and state.error is not None
    assert state.error.code == "NXR053" and expected in state.error.message, state.error.message
    if module_text is None or "42" in (module_text or "") or module_text == "x = 1\n":
        assert "NXR041" in state.error.message and 'python: "place_tools.where_am_i"' in state.error.message


def test_a_tool_that_prints_cannot_corrupt_the_commands_output(tmp_path: Path) -> None:
    clerk(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"tool_calls": [call("where_am_i", "c1")]}, {"text": "done"}]}))
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "nexa_lsp",
            "agent",
            str(tmp_path / "clerk.nx"),
            "Clerk",
            "go",
            "--script",
            str(script),
            "--json",
        ],
        cwd=tmp_path,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout)["status"] == "completed"
    assert "this goes to stderr" in finished.stderr


def test_http_clients_a_run_builds_are_closed(
    tmp_path: Path, loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    loopback.answers.append(chat_text("好的"))
    (tmp_path / "project.nxs").write_text(
        f'PROVIDER = "lab"\nLAB_API_KEY = "sk-lab-0123456789"\nLAB_BASE_URL = "{loopback.url}/v1"\nMODEL = "m"\n',
        encoding="utf-8",
    )
    opened: list[httpx.Client] = []
    original = httpx.Client.__init__

    def recording(self: httpx.Client, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(httpx.Client, "__init__", recording)
    agent = NexaAgent("A")
    for _ in range(3):
        state = agent.execute("问", config=RunConfig(working_directory=str(tmp_path)))
        assert state.success and state.output == "好的", state.error
    assert len(opened) == 3 and all(client.is_closed for client in opened)
