"""`nexa-lsp check` output for CI: SARIF 2.1.0 (validated against the official schema),
GitHub annotations, statistics, --exit-zero, --output-file, the --migrate --dry-run summary
and the pre-commit hooks. Real subprocesses on real files."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from nexa_lsp.analysis.migration.workspace import workspace_status

from .test_check_cli import run_check

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
CORPUS = ROOT.parent / "shared" / "corpus" / "nexa-2.x"
AGENT = 'agent Writer { prompt: "写作 😀" }\n'
OLD = AGENT + 'flow main {\n    draft = Writer.run("主题")\n    better = Writer.run("more")\n    print(better)\n}\n'
BLOCKED = AGENT + 'flow main {\n    note = "😀"; loop { d = Writer.run("again") } until ("ok")\n}\n'
NEW = "nexa 3.0;\n" + AGENT + 'flow main {\n    r = Writer.run("a")\n    if (r == "ok") { print(r) }\n}\n'
BROKEN = AGENT + "flow main {\n    x = => 1\n}\n"


def _validate(log: dict[str, object]) -> None:
    jsonschema.validate(log, SCHEMA, cls=jsonschema.Draft4Validator)


def _workspace(tmp_path: Path) -> Path:
    for name, text in (("old.nx", OLD), ("loop.nx", BLOCKED), ("new.nx", NEW), ("broken.nx", BROKEN)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_sarif_has_rules_help_locations_and_fixes_and_validates(tmp_path: Path) -> None:
    folder = _workspace(tmp_path)
    run = run_check(folder, "--format", "sarif", cwd=folder)
    assert run.returncode == 1
    log = json.loads(run.stdout)
    _validate(log)
    [sarif_run] = log["runs"]
    rules = {rule["id"]: rule for rule in sarif_run["tool"]["driver"]["rules"]}
    assert "Why is this bad?" in rules["NXM002"]["help"]["text"] and rules["NXM002"]["help"]["markdown"]
    assert "NX001" in rules and "NX130" in rules
    results = sarif_run["results"]
    run_fix = next(r for r in results if r["ruleId"] == "NXM002" and r["level"] == "error")
    location = run_fix["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "new.nx", "uriBaseId": "SRCROOT"}
    assert location["region"]["startLine"] == 4 and location["region"]["startColumn"] == 9
    [fix] = run_fix["fixes"]
    assert fix["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "execute"
    assert {r["level"] for r in results if r["ruleId"].startswith("NXM") and "old.nx" in json.dumps(r)} == {"note"}
    blocked = next(r for r in results if r["ruleId"] == "NXM001" and "loop.nx" in json.dumps(r["locations"]))
    assert blocked["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_sarif_validates_for_every_corpus_file(tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"the corpus is missing at {CORPUS}")
        pytest.skip(f"no corpus at {CORPUS}")
    run = run_check(CORPUS, "--format", "sarif", cwd=CORPUS)
    log = json.loads(run.stdout)
    _validate(log)
    files = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.suffix in (".nx", ".nxlib")}
    reported = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert reported == files  # every corpus file has at least NXM001 or a syntax error
    # the same corpus declared 3.0: every rewrite becomes a fix in the log
    copy = tmp_path / "v3"
    for rel in files:
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_text("nexa 3.0;\n" + (CORPUS / rel).read_text(encoding="utf-8"), encoding="utf-8")
    v3 = json.loads(run_check(copy, "--format", "sarif", cwd=copy).stdout)
    _validate(v3)
    assert sum(len(r.get("fixes", [])) for r in v3["runs"][0]["results"]) > 100


def test_github_annotations(tmp_path: Path) -> None:
    folder = _workspace(tmp_path)
    run = run_check(folder / "new.nx", folder / "broken.nx", "--format", "github")
    lines = run.stdout.splitlines()
    assert run.returncode == 1 and lines
    pattern = re.compile(
        r"^::(error|warning|notice) file=[^,]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=NX[A-Z]*\d+::"
    )
    assert all(pattern.match(line) for line in lines), lines
    nxm002 = next(line for line in lines if "title=NXM002" in line)
    assert nxm002.startswith(f"::error file={folder / 'new.nx'},line=4,col=9,")
    assert any(line.startswith("::error") and "title=NX001" in line for line in lines)


def test_statistics_exit_zero_and_output_file(tmp_path: Path) -> None:
    folder = _workspace(tmp_path)
    stats = run_check(folder, "--statistics")
    rows = [line.split() for line in stats.stdout.splitlines()]
    counts = {row[1]: int(row[0]) for row in rows}
    assert counts["NXM001"] == 2 and counts["NXM002"] == 3 and counts["NX001"] == 1  # no NXM001 on a broken file
    assert any(row[1] == "NXM002" and row[2] == "[*]" for row in rows)  # the 3.0 rewrite is a safe fix
    as_json = json.loads(run_check(folder, "--statistics", "--format", "json").stdout)
    assert {row["code"]: row["count"] for row in as_json} == counts
    report = tmp_path / "out" / "report.sarif"
    report.parent.mkdir()
    quiet = run_check(folder, "--format", "sarif", "--output-file", report, "--exit-zero")
    assert quiet.returncode == 0 and quiet.stdout == ""
    _validate(json.loads(report.read_text(encoding="utf-8")))
    assert run_check(folder, "--exit-zero").returncode == 0
    assert run_check(folder / "missing.nx", "--exit-zero").returncode == 2  # I/O problems still fail


def test_migrate_dry_run_summary_in_text_json_and_markdown(tmp_path: Path) -> None:
    folder = _workspace(tmp_path)
    before = {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()}
    text = run_check(folder, "--migrate", "--dry-run")
    assert text.returncode == 1  # blocked files
    assert text.stdout.splitlines()[-1] == "4 files: 1 ready, 2 blocked, 1 done"
    assert f"{folder / 'old.nx'}: ready (2 rewrites)" in text.stdout
    assert f"  {folder / 'loop.nx'}:3:28: NXM002 " in text.stdout
    payload = json.loads(run_check(folder, "--migrate", "--dry-run", "--format", "json").stdout)
    texts = {p: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}
    assert payload["counts"] == workspace_status(texts).counts == {"ready": 1, "blocked": 2, "done": 1}
    markdown = run_check(folder, "--migrate", "--dry-run", "--format", "markdown").stdout
    assert markdown.startswith("## Migration to Nexa 3.0: 1 ready, 2 blocked, 1 done")
    assert "| blocked |" in markdown and "NXM002 at 3:28" in markdown
    assert {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()} == before  # nothing written
    assert run_check(folder, "--dry-run").returncode == 2  # --dry-run goes with --migrate


def test_corpus_dry_run_counts_equal_the_workspace_api() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"no corpus at {CORPUS}")
    payload = json.loads(run_check(CORPUS, "--migrate", "--dry-run", "--format", "json").stdout)
    texts = {p: p.read_text(encoding="utf-8") for p in CORPUS.rglob("*") if p.suffix in (".nx", ".nxlib")}
    assert payload["counts"] == workspace_status(texts).counts


def test_pre_commit_hooks_run_as_declared(tmp_path: Path) -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"nexa-lsp-check", "nexa-lsp-migrate"}
    folder = _workspace(tmp_path)
    names = [str(p) for p in sorted(folder.iterdir()) if re.search(hooks["nexa-lsp-check"]["files"], p.name)]
    launcher = shutil.which("nexa-lsp", path=str(Path(sys.executable).parent))
    assert launcher is not None  # the console script the hooks' entry names

    def hook(hook_id: str) -> subprocess.CompletedProcess[str]:
        entry = shlex.split(hooks[hook_id]["entry"])
        command = [launcher, *entry[1:], *names]  # pre-commit appends the staged file names
        return subprocess.run(command, capture_output=True, text=True, encoding="utf-8", timeout=120)

    check = hook("nexa-lsp-check")
    assert check.returncode == 1 and "error NX001" in check.stdout
    migrate = hook("nexa-lsp-migrate")
    assert migrate.returncode == 1  # loop.nx and broken.nx are blocked
    assert (folder / "old.nx").read_text(encoding="utf-8").startswith("nexa 3.0;\n")
    assert (folder / "loop.nx").read_text(encoding="utf-8") == BLOCKED
