"""Where a tool's Python code comes from (one rule, ``runtime.tool_modules``), the shipped
demo run by the CLI as shipped, and ``.nxs`` settings read again only when changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import PROJECT_ROOT, call, scripted, subprocess_env

from nexa_lsp.runtime import settings as settings_module
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.declarations import load_agent
from nexa_lsp.runtime.run_state import RunStatus
from nexa_lsp.runtime.settings import Settings
from nexa_lsp.runtime.tool_modules import EDITOR_SETTING, ToolModules

DEMO = PROJECT_ROOT / "examples" / "runs"

PROGRAM = """nexa 3.0;

tool lookup { description: "按编号查找", parameters: {"id": "int"} }
tool pinned { description: "Its own function", parameters: {"id": "int"}, python: "pinned_impl.pinned" }

agent Clerk uses lookup, pinned {
    prompt: "只根据记录回答"
}
"""


def write_module(path: Path, **functions: str) -> Path:
    """A module whose functions return the given text (with their arguments)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(
        f"def {name}(**arguments):\n    return {text!r} + repr(sorted(arguments.items()))\n\n"
        for name, text in functions.items()
    )
    path.write_text(body, encoding="utf-8")
    return path


def program(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "clerk.nx").write_text(PROGRAM, encoding="utf-8")
    write_module(folder / "pinned_impl.py", pinned="from python: ")
    return folder / "clerk.nx"


def tool_results(path: Path, modules: Any = (), **implementations: Any) -> dict[str, str]:
    """Run Clerk calling both tools once; each tool's result text (or the failure)."""
    agent = load_agent(path, "Clerk", tool_modules=modules, implementations=implementations)
    state = agent.execute(
        "查",
        provider=scripted({"tool_calls": [call("lookup", "c1", id=1), call("pinned", "c2", id=2)]}, {"text": "done"}),
    )
    if state.status is not RunStatus.COMPLETED:
        assert state.error is not None
        return {"error": state.error.message}
    return {entry.tool: entry.result or "" for entry in state.journal}


def test_a_tool_module_named_by_tools_or_the_editor_is_used_after_python(tmp_path: Path) -> None:
    path = program(tmp_path / "prog")
    cli = write_module(tmp_path / "elsewhere" / "cli_tools.py", lookup="from --tools ", pinned="never ")
    found = tool_results(path, [cli])
    assert found["lookup"] == "from --tools [('id', 1)]"
    assert found["pinned"] == "from python: [('id', 2)]"  # the tool's own python: comes first
    editor = ToolModules(EDITOR_SETTING, (cli,))
    assert tool_results(path, editor)["lookup"] == "from --tools [('id', 1)]"


def test_explicit_implementations_come_first(tmp_path: Path) -> None:
    path = program(tmp_path / "prog")
    cli = write_module(tmp_path / "cli_tools.py", lookup="from --tools ")
    found = tool_results(path, [cli], lookup=lambda **arguments: f"explicit {arguments['id']}")
    assert found["lookup"] == "explicit 1"


def test_tool_modules_of_the_nxs_file_are_relative_to_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = program(tmp_path / "project" / "agents")
    write_module(tmp_path / "project" / "lib" / "first.py", other="no ")
    write_module(tmp_path / "project" / "lib" / "second.py", lookup="from TOOL_MODULES ")
    (tmp_path / "project" / "settings.nxs").write_text('TOOL_MODULES = "lib/first.py, lib/second.py"\n', "utf-8")
    monkeypatch.chdir(tmp_path)  # the working directory is not the .nxs file's folder
    assert tool_results(path)["lookup"] == "from TOOL_MODULES [('id', 1)]"
    # --tools (or the editor setting) is looked at before TOOL_MODULES
    cli = write_module(tmp_path / "cli_tools.py", lookup="from --tools ")
    assert tool_results(path, [cli])["lookup"] == "from --tools [('id', 1)]"
    # a list value works as well
    (tmp_path / "project" / "settings.nxs").write_text('TOOL_MODULES = ["lib/second.py"]\n', "utf-8")
    assert tool_results(path)["lookup"] == "from TOOL_MODULES [('id', 1)]"


def test_nxr041_lists_every_place_looked_at(tmp_path: Path) -> None:
    path = program(tmp_path / "prog")
    cli = write_module(tmp_path / "cli_tools.py", other="no ")
    message = tool_results(path, [cli])["error"]
    assert "NXR041" in message and "tool lookup is declared in" in message
    assert "implementations= given by the caller (Python API): none for lookup" in message
    assert '`python: "module.function"` on the tool: not set' in message
    assert f"--tools: {cli} (none defines lookup)" in message
    assert f"TOOL_MODULES in .nxs files of {path.parent.resolve()} and its parents: none named" in message
    editor = tool_results(path, ToolModules(EDITOR_SETTING))["error"]
    assert "setting nexa.runs.toolModules: none named" in editor


def test_a_broken_nxs_file_is_named_not_hidden(tmp_path: Path) -> None:
    path = program(tmp_path / "prog")
    (path.parent / "bad.nxs").write_text("this is not a setting\n", encoding="utf-8")
    agent = load_agent(path, "Clerk")  # building the agent still works
    assert [tl.name for tl in agent.tools] == ["lookup", "pinned"]
    with pytest.raises(Exception, match=r"bad\.nxs:1"):
        agent.tools[0].function(id=1)


# --- the shipped demo from the CLI, as shipped ----------------------------------------------------


def nexa(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nexa_lsp", *args],
        cwd=cwd,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_the_cli_runs_the_shipped_demo_without_tools_or_script(isolated_environment: Path) -> None:
    cwd = isolated_environment  # not the demo's folder: every path is relative to the demo's files
    first = nexa("agent", str(DEMO / "analyst.nx"), "Analyst", "Analyze the evidence", "--approve", cwd=cwd)
    assert first.returncode == 0, first.stderr
    assert "warning" not in first.stderr  # the scripted provider is configured by demo.nxs
    assert "[tool lookup_evidence (call_lookup) completed]" in first.stderr
    assert "[tool publish_report (call_publish) completed]" in first.stderr
    assert "Finding: badge 4411" in first.stdout
    listed = json.loads(nexa("runs", "list", "--json", cwd=cwd).stdout)
    (run,) = listed
    second = nexa("agent", "--continue", run["run_id"], "Summarize the conclusion", cwd=cwd)
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("Conclusion: the holder of badge 4411")
    with SQLiteCheckpointStore(cwd / ".nexa" / "runs.sqlite3") as store:
        state = store.load(run["run_id"])
    results = {entry.tool: entry.result or "" for entry in state.journal}
    assert "Badge 4411 used at 02:13" in results["lookup_evidence"]  # evidence_tools.py really ran
    assert results["publish_report"].startswith("published 'Case 7'")


# --- settings files are read again only when they changed -----------------------------------------


def test_settings_files_are_reread_only_when_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[Path] = []
    original = settings_module.parse_nxs

    def counting(text: str, path: Path | str = "<memory>") -> settings_module.SettingsFile:
        parsed.append(Path(path))
        return original(text, path)

    monkeypatch.setattr(settings_module, "parse_nxs", counting)
    folder = tmp_path / "项目"
    folder.mkdir()
    nxs = folder / "p.nxs"
    nxs.write_text('MODEL = "第一"\n', encoding="utf-8")
    assert Settings.load(folder, environ={}).get("MODEL") == "第一"
    assert parsed == [nxs]
    for _ in range(3):
        assert Settings.load(folder, environ={}).get("MODEL") == "第一"
    assert parsed == [nxs]  # unchanged: not read again

    nxs.write_text('MODEL = "第二个"\n', encoding="utf-8")  # another size
    assert Settings.load(folder, environ={}).get("MODEL") == "第二个"
    nxs.write_text('MODEL = "第三个"\n', encoding="utf-8")  # same size: the mtime tells
    stat = nxs.stat()
    os.utime(nxs, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert Settings.load(folder, environ={}).get("MODEL") == "第三个"
    assert parsed == [nxs, nxs, nxs]

    added = folder / "q.nxs"  # a new file in the folder is found
    added.write_text('PROVIDER = "loop"\n', encoding="utf-8")
    assert Settings.load(folder, environ={}).provider_name() == "loop"
    nxs.unlink()
    assert Settings.load(folder, environ={}).get("MODEL") is None


def test_a_script_is_relative_to_the_nxs_file_that_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    (project / "scripts" / "s.json").write_text(json.dumps({"replies": [{"text": "脚本回答"}]}), encoding="utf-8")
    (project / "p.nxs").write_text('SCRIPT = "scripts/s.json"\n', encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    settings = Settings.load(elsewhere, extra_directories=[project], environ={})
    assert settings.provider("scripted").options["SCRIPT"] == str(project / "scripts" / "s.json")
    block = project / "b.nxs"
    block.write_text('config scripted { SCRIPT = "scripts/s.json" }\n', encoding="utf-8")
    settings = Settings.load(elsewhere, extra_directories=[project], environ={})
    assert settings.provider("scripted").options["SCRIPT"] == str(project / "scripts" / "s.json")


def test_every_provider_option_is_documented() -> None:
    text = (PROJECT_ROOT / "docs" / "runs.md").read_text(encoding="utf-8")
    section = text[text.index("## Providers and settings") :]
    section = section[: section.index("\n## ", 1)]
    missing = [key for key in settings_module.PROVIDER_OPTIONS if f"`{key}`" not in section]
    assert missing == []
