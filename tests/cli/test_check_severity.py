"""`nexa-lsp check --migration-severity / --severity`: real subprocesses on real files."""

from __future__ import annotations

import re
from pathlib import Path

from .test_check_cli import run_check

OLD = 'agent Writer { prompt: "写作 😀" }\nflow main {\n    draft = Writer.run("主题")\n    print(draft)\n}\n'
NEW = "nexa 3.0;\n" + OLD
UNUSED_TOOL = 'tool T { description: "d", parameters: {"q": "string"} }\n'


def _findings(stdout: str) -> dict[str, str]:
    """code -> severity label of each finding line."""
    return {m.group(2): m.group(1) for m in re.finditer(r"^.+:\d+:\d+: (\w+) (NX[A-Z]*\d+) ", stdout, re.M)}


def test_migration_findings_are_information_by_default_and_do_not_fail(tmp_path: Path) -> None:
    path = tmp_path / "old.nx"
    path.write_text(OLD, encoding="utf-8")
    result = run_check(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _findings(result.stdout) == {"NXM001": "info", "NXM002": "info"}


def test_each_migration_severity_applies_to_24_files(tmp_path: Path) -> None:
    path = tmp_path / "old.nx"
    path.write_text(OLD, encoding="utf-8")
    for word, label, status in (("hint", "hint", 0), ("information", "info", 0), ("warning", "warning", 0)):
        result = run_check(path, "--migration-severity", word)
        assert result.returncode == status, result.stdout
        assert set(_findings(result.stdout).values()) == {label}, word
    gate = run_check(path, "--migration-severity", "error")
    assert gate.returncode == 1  # a CI job can fail on files not yet migrated
    assert _findings(gate.stdout) == {"NXM001": "error", "NXM002": "error"}
    assert gate.stdout.splitlines()[-1].startswith("1 files checked: 2 errors")


def test_a_per_code_override_changes_that_code_only(tmp_path: Path) -> None:
    path = tmp_path / "old.nx"
    path.write_text(UNUSED_TOOL + OLD, encoding="utf-8")
    result = run_check(path, "--severity", "NXM002=warning", "--severity", "nx130=hint")
    assert _findings(result.stdout) == {"NX130": "hint", "NXM001": "info", "NXM002": "warning"}
    both = run_check(path, "--severity", "NXM002=error,NXM001=hint")
    assert both.returncode == 1
    assert _findings(both.stdout)["NXM002"] == "error" and _findings(both.stdout)["NXM001"] == "hint"


def test_30_migration_errors_stay_errors(tmp_path: Path) -> None:
    path = tmp_path / "new.nx"
    path.write_text(NEW, encoding="utf-8")
    result = run_check(path, "--migration-severity", "hint", "--severity", "NXM002=hint")
    assert result.returncode == 1
    assert _findings(result.stdout) == {"NXM002": "error"}


def test_bad_severity_options_are_usage_errors(tmp_path: Path) -> None:
    path = tmp_path / "old.nx"
    path.write_text(OLD, encoding="utf-8")
    unknown_code = run_check(path, "--severity", "NX001=hint")
    assert unknown_code.returncode == 2 and "unknown code 'NX001'" in unknown_code.stderr
    unknown_level = run_check(path, "--severity", "NXM002=loud")
    assert unknown_level.returncode == 2 and "unknown severity 'loud'" in unknown_level.stderr
    missing = run_check(path, "--severity", "NXM002")
    assert missing.returncode == 2 and "NXM002" in missing.stderr
    bad_choice = run_check(path, "--migration-severity", "fatal")
    assert bad_choice.returncode == 2 and "invalid choice" in bad_choice.stderr
