"""Diagnostics over stdio: push or pull by client capability, versions, includes, settings."""

from __future__ import annotations

import asyncio
import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from nexa_lsp.analysis.engine import CheckSettings, check_source
from nexa_lsp.cli import main as cli_main
from nexa_lsp.syntax.source import parse_source
from tests.server.conftest import (
    CONFIG,
    PROFILES,
    close_document,
    codes,
    diagnostics,
    edit,
    initialize,
    is_push,
    open_document,
    position_of,
    uri,
    wait_until,
)
from tests.server.sources import BROKEN_NAMES, LIB, MAIN

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ws")
    one, two = root / "one", root / "two"
    one.mkdir()
    two.mkdir()
    (one / "main.nx").write_text(MAIN, encoding="utf-8")
    (one / "lib.nxlib").write_text(LIB, encoding="utf-8")
    (two / "other.nx").write_text(BROKEN_NAMES, encoding="utf-8")
    return {"one": one, "two": two}


@pytest_lsp.fixture(scope="module", params=PROFILES, config=CONFIG)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: dict[str, Path]) -> Any:
    # the second folder turns migration hints off; the first keeps the defaults
    lsp_client.set_configuration(
        {"diagnostics": {"migrationHints": False}}, section="nexa", scope_uri=uri(workspace["two"])
    )
    lsp_client.init_result = await initialize(  # type: ignore[attr-defined]
        lsp_client, request.param, [workspace["one"], workspace["two"]], {"diagnostics": {"debounceMs": 50}}
    )
    yield
    await lsp_client.shutdown_session()


def cli_findings(path: Path, *extra: str) -> list[tuple[str, int, int, int, int]]:
    out = io.StringIO()
    with redirect_stdout(out):
        cli_main(["check", "--format", "json", *extra, str(path)])
    data = json.loads(out.getvalue())
    return sorted(
        (
            d["code"],
            d["range"]["start"]["line"],
            d["range"]["start"]["character"],
            d["range"]["end"]["line"],
            d["range"]["end"]["character"],
        )
        for d in data["files"][0]["diagnostics"]
    )


def lsp_findings(items: list[lsp.Diagnostic]) -> list[tuple[str, int, int, int, int]]:
    return sorted(
        (str(d.code), d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
        for d in items
    )


async def test_initialize_advertises_what_the_server_does(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.position_encoding == lsp.PositionEncodingKind.Utf16
    sync = caps.text_document_sync
    assert isinstance(sync, lsp.TextDocumentSyncOptions) and sync.change == lsp.TextDocumentSyncKind.Incremental
    assert caps.diagnostic_provider is not None and caps.diagnostic_provider.inter_file_dependencies
    assert caps.diagnostic_provider.workspace_diagnostics
    assert caps.hover_provider and caps.definition_provider and caps.references_provider
    assert caps.document_highlight_provider and caps.document_symbol_provider and caps.workspace_symbol_provider
    assert caps.rename_provider == lsp.RenameOptions(prepare_provider=True)
    assert caps.completion_provider is not None and list(caps.completion_provider.trigger_characters or []) == ["."]
    tokens = caps.semantic_tokens_provider
    assert isinstance(tokens, lsp.SemanticTokensOptions) and tokens.range
    assert tokens.full == lsp.SemanticTokensFullDelta(delta=True)
    assert caps.folding_range_provider and caps.selection_range_provider
    actions = caps.code_action_provider
    assert isinstance(actions, lsp.CodeActionOptions)
    assert {"quickfix", "source.fixAll.nexa"} <= {str(k) for k in actions.code_action_kinds or []}
    assert caps.execute_command_provider is not None
    assert "nexa.migrateFile" in caps.execute_command_provider.commands


async def test_editor_and_cli_report_the_same_diagnostics(client: LanguageClient, workspace: dict[str, Path]) -> None:
    path = workspace["one"] / "main.nx"
    doc = uri(path)
    open_document(client, doc, MAIN)
    items = await diagnostics(client, doc, 1)
    assert lsp_findings(items) == cli_findings(path)
    assert all(d.source == "nexa" for d in items)
    close_document(client, doc)


async def test_push_or_pull_follows_the_client(client: LanguageClient, workspace: dict[str, Path]) -> None:
    doc = uri(workspace["two"] / "other.nx")
    open_document(client, doc, BROKEN_NAMES)
    items = await diagnostics(client, doc, 1)
    undefined = [d for d in items if d.code == "NX101"]
    assert len(undefined) == 1 and "did you mean `Writer`?" in undefined[0].message
    assert undefined[0].range.start == position_of(BROKEN_NAMES, "Writr")
    if not is_push(client):
        assert not [p for p in client.published if p.uri == doc]  # type: ignore[attr-defined]
        report = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=doc))
        )
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        again = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(
                text_document=lsp.TextDocumentIdentifier(uri=doc), previous_result_id=report.result_id
            )
        )
        assert isinstance(again, lsp.RelatedUnchangedDocumentDiagnosticReport)
    close_document(client, doc)


async def test_edits_are_debounced_and_never_published_stale(
    client: LanguageClient, workspace: dict[str, Path]
) -> None:
    doc = uri(workspace["two"] / "edited.nx")
    open_document(client, doc, BROKEN_NAMES)
    await diagnostics(client, doc, 1)
    # five quick single-character edits inside the name `Writr`: Writer, WriteXr ... WriteXXXer
    at = position_of(BROKEN_NAMES, "Writr", 4)
    for version, char in enumerate("eXXXe", start=2):
        pos = lsp.Position(at.line, at.character + version - 2)
        edit(client, doc, version, pos, pos, char)
    expected = BROKEN_NAMES.replace("Writr", "WriteXXXer")
    items = await diagnostics(client, doc, 6)
    undefined = [d for d in items if d.code == "NX101"]
    assert [d.range.start for d in undefined] == [position_of(expected, "WriteXXXer")]
    assert undefined[0].range.end.character - undefined[0].range.start.character == len("WriteXXXer")
    if is_push(client):
        versions = [p.version for p in client.published if p.uri == doc]  # type: ignore[attr-defined]
        assert versions == sorted(versions) and versions[-1] == 6
        assert len(versions) < 6  # the quick edits were checked once, not five times
    close_document(client, doc)
    if is_push(client):
        cleared = await wait_until(
            lambda: [
                p
                for p in client.published  # type: ignore[attr-defined]
                if p.uri == doc and p.version is None
            ]
        )
        assert list(cleared[-1].diagnostics) == []


async def test_includes_are_read_from_disk(client: LanguageClient, workspace: dict[str, Path]) -> None:
    doc = uri(workspace["one"] / "main.nx")
    open_document(client, doc, MAIN)
    items = await diagnostics(client, doc, 1)
    assert "NX101" not in codes(items) and "NX102" not in codes(items)  # Formatter comes from lib.nxlib
    missing = MAIN.replace('include "lib.nxlib";', 'include "nowhere.nxlib";')
    edit(client, doc, 2, lsp.Position(0, 0), lsp.Position(0, len('include "lib.nxlib";')), 'include "nowhere.nxlib";')
    items = await diagnostics(client, doc, 2)
    assert {"NX140", "NX102"} <= set(codes(items))
    [not_found] = [d for d in items if d.code == "NX140"]
    assert not_found.range.start == position_of(missing, 'include "nowhere')
    close_document(client, doc)


async def test_an_open_included_file_updates_its_includers(client: LanguageClient, workspace: dict[str, Path]) -> None:
    main_doc, lib_doc = uri(workspace["one"] / "main.nx"), uri(workspace["one"] / "lib.nxlib")
    open_document(client, main_doc, MAIN)
    open_document(client, lib_doc, LIB)
    assert "NX102" not in codes(await diagnostics(client, main_doc, 1))
    start = position_of(LIB, "Formatter")
    edit(client, lib_doc, 2, start, lsp.Position(start.line, start.character + len("Formatter")), "Stylist")
    if is_push(client):
        found = await wait_until(
            lambda: [
                p
                for p in client.published  # type: ignore[attr-defined]
                if p.uri == main_doc and "NX102" in codes(list(p.diagnostics))
            ]
        )
        assert found
    else:
        assert "NX102" in codes(await diagnostics(client, main_doc))
    close_document(client, lib_doc)
    close_document(client, main_doc)


async def test_settings_per_workspace_folder(client: LanguageClient, workspace: dict[str, Path]) -> None:
    text = 'agent A { prompt: "p" }\nflow f {\n    x = A.run("q")\n}\n'
    source = parse_source(text)
    with_hints = sorted(d.code for d in check_source(source, None, CheckSettings(migration_hints=True)))
    without = sorted(d.code for d in check_source(source, None, CheckSettings(migration_hints=False)))
    assert with_hints != without
    one, two = uri(workspace["one"] / "hints.nx"), uri(workspace["two"] / "hints.nx")
    open_document(client, one, text)
    open_document(client, two, text)
    assert codes(await diagnostics(client, one, 1)) == with_hints
    assert codes(await diagnostics(client, two, 1)) == without
    close_document(client, one)
    close_document(client, two)


async def test_configuration_changes_apply_to_open_documents(
    client: LanguageClient, workspace: dict[str, Path]
) -> None:
    text = 'agent A { prompt: "p" }\nflow f {\n    x = A.run("q")\n}\n'
    doc = uri(workspace["one"] / "config.nx")
    open_document(client, doc, text)
    before = codes(await diagnostics(client, doc, 1))
    client.set_configuration({"diagnostics": {"migrationHints": False}}, section="nexa")
    published = len(client.published)  # type: ignore[attr-defined]
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    if is_push(client):
        await wait_until(
            lambda: [
                p
                for p in client.published[published:]  # type: ignore[attr-defined]
                if p.uri == doc
            ]
        )
        after = codes(await diagnostics(client, doc, 1))
    else:  # the server asks the client for the new settings first; pull until they apply
        for _ in range(200):
            after = codes(await diagnostics(client, doc))
            if after != before:
                break
            await asyncio.sleep(0.02)
    assert len(after) < len(before)
    client.set_configuration({}, section="nexa")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    for _ in range(200):  # back to the defaults
        if codes(await diagnostics(client, doc)) == before:
            break
        await asyncio.sleep(0.02)
    assert codes(await diagnostics(client, doc)) == before
    close_document(client, doc)


async def test_workspace_diagnostics_cover_files_not_open(client: LanguageClient, workspace: dict[str, Path]) -> None:
    doc = uri(workspace["one"] / "main.nx")
    open_document(client, doc, MAIN)
    await diagnostics(client, doc, 1)
    report = await client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(previous_result_ids=[]))
    by_uri = {item.uri: item for item in report.items}
    assert by_uri[doc].version == 1  # the open document, at the editor's version
    other = by_uri[uri(workspace["two"] / "other.nx")]  # read from disk
    assert isinstance(other, lsp.WorkspaceFullDocumentDiagnosticReport) and other.version is None
    assert "NX101" in codes(list(other.items))
    held = asyncio.ensure_future(
        client.workspace_diagnostic_async(
            lsp.WorkspaceDiagnosticParams(
                previous_result_ids=[lsp.PreviousResultId(uri=i.uri, value=i.result_id or "") for i in report.items]
            )
        )
    )
    await asyncio.sleep(0.5)
    assert not held.done()  # nothing changed since those results: the request is held (long-poll)
    at = position_of(MAIN, "    print(draft)")
    edit(client, doc, 2, at, at, '    x = Nobody.run("y")\n')  # a new finding in the open document
    again = await asyncio.wait_for(held, 20)
    changed = [i for i in again.items if not isinstance(i, lsp.WorkspaceUnchangedDocumentDiagnosticReport)]
    assert [i.uri for i in changed] == [doc]  # every other file: kind "unchanged"
    assert {i.uri for i in again.items} == set(by_uri)
    close_document(client, doc)


async def test_a_created_include_file_is_picked_up(client: LanguageClient, workspace: dict[str, Path]) -> None:
    name = f"later-{id(client)}.nxlib"
    text = f'include "{name}";\nflow f {{\n    x = Later.run("a")\n}}\n'
    doc = uri(workspace["one"] / "later.nx")
    open_document(client, doc, text)
    assert {"NX140", "NX101"} <= set(codes(await diagnostics(client, doc, 1)))
    created = workspace["one"] / name
    created.write_text('agent Later { prompt: "p" }\n', encoding="utf-8")
    published = len(client.published)  # type: ignore[attr-defined]
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=uri(created), type=lsp.FileChangeType.Created)])
    )
    if is_push(client):
        await wait_until(
            lambda: [
                p
                for p in client.published[published:]  # type: ignore[attr-defined]
                if p.uri == doc
            ]
        )
    for _ in range(200):
        now = codes(await diagnostics(client, doc, 1))
        if "NX140" not in now:
            break
        await asyncio.sleep(0.02)
    assert "NX140" not in now and "NX101" not in now
    close_document(client, doc)
    created.unlink()
