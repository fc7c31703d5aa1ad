"""The workspace migration in a real editor: Neovim's built-in client (the configuration of
docs/editors.md) asks ``nexa/migrationStatus`` and runs ``nexa.migrateWorkspace``; Neovim
applies the workspace edit itself (to the open buffer and to files it loads for the edit)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.robustness.helpers import subprocess_env
from tests.robustness.test_editors import EDITORS, require, run_editor

DRIVER = Path(__file__).parent / "editors" / "migrate.lua"
AGENT = 'agent Writer { prompt: "写一首诗 😀" }\n'
FILES = {
    "open.nx": AGENT + 'flow main {\n    a = Writer.run("主题 😀")\n    b = Writer.run("更短")\n    print(b)\n}\n',
    "lib/closed.nx": 'agent Critic { prompt: "评 😀" }\nflow review {\n'
    '    r = Critic.run("看看 😀")\n    print(r)\n}\n',
    "blocked.nx": AGENT + 'flow main {\n    loop { d = Writer.run("再来 😀") } until ("good")\n}\n',
    "done.nx": 'nexa 3.0;\nagent A { prompt: "p" }\nflow main {\n    r = A.execute("x")\n    print(r)\n}\n',
}


def test_neovim_migrates_the_ready_files_and_leaves_the_blocked_one(tmp_path: Path) -> None:
    nvim = require("nvim")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    expected = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "check", "--migrate", "--dry-run", "--format", "json", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    dry_run = json.loads(expected.stdout)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "nexa-lsp"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m nexa_lsp "$@"\n', encoding="utf-8")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "home").mkdir()
    result = tmp_path / "result.json"
    env = subprocess_env(
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
        XDG_DATA_HOME=str(tmp_path / "home" / ".local" / "share"),
        XDG_STATE_HOME=str(tmp_path / "home" / ".local" / "state"),
        NEXA_TEST_RESULT=str(result),
        NEXA_TEST_TIMEOUT_MS="60000",
        TERM="dumb",
    )
    command = [nvim, "--headless", "-i", "NONE", "-n", "-u", str(EDITORS / "nexa.lua")]
    data = run_editor([*command, "-c", f"luafile {DRIVER}", str(root / "open.nx")], env, root, result)
    assert data["clients"] == 1, data
    states = {Path(f["path"]).relative_to(root).as_posix(): f["state"] for f in data["status"]["files"]}
    assert states == {Path(f["path"]).relative_to(root).as_posix(): f["state"] for f in dry_run["files"]}
    assert states == {"open.nx": "ready", "lib/closed.nx": "ready", "blocked.nx": "blocked", "done.nx": "done"}
    assert data["command_status"] == data["status"]
    assert data["migrate"]["applied"] is True and len(data["migrate"]["migrated"]) == 2
    assert sorted(Path(p).name for p in data["modified"]) == ["closed.nx", "open.nx"]
    opened = (root / "open.nx").read_text(encoding="utf-8")
    assert opened == "nexa 3.0;\n" + FILES["open.nx"].replace(
        'a = Writer.run("主题 😀")', 'a = Writer.execute("主题 😀")'
    ).replace('b = Writer.run("更短")', 'b = Writer.continue(a, "更短")')
    assert (root / "lib/closed.nx").read_text(encoding="utf-8") == "nexa 3.0;\n" + FILES["lib/closed.nx"].replace(
        ".run(", ".execute("
    )
    for name in ("blocked.nx", "done.nx"):
        assert (root / name).read_text(encoding="utf-8") == FILES[name], name
    assert data["second"]["applied"] is False and data["second"]["migrated"] == []
