"""Short action titles, blockers linked from NXM001, `nexa 3.0;` after the header comments
(issue 14 items 4 and 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexa_lsp.analysis.engine import CheckSettings, check_source
from nexa_lsp.analysis.migration import migrate_source, migration_diagnostics
from nexa_lsp.cli.check import DiskIncludes
from nexa_lsp.ide.actions import MAX_TITLE, code_actions, migration_plan
from nexa_lsp.syntax import VersionPath, parse_source

from .helpers import errors_30, only

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "nexa-2.x"
LONG = (
    'tool PublishToTheCompanyBlog { description: "p", parameters: {"b": "string"}, approval: "required" }\n'
    'agent ResearchAssistantForQuarterlyReports uses PublishToTheCompanyBlog { prompt: "研究" }\n'
    'agent AnotherAgentWithAnEvenLongerNameThanThat { prompt: "p" }\n'
    "flow main {\n"
    '    ResearchAssistantForQuarterlyReports.run("first 😀")\n'
    '    ResearchAssistantForQuarterlyReports.run("second")\n'
    '    quarterly_report_draft_number_one = AnotherAgentWithAnEvenLongerNameThanThat.run("a")\n'
    '    x = AnotherAgentWithAnEvenLongerNameThanThat.run("b") == "c"\n'
    '    r = ResearchAssistantForQuarterlyReports.execute("go")\n'
    '    s = ResearchAssistantForQuarterlyReports.continue(r, "on")\n'
    "    t = AnotherAgentWithAnEvenLongerNameThanThat.resume(r)\n"
    "}\n"
)


def _texts() -> list[tuple[str, str]]:
    if not CORPUS.is_dir():
        pytest.skip(f"no corpus at {CORPUS}")
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".nx", ".nxlib"))
    return [(str(p), p.read_text(encoding="utf-8")) for p in files]


def _all_actions(path: Path | None, text: str) -> list[str]:
    source = parse_source(text)
    includes = DiskIncludes()
    diagnostics = check_source(source, lambda inc, _p: includes(inc, path), CheckSettings())
    found = code_actions(source, diagnostics, 0, len(text), None, lambda: migration_plan(source))
    return [a.title for a in found]


def test_every_action_offered_on_the_corpus_has_a_short_title() -> None:
    titles: list[str] = []
    for name, text in _texts():
        for variant in (text, "nexa 3.0;\n" + text):  # on 3.0 every rewrite is a quick fix
            titles.extend(_all_actions(Path(name), variant))
    titles.extend(_all_actions(None, LONG))
    titles.extend(_all_actions(None, "nexa 3.0;\n" + LONG))
    assert len(titles) > 300
    too_long = sorted({t for t in titles if len(t) > MAX_TITLE})
    assert too_long == []
    assert any(t.endswith("(unsafe)") for t in titles) and "Migrate this file to Nexa 3.0" in titles


def test_long_names_are_shortened_in_titles_not_in_edits() -> None:
    found = [d for d in migration_diagnostics(parse_source("nexa 3.0;\n" + LONG)) if d.fixes]
    assert found
    for diag in found:
        for fix in diag.fixes:
            assert len(fix.title) <= MAX_TITLE - len(" (unsafe)"), fix.title
    execute = next(f for d in found for f in d.fixes if "execute" in f.title)
    assert "…" in execute.title
    assert any(
        "ResearchAssistantForQuarterlyReports.execute(" in e.new_text or e.new_text == "execute" for e in execute.edits
    )


BLOCKED = (
    'agent Writer { prompt: "写" }\n'
    "flow main {\n"
    '    loop { d = Writer.run("again") } until ("good")\n'
    '    ok = wait_for_human("publish?")\n'
    "}\n"
)


def test_a_blocked_file_links_every_blocker_with_its_location() -> None:
    diag = only(BLOCKED, "NXM001")
    assert "blocked by 2 findings" in diag.message
    linked = [(BLOCKED[r.span.start : r.span.end], r.message.split(" ", 4)[3]) for r in diag.related]
    assert linked == [('Writer.run("again")', "NXM002"), ('wait_for_human("publish?")', "NXM005")]
    assert all(r.message.startswith("blocks the migration: NXM00") for r in diag.related)
    plan = migration_plan(parse_source(BLOCKED))
    assert plan.edits is None and plan.blockers == ["NXM002", "NXM005"]
    assert [(b.code, BLOCKED[b.start : b.end]) for b in plan.blocked_by] == [
        ("NXM002", 'Writer.run("again")'),
        ("NXM005", 'wait_for_human("publish?")'),
    ]


HEADERS = [
    ('// Copyright 2024 示例\n// SPDX-License-Identifier: MIT\n\nagent A { prompt: "p" }\n', 2),
    ('/*\n * Licence text\n */\nagent A { prompt: "p" }\n', 3),
    ('#!/usr/bin/env nexa\n// what this does\nagent A { prompt: "p" }\n', 2),
    ('\ufeff// with a BOM\r\n\r\nagent A { prompt: "p" }\r\n', 1),
    ('agent A { prompt: "p" }\n// a comment after code stays where it is\n', 0),
    ('/* inline */ agent A { prompt: "p" }\n', 1),
]


@pytest.mark.parametrize(("text", "line"), HEADERS)
def test_the_declaration_goes_after_the_leading_comments(text: str, line: int) -> None:
    result = migrate_source(text)
    assert result.migrated
    lines = result.text.splitlines()
    assert lines[line].strip() == "nexa 3.0;", result.text
    [declaration] = result.edits  # one insertion, nothing else touched
    assert declaration.span.start == declaration.span.end and declaration.new_text.strip() == "nexa 3.0;"
    at = declaration.span.start
    assert result.text == text[:at] + declaration.new_text + text[at:]
    source = parse_source(result.text)
    assert source.path is VersionPath.NEXA_30 and errors_30(result.text) == []
    assert not migrate_source(result.text).changed
