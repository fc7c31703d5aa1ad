"""`nexa-lsp check` as a user runs it: a real subprocess on real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

GOOD = 'agent Writer {\n    prompt: "写一篇短文 😀",\n}\nflow main { x = Writer.run("主题") }\n'
BAD = 'agent Writer {\n    prompt: "写 😀", model: ,\n}\n'


def run_check(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "check", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        timeout=120,
    )


def test_clean_file_exits_zero(tmp_path: Path) -> None:
    (tmp_path / "a.nx").write_text(GOOD, encoding="utf-8")
    result = run_check(tmp_path / "a.nx", "--no-migration-hints")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("1 files checked: 0 errors")


def test_error_line_format_is_one_based_code_points(tmp_path: Path) -> None:
    path = tmp_path / "b.nx"
    path.write_text(BAD, encoding="utf-8")
    result = run_check(path)
    assert result.returncode == 1
    first = result.stdout.splitlines()[0]
    # `model: ,` on line 2: the comma is the 27th code point of `    prompt: "写 😀", model: ,`
    assert first.startswith(f'{path}:2:27: error NX001 unexpected ","')


def test_json_output_has_zero_based_utf16_ranges(tmp_path: Path) -> None:
    path = tmp_path / "b.nx"
    path.write_text(BAD, encoding="utf-8")
    result = run_check(path, "--format", "json")
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    diag = payload["files"][0]["diagnostics"][0]
    assert diag["code"] == "NX001"
    # the emoji counts two UTF-16 units: 0-based column 27 (code points would give 26)
    assert diag["range"]["start"] == {"line": 1, "character": 27}
    assert payload["summary"]["errors"] == 1
    assert payload["files"][0]["version_path"] == "2.4"


def test_folders_are_searched_recursively_in_stable_order(tmp_path: Path) -> None:
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "late.nx").write_text(BAD, encoding="utf-8")
    (tmp_path / "early.nxlib").write_text(BAD, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("agent {", encoding="utf-8")
    result = run_check(tmp_path)
    files = [line.split(":")[0] for line in result.stdout.splitlines() if ": error " in line]
    assert files == [str(tmp_path / "early.nxlib"), str(tmp_path / "z" / "late.nx")]
    assert run_check(tmp_path).stdout == result.stdout


def test_not_utf8_empty_and_huge_files_get_diagnostics_not_tracebacks(tmp_path: Path) -> None:
    (tmp_path / "latin1.nx").write_bytes('agent A { prompt: "café" }\n'.encode("latin-1"))
    (tmp_path / "empty.nx").write_text("", encoding="utf-8")
    (tmp_path / "huge.nx").write_text("// x\n" * (2 * 1024 * 1024), encoding="utf-8")
    result = run_check(tmp_path)
    assert "Traceback" not in result.stderr
    out = result.stdout
    assert "latin1.nx:1:23: error NX090 file is not UTF-8" in out
    assert "empty.nx:1:1: info NX091" in out
    assert "huge.nx:1:1: error NX092 file too large" in out
    assert result.returncode == 1


def test_missing_path_and_usage_errors_exit_two(tmp_path: Path) -> None:
    assert run_check(tmp_path / "nope.nx").returncode == 2
    assert subprocess.run([sys.executable, "-m", "nexa_lsp", "check"], capture_output=True).returncode == 2
    assert (
        subprocess.run(
            [sys.executable, "-m", "nexa_lsp", "check", str(tmp_path), "--format", "xml"], capture_output=True
        ).returncode
        == 2
    )


def test_select_and_ignore_filter_codes(tmp_path: Path) -> None:
    path = tmp_path / "c.nx"
    path.write_text('flow main() { print "x"; }\n', encoding="utf-8")
    selected = run_check(path, "--select", "NX025")
    assert [line.split()[2] for line in selected.stdout.splitlines()[:-1]] == ["NX025"]
    assert selected.returncode == 0
    ignored = run_check(path, "--ignore", "NX02")
    assert ignored.returncode == 0
    assert "NX02" not in ignored.stdout


def test_fix_and_diff(tmp_path: Path) -> None:
    path = tmp_path / "d.nx"
    original = "flow main() { loop { break } until (done) }\n"
    path.write_text(original, encoding="utf-8")
    diff = run_check(path, "--diff", "--select", "NX0")
    assert "-flow main() { loop { break } until (done) }" in diff.stdout
    assert "+flow main { loop { break; } until (done) }" in diff.stdout
    assert path.read_text(encoding="utf-8") == original  # --diff never writes
    fixed = run_check(path, "--fix", "--select", "NX0")
    assert path.read_text(encoding="utf-8") == "flow main { loop { break; } until (done) }\n"
    assert fixed.returncode == 0
    assert "2 fixes applied" in fixed.stdout
