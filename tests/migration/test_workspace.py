"""Workspace migration status and "migrate workspace" (issue 14 item 2, analysis part)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from nexa_lsp.analysis.engine import check_source
from nexa_lsp.analysis.fixes import apply_edits
from nexa_lsp.analysis.migration.workspace import BLOCKED, DONE, READY, migrate_workspace, workspace_status
from nexa_lsp.syntax import Severity, VersionPath, parse_source
from nexa_lsp.syntax.diagnostics import TextEdit
from nexa_lsp.syntax.tree import absolute_span

ROOT = Path("/workspace")
AGENT = 'agent Writer { prompt: "写作 😀" }\n'
FILES = {
    ROOT / "ready.nx": "// 说明\n" + AGENT + 'flow main {\n    a = Writer.run("x")\n    b = Writer.run("y")\n}\n',
    ROOT / "blocked.nx": AGENT + "flow main {\n    😀 = 1\n}\n",
    ROOT / "loop.nx": AGENT + 'flow main {\n    note = "中文 😀"; loop { d = Writer.run("again") } until ("ok")\n}\n',
    ROOT / "done.nx": "nexa 3.0;\n" + AGENT + 'flow main { r = Writer.execute("x") }\n',
    ROOT / "lib" / "tools.nx": 'tool Pay { description: "p", parameters: {"a": "string"}, approval: "required" }\n'
    'agent Buyer uses Pay { prompt: "buy" }\n',
    ROOT / "main.nx": 'include "lib/tools.nx";\nflow main {\n    r = Buyer.run("buy")\n}\n',
    ROOT / "method.nx": 'flow helper { }\nflow main { x = helper.execute("go") }\n',
}


def test_every_file_gets_a_state_and_the_counts_add_up() -> None:
    status = workspace_status(FILES)
    states = {f.path.relative_to(ROOT).as_posix(): f.state for f in status.files}
    assert states == {
        "ready.nx": READY,
        "blocked.nx": BLOCKED,
        "loop.nx": BLOCKED,
        "done.nx": DONE,
        "lib/tools.nx": READY,
        "main.nx": BLOCKED,  # the included agent can call a tool that requires approval
        "method.nx": BLOCKED,  # backed out: on 3.0 `helper.execute` would be an error (NX151)
    }
    assert status.counts == {"ready": 2, "blocked": 4, "done": 1}


def test_blockers_have_code_range_and_message_in_lsp_terms() -> None:
    status = workspace_status(FILES)
    [loop] = [f for f in status.files if f.path.name == "loop.nx"]
    [blocker] = loop.blockers
    line = FILES[ROOT / "loop.nx"].splitlines()[2]
    start = line.index("Writer.run")
    assert blocker.code == "NXM002" and "an earlier pass of the loop" in blocker.message
    assert (blocker.start.line, blocker.start.character) == (2, len(line[:start].encode("utf-16-le")) // 2)
    [main] = [f for f in status.files if f.path.name == "main.nx"]
    assert [b.code for b in main.blockers] == ["NXM002"] and "`Pay`, which declares approval" in main.blockers[
        0
    ].message
    [method] = [f for f in status.files if f.path.name == "method.nx"]
    assert method.blockers[0].code == "NX151" and "migrating would add this error" in method.blockers[0].message
    assert (method.blockers[0].start.line, method.blockers[0].start.character) == (1, 16)
    payload = json.loads(json.dumps(status.as_json(lambda p: p.relative_to(ROOT).as_posix())))
    assert payload["counts"] == {"ready": 2, "blocked": 4, "done": 1}
    entry = next(f for f in payload["files"] if f["path"] == "loop.nx")
    assert entry["state"] == "blocked" and entry["blockers"][0]["range"]["start"]["line"] == 2


def test_migrate_workspace_migrates_ready_files_only_and_is_idempotent() -> None:
    status, migrated = migrate_workspace(FILES)
    assert sorted(p.name for p in migrated) == ["ready.nx", "tools.nx"]
    for f in status.of(READY):
        edits = [TextEdit(absolute_span(e.start_offset, e.end_offset), e.new_text) for e in f.edits]
        assert apply_edits(FILES[f.path], edits) == migrated[f.path]  # one edit set per file
    assert migrated[ROOT / "ready.nx"].startswith("// 说明\nnexa 3.0;\n")
    after = {**FILES, **migrated}
    for path, text in migrated.items():
        source = parse_source(text)
        assert source.path is VersionPath.NEXA_30
        before_errors = [d for d in check_source(parse_source(FILES[path])) if d.severity is Severity.ERROR]
        after_errors = [d for d in check_source(source) if d.severity is Severity.ERROR]
        assert len(after_errors) <= len(before_errors), path
    again, more = migrate_workspace(after)
    assert more == {}
    assert again.counts == {"ready": 0, "blocked": 4, "done": 3}


CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "nexa-2.x"


def test_corpus_every_ready_file_migrates_and_a_second_run_changes_nothing() -> None:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"the corpus is missing at {CORPUS}")
        pytest.skip(f"no corpus at {CORPUS}")
    with manifest.open(encoding="utf-8") as handle:
        rows = [row["path"] for row in csv.DictReader(handle, delimiter="\t")]
    texts = {CORPUS / rel: (CORPUS / rel).read_text(encoding="utf-8") for rel in rows}
    status, migrated = migrate_workspace(texts)
    assert sum(status.counts.values()) == len(texts)
    assert set(migrated) == {f.path for f in status.of(READY)}
    assert status.counts["ready"] >= 30
    again, more = migrate_workspace({**texts, **migrated})
    assert more == {}
    assert again.counts["done"] == status.counts["done"] + status.counts["ready"]
    assert again.counts["blocked"] == status.counts["blocked"]
