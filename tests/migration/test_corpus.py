"""Issue 5, done-when: every corpus file the 2.3.1 reference accepts is either migrated to a 3.0
file with zero errors or left unchanged with diagnostics naming what blocks it, and a second
`--migrate` changes nothing. Works on copies in tmp_path; the corpus is read where CI lays it
(`<repo>/../shared/corpus/nexa-2.x`) and never copied into the repository."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nexa_lsp.analysis.migration import migrate_source
from nexa_lsp.syntax import VersionPath, parse_source

from .helpers import errors_30

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "nexa-2.x"


def accepted() -> list[str]:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"the corpus is missing at {CORPUS}")
        pytest.skip(f"no corpus at {CORPUS}")
    with manifest.open(encoding="utf-8") as handle:
        return [row["path"] for row in csv.DictReader(handle, delimiter="\t") if row["accepted"] == "1"]


@pytest.fixture(scope="module")
def corpus_copy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    paths = accepted()
    root = tmp_path_factory.mktemp("corpus")
    for rel in paths:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS / rel, target)
    return root, paths


def test_every_accepted_file_migrates_cleanly_or_is_blocked_with_reasons() -> None:
    migrated = blocked = 0
    for rel in accepted():
        text = (CORPUS / rel).read_text(encoding="utf-8")
        result = migrate_source(text)
        if result.blocked:
            blocked += 1
            assert result.text == text and result.edits == ()
            assert all(b.message and b.code for b in result.blockers), rel
        else:
            migrated += 1
            assert result.changed, rel  # every accepted file is on the 2.4 path
            assert parse_source(result.text).path is VersionPath.NEXA_30
            assert errors_30(result.text) == [], rel
            again = migrate_source(result.text)
            assert not again.changed and not again.blocked, rel
    assert migrated + blocked == len(accepted()) == 67
    assert migrated >= 30, f"only {migrated} files migrate automatically"


def test_cli_migrate_over_a_copy_of_the_corpus_is_idempotent(corpus_copy: tuple[Path, list[str]]) -> None:
    root, paths = corpus_copy
    before = {rel: (root / rel).read_bytes() for rel in paths}
    run = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "check", str(root), "--migrate", "--format", "json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )
    assert run.returncode in (0, 1), run.stderr
    payload = json.loads(run.stdout)
    statuses = {Path(f["path"]).relative_to(root).as_posix(): f for f in payload["files"]}
    assert set(statuses) == set(paths)
    for rel, entry in statuses.items():
        status = entry["migration"]["status"]
        after = (root / rel).read_bytes()
        if status == "migrated":
            text = after.decode("utf-8")
            assert text.startswith("nexa 3.0;") or "\nnexa 3.0;" in text
            assert errors_30(text) == [], rel
            # what the migration owns: no migration error is left (include resolution and other
            # semantic checks are the same on both paths and not part of the migration)
            assert not [d for d in entry["diagnostics"] if d["severity"] == "error" and d["code"].startswith("NXM")]
        else:
            assert status == "not migrated", (rel, status)
            assert after == before[rel], rel
            assert entry["migration"]["blockers"], rel
            assert any(d["message"].startswith("not migrated to Nexa 3.0: ") for d in entry["diagnostics"]), rel
    snapshot = {rel: (root / rel).read_bytes() for rel in paths}
    second = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "check", str(root), "--migrate", "--format", "json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )
    assert {rel: (root / rel).read_bytes() for rel in paths} == snapshot
    summary = json.loads(second.stdout)["summary"]
    assert summary["migrated"] == 0
    assert summary["already_30"] == payload["summary"]["migrated"]
    assert summary["not_migrated"] == payload["summary"]["not_migrated"]
