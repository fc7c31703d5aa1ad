"""The migration rules see the agents, tools and flows of included files (issue 14 item 3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from nexa_lsp.analysis.migration import fresh_migration_diagnostics, migrate_source, migration_diagnostics
from nexa_lsp.syntax import Diagnostic, SourceFile, parse_source

from .helpers import V30

LIB = (
    'tool Pay { description: "支付", parameters: {"amount": "string"}, approval: "required" }\n'
    'tool Look { description: "look", parameters: {"q": "string"} }\n'
    'agent Buyer uses Pay { prompt: "buy" }\n'
    'agent Reader uses Look { prompt: "read" }\n'
    'agent Critic implements Review { prompt: "judge" }\n'
    "protocol Review { score: int }\n"
    'flow warm_up {\n    w = Writer.run("warm up")\n}\n'
)
HEAD = 'include "lib.nx";\nagent Writer { prompt: "写作" }\n'


def lint(text: str, lib: str = LIB) -> list[Diagnostic]:
    files = {"lib.nx": parse_source(lib)}
    return migration_diagnostics(parse_source(text), includes=lambda name, _path: files.get(name))


def only(found: list[Diagnostic], code: str) -> Diagnostic:
    [diag] = [d for d in found if d.code == code]
    return diag


def test_an_included_protocol_agent_makes_the_rewrite_unsafe() -> None:
    text = HEAD + 'flow main {\n    r = Critic.run("rate it")\n    print(r == "5")\n}\n'
    diag = only(lint(V30 + text), "NXM002")
    assert "Critic returns `Review`" in diag.message and not diag.fixes[0].safe
    without = migration_diagnostics(parse_source(V30 + text))  # the include not found: nothing known
    assert only(without, "NXM002").fixes[0].safe


def test_an_included_approval_tool_makes_the_rewrite_unsafe_and_needs_a_guard_on_30() -> None:
    text = HEAD + 'flow main {\n    r = Buyer.run("buy it")\n}\n'
    assert "`Pay`, which declares approval" in only(lint(V30 + text), "NXM002").message
    continuing = HEAD + 'flow main {\n    r = Buyer.execute("buy")\n    s = Buyer.continue(r, "more")\n}\n'
    guard = only(lint(V30 + continuing), "NXM010")
    assert "Buyer can call `Pay`, which requires approval" in guard.message


def test_an_agent_whose_included_tools_need_no_approval_returns_settled_runs() -> None:
    text = HEAD + 'flow main {\n    r = Reader.execute("read")\n    s = Reader.resume(r)\n}\n'
    diag = only(lint(V30 + text), "NXM013")
    assert "Reader can call no approval-required tool" in diag.message
    assert not [d for d in migration_diagnostics(parse_source(V30 + text)) if d.code == "NXM013"]


def test_history_is_shared_with_an_included_flow_that_runs_the_agent() -> None:
    text = HEAD + 'flow main {\n    warm_up()\n    draft = Writer.run("a poem")\n    print(draft)\n}\n'
    diag = only(lint(text), "NXM002")
    assert "flow `warm_up` (called on line 4) runs Writer" in diag.message
    assert migrate_source(text, includes=lambda name, _p: {"lib.nx": parse_source(LIB)}.get(name)).blocked
    assert not migrate_source(text).blocked  # without the include the history looks fresh


def test_kept_findings_follow_an_edit_of_the_included_file() -> None:
    text = HEAD + 'flow main {\n    r = Reader.run("read")\n    print(r)\n}\n'
    source = parse_source(text)
    lib = parse_source(LIB)
    files: dict[str, SourceFile] = {"lib.nx": lib}
    first = migration_diagnostics(source, includes=lambda name, _p: files.get(name))
    assert only(first, "NXM002").message.endswith("(new run id, session and budget)")
    edited = LIB.replace('parameters: {"q": "string"} }', 'parameters: {"q": "string"}, approval: "required" }')
    files["lib.nx"] = parse_source(edited, lib)
    kept = migration_diagnostics(source, includes=lambda name, _p: files.get(name))
    fresh = fresh_migration_diagnostics(parse_source(text), includes=lambda name, _p: files.get(name))
    assert [d.message for d in kept] == [d.message for d in fresh]
    assert "`Look`, which declares approval" in only(kept, "NXM002").message


def test_cli_migrate_reads_the_includes_from_disk(tmp_path: Path) -> None:
    (tmp_path / "lib.nx").write_text(LIB, encoding="utf-8")
    main = tmp_path / "main.nx"
    body = HEAD + 'flow main {\n    r = Buyer.run("buy it")\n    print(r)\n}\n'
    main.write_text(body, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "check", str(main), "--migrate"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert main.read_text(encoding="utf-8") == body
    assert "not migrated to Nexa 3.0" in run.stdout and "`Pay`, which declares approval" in run.stdout
