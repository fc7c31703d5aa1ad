"""`nexa-lsp check --migrate / --fix / --diff` as a user runs them: real subprocesses in tmp folders."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from nexa_lsp.syntax import VersionPath, parse_source

from .helpers import errors_30

AGENT = 'agent Writer { prompt: "写作" }\n'
GOOD = AGENT + (
    'flow main {\n    draft = Writer.run("一首诗")\n    better = Writer.run("shorter")\n    print(better)\n}\n'
)
BLOCKED = AGENT + 'flow main {\n    loop { d = Writer.run("again") } until ("good enough")\n}\n'


def nexa(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "check", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def test_migrate_writes_30_files_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    good = tmp_path / "good.nx"
    good.write_text(GOOD, encoding="utf-8")
    first = nexa(tmp_path, "--migrate")
    assert first.returncode == 0, first.stdout + first.stderr
    text = good.read_text(encoding="utf-8")
    assert text.startswith("nexa 3.0;\n") and 'Writer.continue(draft, "shorter")' in text
    assert parse_source(text).path is VersionPath.NEXA_30 and errors_30(text) == []
    assert f"{good}: migrated" in first.stdout
    assert first.stdout.splitlines()[-1] == (
        "1 files checked: 0 errors, 0 warnings, 0 findings, 2 fixes applied; "
        "1 migrated to Nexa 3.0, 0 not migrated, 0 already on 3.0"
    )
    second = nexa(tmp_path, "--migrate")
    assert good.read_text(encoding="utf-8") == text
    assert second.returncode == 0
    assert second.stdout.splitlines()[-1].endswith("0 migrated to Nexa 3.0, 0 not migrated, 1 already on 3.0")


def test_blocked_file_is_unchanged_and_each_blocker_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "loop.nx"
    path.write_text(BLOCKED, encoding="utf-8")
    result = nexa(path, "--migrate")
    assert result.returncode == 1
    assert path.read_text(encoding="utf-8") == BLOCKED
    assert f"{path}:3:16: error NXM002 not migrated to Nexa 3.0: `Writer.run(...)`" in result.stdout
    assert "an earlier pass of the loop" in result.stdout
    assert f"{path}: not migrated (1 blocking findings)" in result.stdout
    assert "0 migrated to Nexa 3.0, 1 not migrated" in result.stdout.splitlines()[-1]


def test_migrate_diff_prints_and_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "good.nx"
    path.write_text(GOOD, encoding="utf-8")
    result = nexa(path, "--migrate", "--diff")
    assert path.read_text(encoding="utf-8") == GOOD
    assert "+nexa 3.0;" in result.stdout
    assert '-    draft = Writer.run("一首诗")' in result.stdout
    assert '+    draft = Writer.execute("一首诗")' in result.stdout


def test_migrate_json_reports_status_blockers_and_summary(tmp_path: Path) -> None:
    (tmp_path / "a.nx").write_text(GOOD, encoding="utf-8")
    (tmp_path / "b.nx").write_text(BLOCKED, encoding="utf-8")
    result = nexa(tmp_path, "--migrate", "--format", "json")
    payload = json.loads(result.stdout)
    by_name = {Path(f["path"]).name: f for f in payload["files"]}
    assert by_name["a.nx"]["migration"] == {"status": "migrated", "blockers": []}
    assert by_name["a.nx"]["version_path"] == "3.0"
    assert by_name["b.nx"]["migration"]["status"] == "not migrated"
    assert [b["code"] for b in by_name["b.nx"]["migration"]["blockers"]] == ["NXM002"]
    assert payload["summary"]["migrated"] == 1 and payload["summary"]["not_migrated"] == 1
    assert payload["summary"]["fixes_applied"] == 2


def test_fix_applies_30_rewrites_in_passes_and_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "v3.nx"
    text = "nexa 3.0;\n" + AGENT + 'flow main {\n    r = Writer.run("a")\n    if (r == "ok") { print(r) }\n}\n'
    path.write_text(text, encoding="utf-8")
    before = nexa(path)
    assert before.returncode == 1
    assert before.stdout.splitlines()[-1] == "1 files checked: 1 errors, 0 warnings, 1 findings, 1 fixable with --fix"
    fixed = nexa(path, "--fix")
    assert fixed.returncode == 0, fixed.stdout
    new = path.read_text(encoding="utf-8")
    assert 'r = Writer.execute("a")' in new and 'if (r.output == "ok")' in new
    assert "1 fixes applied" in fixed.stdout


def test_unsafe_fixes_are_applied_only_on_request(tmp_path: Path) -> None:
    path = tmp_path / "v3.nx"
    text = "nexa 3.0;\n" + AGENT + 'flow main {\n    try { r = Writer.run("a") } catch (e) { print(e) }\n}\n'
    path.write_text(text, encoding="utf-8")
    safe_only = nexa(path, "--fix")
    assert path.read_text(encoding="utf-8") == text
    assert "1 with unsafe fixes only" in safe_only.stdout
    nexa(path, "--fix", "--unsafe-fixes")
    assert 'r = Writer.execute("a")' in path.read_text(encoding="utf-8")


def test_fix_on_a_24_file_never_migrates_it(tmp_path: Path) -> None:
    path = tmp_path / "old.nx"
    path.write_text(GOOD, encoding="utf-8")
    result = nexa(path, "--fix")
    assert path.read_text(encoding="utf-8") == GOOD
    assert result.returncode == 0
    assert "info NXM001" in result.stdout and "info NXM002" in result.stdout  # information by default


def test_unsafe_fixes_never_migrate_a_24_file_either(tmp_path: Path) -> None:
    path = tmp_path / "old.nx"
    path.write_text(GOOD, encoding="utf-8")
    nexa(path, "--fix", "--unsafe-fixes")
    assert path.read_text(encoding="utf-8") == GOOD
