"""Editor side of the migration (issue 5): quick fixes, `source.fixAll.nexa`, the "Migrate this
file to Nexa 3.0" action and the `nexa.migrateFile` command, through a real server over stdio.
Every edit the server offers is applied here and the result re-parsed on the 3.0 path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from nexa_lsp.analysis.migration import migration_diagnostics
from nexa_lsp.syntax import Severity, VersionPath, parse_source
from nexa_lsp.text import LineIndex

from .conftest import CONFIG, PROFILES, TIMEOUT, diagnostics, initialize, open_document, uri, wait_until

AGENT = 'agent Writer { prompt: "写一首诗 😀" }\n'
MIGRATABLE = AGENT + (
    'flow main {\n    draft = Writer.run("主题 😀")\n    better = Writer.run("shorter")\n    print(better)\n}\n'
)
BLOCKED = AGENT + 'flow main {\n    loop { d = Writer.run("again") } until ("good")\n}\n'
V30_MIXED = (
    "nexa 3.0;\n" + AGENT + 'flow main {\n    draft = Writer.run("主题 😀")\n'
    '    try { x = Writer.run("more") } catch (e) { print(e) }\n}\n'
)


@pytest_lsp.fixture(config=CONFIG, params=PROFILES)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    await initialize(lsp_client, request.param, [tmp_path])
    lsp_client.folder = tmp_path  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()


def apply_text_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) the way an editor does: all against the same text."""
    lines = LineIndex(text)
    spans = sorted(
        (
            (
                lines.offset_of_utf16(e.range.start.line, e.range.start.character),
                lines.offset_of_utf16(e.range.end.line, e.range.end.character),
                e.new_text,
            )
            for e in edits
        ),
        key=lambda s: (s[0], s[1]),
    )
    out, cursor = [], 0
    for start, end, new in spans:
        assert start >= cursor, "overlapping edits"
        out.append(text[cursor:start])
        out.append(new)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def edits_for(edit: lsp.WorkspaceEdit, doc_uri: str) -> list[lsp.TextEdit]:
    found: list[lsp.TextEdit] = []
    if edit.changes:
        found.extend(edit.changes.get(doc_uri, []))
    for change in edit.document_changes or []:
        if isinstance(change, lsp.TextDocumentEdit) and change.text_document.uri == doc_uri:
            found.extend(e for e in change.edits if isinstance(e, lsp.TextEdit))
    return found


def errors_30(text: str) -> list[str]:
    source = parse_source(text)
    assert source.path is VersionPath.NEXA_30
    errors = [d.code for d in source.diagnostics if d.severity is Severity.ERROR]
    return errors + [d.code for d in migration_diagnostics(source) if d.severity is Severity.ERROR]


async def open_file(client: LanguageClient, name: str, text: str) -> str:
    path = client.folder / name  # type: ignore[attr-defined]
    path.write_text(text, encoding="utf-8")
    doc = uri(path)
    open_document(client, doc, text)
    await diagnostics(client, doc)
    return doc


async def actions(
    client: LanguageClient, doc: str, text: str, only: list[str] | None, diags: list[lsp.Diagnostic] | None = None
) -> list[lsp.CodeAction]:
    end_line = text.count("\n")
    result = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc),
            range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=end_line, character=0)),
            context=lsp.CodeActionContext(diagnostics=diags or [], only=only),
        )
    )
    return [a for a in result or [] if isinstance(a, lsp.CodeAction)]


async def test_migrate_action_inserts_the_declaration_and_applies_safe_rewrites(client: LanguageClient) -> None:
    doc = await open_file(client, "old.nx", MIGRATABLE)
    found = await actions(client, doc, MIGRATABLE, ["source.migrate.nexa"])
    [migrate] = [a for a in found if a.title == "Migrate this file to Nexa 3.0"]
    assert migrate.edit is not None
    migrated = apply_text_edits(MIGRATABLE, edits_for(migrate.edit, doc))
    assert migrated.startswith("nexa 3.0;\n")
    assert 'better = Writer.continue(draft, "shorter")' in migrated
    assert errors_30(migrated) == []


async def test_blocked_file_offers_no_migrate_action_and_the_command_names_the_blockers(client: LanguageClient) -> None:
    doc = await open_file(client, "loop.nx", BLOCKED)
    found = await actions(client, doc, BLOCKED, ["source.migrate.nexa"])
    assert [a.title for a in found] == []
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="nexa.migrateFile", arguments=[{"uri": doc}])
    )
    assert result["applied"] is False and result["remaining"] == ["NXM002"]


async def test_migrate_command_sends_the_edit_to_the_editor(client: LanguageClient) -> None:
    doc = await open_file(client, "cmd.nx", MIGRATABLE)
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="nexa.migrateFile", arguments=[{"uri": doc}])
    )
    assert result == {"applied": True, "remaining": []}
    sent = await wait_until(lambda: client.applied_edits, TIMEOUT)  # type: ignore[attr-defined]
    migrated = apply_text_edits(MIGRATABLE, edits_for(sent[-1].edit, doc))
    assert errors_30(migrated) == []


async def test_30_quick_fix_for_run_is_preferred_and_reparses(client: LanguageClient) -> None:
    doc = await open_file(client, "new.nx", V30_MIXED)
    diags = await diagnostics(client, doc)
    run_errors = [d for d in diags if d.code in ("NXM002", "NXM003")]
    assert {d.severity for d in run_errors} == {lsp.DiagnosticSeverity.Error}
    first = next(d for d in run_errors if d.code == "NXM002")
    found = await actions(client, doc, V30_MIXED, ["quickfix"], [first])
    execute = next(a for a in found if a.title.startswith("Use `Writer.execute(...)`"))
    assert execute.is_preferred and execute.edit is not None
    fixed = apply_text_edits(V30_MIXED, edits_for(execute.edit, doc))
    assert 'draft = Writer.execute("主题 😀")' in fixed
    assert parse_source(fixed).path is VersionPath.NEXA_30


async def test_every_offered_quick_fix_reparses_on_30(client: LanguageClient) -> None:
    doc = await open_file(client, "all.nx", V30_MIXED)
    diags = await diagnostics(client, doc)
    found = await actions(client, doc, V30_MIXED, ["quickfix"], diags)
    assert found
    for action in found:
        assert action.edit is not None
        fixed = apply_text_edits(V30_MIXED, edits_for(action.edit, doc))
        source = parse_source(fixed)
        assert source.path is VersionPath.NEXA_30
        assert [d for d in source.diagnostics if d.severity is Severity.ERROR] == [], action.title


async def test_unsafe_rewrites_are_labelled_and_never_in_fix_all(client: LanguageClient) -> None:
    doc = await open_file(client, "unsafe.nx", V30_MIXED)
    diags = await diagnostics(client, doc)
    in_try = next(d for d in diags if d.code == "NXM003")
    quick = await actions(client, doc, V30_MIXED, ["quickfix"], [in_try])
    labelled = [a.title for a in quick if a.title.endswith("(unsafe)")]
    assert labelled and "inside `try`" in in_try.message  # the title is short, the message says why
    [fix_all] = await actions(client, doc, V30_MIXED, ["source.fixAll.nexa"])
    assert fix_all.edit is not None
    fixed = apply_text_edits(V30_MIXED, edits_for(fix_all.edit, doc))
    assert 'draft = Writer.execute("主题 😀")' in fixed
    assert 'x = Writer.run("more")' in fixed  # the unsafe rewrite stays a decision for the user


async def test_24_hints_carry_no_single_rewrite(client: LanguageClient) -> None:
    doc = await open_file(client, "hints.nx", MIGRATABLE)
    diags = await diagnostics(client, doc)
    assert {str(d.code) for d in diags} >= {"NXM001", "NXM002", "NXM003"}
    assert {d.severity for d in diags if str(d.code).startswith("NXM")} == {lsp.DiagnosticSeverity.Information}
    run_hint = next(d for d in diags if d.code == "NXM002")
    quick = await actions(client, doc, MIGRATABLE, ["quickfix"], [run_hint])
    assert not [a for a in quick if a.title.startswith("Use `Writer.execute")]


async def test_edits_carry_the_document_version(client: LanguageClient) -> None:
    doc = await open_file(client, "versioned.nx", MIGRATABLE)
    [migrate] = await actions(client, doc, MIGRATABLE, ["source.migrate.nexa"])
    assert migrate.edit is not None
    caps = client.capabilities  # type: ignore[attr-defined]
    edit_caps = caps.workspace.workspace_edit if caps and caps.workspace else None
    if edit_caps is not None and edit_caps.document_changes:
        # versioned edits: the client refuses them if the document changed meanwhile
        assert migrate.edit.document_changes and not migrate.edit.changes
        change = migrate.edit.document_changes[0]
        assert isinstance(change, lsp.TextDocumentEdit) and change.text_document.version == 1
    else:  # a client without documentChanges (the Neovim 0.10 profile) gets plain changes
        assert migrate.edit.changes and not migrate.edit.document_changes


# ------------------------------------------------------------------ severity settings (VS Code profile)


@pytest_lsp.fixture(config=CONFIG, params=["visual_studio_code"])
async def vscode(lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    await initialize(lsp_client, request.param, [tmp_path])
    lsp_client.folder = tmp_path  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()


def _severities(diags: list[lsp.Diagnostic]) -> dict[str, lsp.DiagnosticSeverity | None]:
    return {str(d.code): d.severity for d in diags if str(d.code).startswith("NXM")}


async def _configure(client: LanguageClient, doc: str, settings: dict[str, Any], expected: dict[str, Any]) -> None:
    """Change the settings the way VS Code does and wait for the re-published diagnostics."""
    client.set_configuration({"diagnostics": settings}, section="nexa")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))

    def arrived() -> bool:
        mine = [p for p in client.published if p.uri == doc]  # type: ignore[attr-defined]
        return bool(mine) and _severities(list(mine[-1].diagnostics)) == expected

    await wait_until(arrived, TIMEOUT)


async def test_migration_findings_arrive_at_information_and_follow_the_setting(vscode: LanguageClient) -> None:
    doc = await open_file(vscode, "old.nx", MIGRATABLE)
    diags = await diagnostics(vscode, doc)
    assert _severities(diags) == {"NXM001": lsp.DiagnosticSeverity.Information, "NXM002": 3, "NXM003": 3}
    for word, severity in (
        ("hint", lsp.DiagnosticSeverity.Hint),
        ("warning", lsp.DiagnosticSeverity.Warning),
        ("error", lsp.DiagnosticSeverity.Error),
        ("information", lsp.DiagnosticSeverity.Information),
    ):
        expected = {"NXM001": severity, "NXM002": severity, "NXM003": severity}
        await _configure(vscode, doc, {"migrationSeverity": word}, expected)


async def test_a_per_code_override_changes_that_code(vscode: LanguageClient) -> None:
    doc = await open_file(vscode, "override.nx", MIGRATABLE)
    info, warning = lsp.DiagnosticSeverity.Information, lsp.DiagnosticSeverity.Warning
    await _configure(
        vscode, doc, {"severityOverrides": {"NXM002": "warning"}}, {"NXM001": info, "NXM002": warning, "NXM003": info}
    )
    hint = lsp.DiagnosticSeverity.Hint
    await _configure(
        vscode,
        doc,
        {"migrationSeverity": "hint", "severityOverrides": {"NXM003": "error"}},
        {"NXM001": hint, "NXM002": hint, "NXM003": lsp.DiagnosticSeverity.Error},
    )


async def test_30_rule_violations_stay_errors_and_bad_values_are_reported(vscode: LanguageClient) -> None:
    doc = await open_file(vscode, "new.nx", V30_MIXED)
    error = lsp.DiagnosticSeverity.Error
    await _configure(
        vscode,
        doc,
        {"migrationSeverity": "hint", "severityOverrides": {"NXM002": "hint", "NX999": "hint"}},
        {"NXM002": error, "NXM003": error},
    )
    logged = await wait_until(lambda: [m.message for m in vscode.log_messages if "severityOverrides" in m.message])
    assert "unknown code 'NX999'" in logged[0]


async def test_a_blocked_file_links_its_blockers_from_nxm001(client: LanguageClient) -> None:
    doc = await open_file(client, "linked.nx", BLOCKED)
    diags = await diagnostics(client, doc)
    nxm001 = next(d for d in diags if d.code == "NXM001")
    caps = client.capabilities  # type: ignore[attr-defined]
    publish = caps.text_document.publish_diagnostics if caps and caps.text_document else None
    if publish is None or not publish.related_information:
        assert nxm001.related_information is None  # a client without related information gets none
        return
    assert nxm001.related_information is not None
    [blocker] = nxm001.related_information
    assert blocker.location.uri == doc and blocker.message.startswith("blocks the migration: NXM002")
    run = next(d for d in diags if d.code == "NXM002")
    assert blocker.location.range == run.range
