"""`migrate_source`: the declaration plus every safe rewrite, verified, all or nothing, idempotent."""

from __future__ import annotations

from nexa_lsp.analysis.fixes import apply_edits
from nexa_lsp.analysis.migration import migrate_source
from nexa_lsp.syntax import VersionPath, parse_source

from .helpers import errors_30

AGENT = 'agent Writer { prompt: "写作" }\n'
PROGRAM = AGENT + (
    'flow main {\n    draft = Writer.run("一首诗 😀")\n    better = Writer.run("shorter")\n    print(better)\n}\n'
)


def test_migrates_with_declaration_and_rewrites_and_edits_reproduce_the_text() -> None:
    result = migrate_source(PROGRAM)
    assert result.migrated and not result.blocked and not result.was_30
    assert result.text.startswith("nexa 3.0;\n")
    assert 'draft = Writer.execute("一首诗 😀")' in result.text
    assert 'better = Writer.continue(draft, "shorter")' in result.text
    assert apply_edits(PROGRAM, result.edits) == result.text
    assert [d.code for d, _fix in result.applied] == ["NXM002", "NXM003"]
    assert errors_30(result.text) == []


def test_idempotent() -> None:
    once = migrate_source(PROGRAM)
    twice = migrate_source(once.text)
    assert twice.was_30 and not twice.changed and not twice.blocked and twice.edits == ()


def test_blocked_file_is_left_unchanged_with_the_blockers_named() -> None:
    text = AGENT + 'flow main {\n    Writer.run("a")\n    Writer.run("b")\n}\n'
    result = migrate_source(text)
    assert result.blocked and not result.changed and result.text == text and result.edits == ()
    [blocker] = result.blockers
    assert blocker.code == "NXM003"
    assert parse_source(text).lines.line_of(blocker.span.start) == 3
    assert "not kept in a variable" in blocker.message


def test_syntax_errors_and_bad_declarations_block() -> None:
    broken = migrate_source('flow main( { x = Writer.run("a") }\n')
    assert broken.blocked and broken.blockers[0].code.startswith("NX0")
    bad_version = migrate_source("nexa 3.7;\n" + AGENT)
    assert bad_version.blocked and bad_version.blockers[0].code == "NX010"


def test_declaration_placement() -> None:
    assert migrate_source("#!/usr/bin/env nexa\n" + AGENT).text == "#!/usr/bin/env nexa\nnexa 3.0;\n" + AGENT
    assert migrate_source("\ufeff" + AGENT).text == "\ufeffnexa 3.0;\n" + AGENT
    explicit = migrate_source("// header\nnexa 2.4;\n" + AGENT)
    assert explicit.text == "// header\nnexa 3.0;\n" + AGENT
    assert parse_source(explicit.text).path is VersionPath.NEXA_30


def test_file_without_runs_only_gets_the_declaration() -> None:
    result = migrate_source(AGENT)
    assert result.migrated and result.text == "nexa 3.0;\n" + AGENT and result.applied == ()


def test_already_30_files_get_their_remaining_safe_rewrites() -> None:
    text = "nexa 3.0;\n" + AGENT + 'flow main { r = Writer.run("a") }\n'
    result = migrate_source(text)
    assert result.was_30 and result.migrated
    assert 'r = Writer.execute("a")' in result.text
    clean = "nexa 3.0;\n" + AGENT + 'flow main { r = Writer.execute("a") }\n'
    assert not migrate_source(clean).changed


def test_notes_say_which_approvals_start_to_apply() -> None:
    text = (
        'tool Pay { description: "pay", parameters: {"amount": "string"}, approval: "required" }\n'
        'agent Clerk { prompt: "file it" }\nflow main { r = Clerk.run("file the form") }\n'
    )
    result = migrate_source(text)
    assert result.migrated
    assert any("`Pay`" in note and "pause" in note for note in result.notes)


def test_crlf_and_non_ascii_offsets_survive() -> None:
    text = PROGRAM.replace("\n", "\r\n")
    result = migrate_source(text)
    assert result.migrated
    assert 'Writer.execute("一首诗 😀")' in result.text
    assert result.text.startswith("nexa 3.0;\r\n") and "\n" not in result.text.replace("\r\n", "")
    assert errors_30(result.text) == []
