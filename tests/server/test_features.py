"""Language features over stdio, with the VS Code and Neovim capability profiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.server.conftest import (
    CONFIG,
    PROFILES,
    close_document,
    diagnostics,
    edit,
    initialize,
    open_document,
    position_of,
    uri,
    utf16,
)
from tests.server.sources import LIB, MAIN, UNICODE

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIXABLE = """agent A {
    prompt: "p",
    stream: "true",
    cache: "false"
}
"""
NEXA30 = """nexa 3.0;
agent A { prompt: "p" }
flow f {
    r = A.execute("x")
    print(r.output)
}
"""
MIGRATABLE = """agent A { prompt: "p" }
flow f {
    x = A.run("q")
    print(x)
}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("features")
    (root / "main.nx").write_text(MAIN, encoding="utf-8")
    (root / "lib.nxlib").write_text(LIB, encoding="utf-8")
    (root / "unicode.nx").write_text(UNICODE, encoding="utf-8")
    return root


@pytest_lsp.fixture(scope="module", params=PROFILES, config=CONFIG)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, folder: Path) -> Any:
    await initialize(lsp_client, request.param, [folder], {"diagnostics": {"debounceMs": 0}})
    for name, text in (("main.nx", MAIN), ("unicode.nx", UNICODE)):
        open_document(lsp_client, uri(folder / name), text)
    yield
    await lsp_client.shutdown_session()


def doc(folder: Path, name: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri(folder / name))


def snippet_client(client: LanguageClient) -> bool:
    caps = client.capabilities
    item = (
        caps.text_document.completion.completion_item
        if caps and caps.text_document and caps.text_document.completion
        else None
    )
    return bool(item and item.snippet_support)


async def test_hover_describes_an_agent(client: LanguageClient, folder: Path) -> None:
    pos = position_of(MAIN, "Analyst.run")
    found = await client.text_document_hover_async(lsp.HoverParams(doc(folder, "main.nx"), pos))
    assert found is not None and isinstance(found.contents, lsp.MarkupContent)
    assert found.contents.kind == lsp.MarkupKind.Markdown
    assert "agent Analyst uses Lookup, Formatter implements Report" in found.contents.value
    assert "请用中文回答" in found.contents.value
    assert found.range == lsp.Range(pos, lsp.Position(pos.line, pos.character + len("Analyst")))


async def test_hover_on_the_version_declaration(client: LanguageClient, folder: Path) -> None:
    target = uri(folder / "v30.nx")
    open_document(client, target, NEXA30)
    found = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(target), lsp.Position(0, 2))
    )
    assert found is not None and "Nexa 3.0 path" in found.contents.value  # type: ignore[union-attr]
    close_document(client, target)


async def test_completion_of_agent_properties_respects_snippet_support(client: LanguageClient, folder: Path) -> None:
    text = MAIN.replace('    role: "Careful analyst",\n', "    ro\n")
    target = uri(folder / "props.nx")
    open_document(client, target, text)
    pos = position_of(text, "    ro\n", 6)
    result = await client.text_document_completion_async(lsp.CompletionParams(lsp.TextDocumentIdentifier(target), pos))
    assert isinstance(result, lsp.CompletionList)
    role = next(i for i in result.items if i.label == "role")
    assert role.kind == lsp.CompletionItemKind.Property
    typed = lsp.Range(lsp.Position(pos.line, pos.character - 2), pos)
    replaced, inserted = edit_of(result, role)
    assert replaced == typed
    if snippet_client(client):
        assert role.insert_text_format == lsp.InsertTextFormat.Snippet and inserted == 'role: "$1"'
    else:
        assert role.insert_text_format == lsp.InsertTextFormat.PlainText and inserted == "role: "
    close_document(client, target)


def edit_of(result: lsp.CompletionList, item: lsp.CompletionItem) -> tuple[lsp.Range, str]:
    """The range an item replaces and its text (per item, or from the list's defaults)."""
    if isinstance(item.text_edit, lsp.TextEdit):
        return item.text_edit.range, item.text_edit.new_text
    assert result.item_defaults is not None and isinstance(result.item_defaults.edit_range, lsp.Range)
    return result.item_defaults.edit_range, item.text_edit_text or item.label


async def test_completion_documents_declarations(client: LanguageClient, folder: Path) -> None:
    text = MAIN.replace("    print(draft)\n", "    Ana\n")
    target = uri(folder / "docs.nx")
    open_document(client, target, text)
    result = await client.text_document_completion_async(
        lsp.CompletionParams(lsp.TextDocumentIdentifier(target), position_of(text, "    Ana\n", 7))
    )
    assert isinstance(result, lsp.CompletionList)
    [analyst] = [i for i in result.items if i.label == "Analyst"]
    if analyst.documentation is None:  # the client resolves documentation lazily
        analyst = await client.completion_item_resolve_async(analyst)
    docs = analyst.documentation
    assert isinstance(docs, lsp.MarkupContent) and "Careful analyst" in docs.value
    close_document(client, target)


async def test_completion_of_agent_methods_follows_the_path(client: LanguageClient, folder: Path) -> None:
    async def methods(name: str, text: str, after: str) -> list[str]:
        target = uri(folder / name)
        open_document(client, target, text)
        result = await client.text_document_completion_async(
            lsp.CompletionParams(
                lsp.TextDocumentIdentifier(target),
                position_of(text, after, len(after)),
                lsp.CompletionContext(lsp.CompletionTriggerKind.TriggerCharacter, "."),
            )
        )
        close_document(client, target)
        assert isinstance(result, lsp.CompletionList)
        return [i.label for i in result.items]

    assert await methods("m24.nx", MAIN.replace("Analyst.run(topic)", "Analyst."), "Analyst.") == ["run"]
    assert await methods("m30.nx", NEXA30.replace('A.execute("x")', "A."), "r = A.") == [
        "execute",
        "continue",
        "resume",
    ]
    members = await methods("m30b.nx", NEXA30.replace("r.output", "r."), "print(r.")
    assert members[:4] == ["output", "status", "success", "settled"]


async def test_definition_of_a_name_from_an_included_file(client: LanguageClient, folder: Path) -> None:
    found = await client.text_document_definition_async(
        lsp.DefinitionParams(doc(folder, "main.nx"), position_of(MAIN, "Formatter"))
    )
    assert isinstance(found, list) and len(found) == 1
    assert found[0].uri == uri(folder / "lib.nxlib")
    assert found[0].range.start == position_of(LIB, "Formatter")


async def test_references_across_included_files(client: LanguageClient, folder: Path) -> None:
    found = await client.text_document_references_async(
        lsp.ReferenceParams(
            text_document=doc(folder, "main.nx"),
            position=position_of(MAIN, "Formatter"),
            context=lsp.ReferenceContext(include_declaration=True),
        )
    )
    where = sorted((Path(r.uri.removeprefix("file://")).name, r.range.start.line) for r in found or [])
    assert where == [("lib.nxlib", 0), ("lib.nxlib", 5), ("main.nx", 9)]


async def test_rename_across_files_and_refusals(client: LanguageClient, folder: Path) -> None:
    pos = position_of(MAIN, "Formatter")
    prepared = await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(doc(folder, "main.nx"), pos))
    assert isinstance(prepared, lsp.PrepareRenamePlaceholder) and prepared.placeholder == "Formatter"
    result = await client.text_document_rename_async(lsp.RenameParams(doc(folder, "main.nx"), pos, "Stylist"))
    assert result is not None and result.changes is not None
    assert {Path(u.removeprefix("file://")).name: len(e) for u, e in result.changes.items()} == {
        "main.nx": 1,
        "lib.nxlib": 2,
    }
    with pytest.raises(JsonRpcException, match="keyword"):
        await client.text_document_rename_async(lsp.RenameParams(doc(folder, "main.nx"), pos, "agent"))
    nothing = await client.text_document_prepare_rename_async(
        lsp.PrepareRenameParams(doc(folder, "main.nx"), position_of(MAIN, "role"))
    )
    assert nothing is None


async def test_document_highlight(client: LanguageClient, folder: Path) -> None:
    found = await client.text_document_document_highlight_async(
        lsp.DocumentHighlightParams(doc(folder, "main.nx"), position_of(MAIN, "draft"))
    )
    kinds = [(h.range.start.line, h.kind) for h in found or []]
    assert kinds[0][1] == lsp.DocumentHighlightKind.Write and len(kinds) == 3


async def test_document_and_workspace_symbols(client: LanguageClient, folder: Path) -> None:
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc(folder, "main.nx")))
    assert symbols and all(isinstance(s, lsp.DocumentSymbol) for s in symbols)
    names = {s.name: s for s in symbols}  # type: ignore[union-attr]
    assert {"Report", "Lookup", "Analyst", "main"} <= set(names)
    assert names["Analyst"].kind == lsp.SymbolKind.Class  # type: ignore[union-attr]
    assert [c.name for c in names["Report"].children or []] == ["title", "score"]  # type: ignore[union-attr]
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="format"))
    assert [(s.name, Path(s.location.uri).name) for s in found or []] == [("Formatter", "lib.nxlib")]  # type: ignore


async def test_semantic_tokens_full_delta_and_range(client: LanguageClient, folder: Path) -> None:
    target = uri(folder / "tokens.nx")
    open_document(client, target, MAIN)
    ident = lsp.TextDocumentIdentifier(target)
    full = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(ident))
    assert full is not None and full.result_id and len(full.data) % 5 == 0 and full.data
    edit(client, target, 2, lsp.Position(0, 0), lsp.Position(0, 0), "// top\n")
    delta = await client.text_document_semantic_tokens_full_delta_async(
        lsp.SemanticTokensDeltaParams(ident, full.result_id)
    )
    assert isinstance(delta, lsp.SemanticTokensDelta) and len(delta.edits) == 1
    assert delta.edits[0].start == 0  # only the first token's line moved
    ranged = await client.text_document_semantic_tokens_range_async(
        lsp.SemanticTokensRangeParams(ident, lsp.Range(lsp.Position(0, 0), lsp.Position(9, 0)))
    )
    assert ranged is not None and 0 < len(ranged.data) < len(full.data)
    close_document(client, target)


async def test_folding_and_selection_ranges(client: LanguageClient, folder: Path) -> None:
    folds = await client.text_document_folding_range_async(lsp.FoldingRangeParams(doc(folder, "main.nx")))
    starts = {f.start_line for f in folds or []}
    assert {2, 9, 15} <= starts  # protocol, agent, flow
    assert all(f.start_character is None for f in folds or [])
    pos = position_of(MAIN, "Analyst.run", 2)
    [chain] = (
        await client.text_document_selection_range_async(lsp.SelectionRangeParams(doc(folder, "main.nx"), [pos])) or []
    )
    widths = []
    node: lsp.SelectionRange | None = chain
    while node is not None:
        widths.append(node.range)
        node = node.parent
    assert widths[0] == lsp.Range(
        lsp.Position(pos.line, pos.character - 2), lsp.Position(pos.line, pos.character - 2 + len("Analyst"))
    )
    assert len(widths) >= 4


async def test_code_actions_quick_fixes_and_fix_all(client: LanguageClient, folder: Path) -> None:
    target = uri(folder / "fixable.nx")
    open_document(client, target, FIXABLE)
    items = await diagnostics(client, target, 1)
    pos = position_of(FIXABLE, '"true"')
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(target), lsp.Range(pos, pos), lsp.CodeActionContext(diagnostics=items)
        )
    )
    titles = [a.title for a in actions or []]
    assert "Write `true` without quotes" in titles
    fix = next(a for a in actions or [] if a.title == "Write `true` without quotes")
    assert isinstance(fix, lsp.CodeAction) and fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred
    assert fix.diagnostics and fix.diagnostics[0].code == "NX121"
    fix_all = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(target),
            lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
            lsp.CodeActionContext(diagnostics=[], only=["source.fixAll.nexa"]),
        )
    )
    [action] = fix_all or []
    assert isinstance(action, lsp.CodeAction) and action.edit is not None
    edits = edits_in(action.edit, target)
    assert [e.new_text for e in edits] == ["true"]  # the unsafe "false" fix is left out
    close_document(client, target)


def edits_in(edit: lsp.WorkspaceEdit, target: str) -> list[lsp.TextEdit]:
    """The text edits of one document, from versioned `documentChanges` or plain `changes`."""
    if edit.document_changes:
        found = []
        for change in edit.document_changes:
            assert isinstance(change, lsp.TextDocumentEdit)
            if change.text_document.uri == target:
                assert change.text_document.version is not None  # versioned: stale edits are refused
                found.extend(e for e in change.edits if isinstance(e, lsp.TextEdit))
        return found
    assert edit.changes is not None
    return list(edit.changes[target])


async def test_migrate_action_and_command(client: LanguageClient, folder: Path) -> None:
    target = uri(folder / "migrate.nx")
    open_document(client, target, MIGRATABLE)
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(target),
            lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
            lsp.CodeActionContext(diagnostics=[], only=["source.migrate.nexa"]),
        )
    )
    assert [a.title for a in actions or []] == ["Migrate this file to Nexa 3.0"]
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="nexa.migrateFile", arguments=[{"uri": target}])
    )
    assert result == {"applied": True, "remaining": []}
    applied = client.applied_edits[-1]  # type: ignore[attr-defined]
    new_text = edits_in(applied.edit, target)
    assert any("nexa 3.0;" in e.new_text for e in new_text)
    close_document(client, target)


async def test_utf16_positions_with_chinese_and_emoji(client: LanguageClient, folder: Path) -> None:
    line = UNICODE.splitlines()[3]
    items = await diagnostics(client, uri(folder / "unicode.nx"), 1)
    [undefined] = [d for d in items if d.code == "NX101"]
    start = utf16(line[: line.index("Greetr")])
    assert undefined.range == lsp.Range(lsp.Position(3, start), lsp.Position(3, start + 6))
    # hover on the agent between emoji: the range is in UTF-16 units
    pos = lsp.Position(3, utf16(line[: line.index("Greeter.run")]) + 3)
    found = await client.text_document_hover_async(lsp.HoverParams(doc(folder, "unicode.nx"), pos))
    assert found is not None and found.range is not None
    assert found.range.start.character == utf16(line[: line.index("Greeter.run")])
    assert found.range.end.character == found.range.start.character + len("Greeter")
    # rename edits land on the right UTF-16 columns
    result = await client.text_document_rename_async(lsp.RenameParams(doc(folder, "unicode.nx"), pos, "Host"))
    assert result is not None and result.changes is not None
    cols = sorted((e.range.start.line, e.range.start.character) for e in result.changes[uri(folder / "unicode.nx")])
    assert cols == [(0, len("agent ")), (3, utf16(line[: line.index("Greeter.run")]))]
    # completion after an emoji replaces exactly the typed prefix
    completion = await client.text_document_completion_async(
        lsp.CompletionParams(doc(folder, "unicode.nx"), lsp.Position(3, utf16(line[: line.index("Greeter.run")]) + 4))
    )
    assert isinstance(completion, lsp.CompletionList)
    greeter = next(i for i in completion.items if i.label == "Greeter")
    replaced, _text = edit_of(completion, greeter)
    assert replaced.start.character == utf16(line[: line.index("Greeter.run")])


async def test_formatting_reindents_and_keeps_strings(client: LanguageClient, folder: Path) -> None:
    target = uri(folder / "format.nx")
    text = (
        'agent A {\nrole: "r",   \n  prompt: """第一行   \n   kept as is"""\n}\n'
        'flow main {\nif (x) {\nprint("😀")\n}\n}'
    )
    open_document(client, target, text)
    edits = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(
            lsp.TextDocumentIdentifier(target), lsp.FormattingOptions(tab_size=4, insert_spaces=True)
        )
    )
    assert edits is not None and len(edits) == 1
    assert edits[0].new_text == (
        'agent A {\n    role: "r",\n    prompt: """第一行   \n   kept as is"""\n}\n'
        'flow main {\n    if (x) {\n        print("😀")\n    }\n}\n'
    )
    assert (edits[0].range.start.line, edits[0].range.start.character) == (0, 0)
    assert (edits[0].range.end.line, edits[0].range.end.character) == (9, 1)
    close_document(client, target)
    formatted = uri(folder / "formatted.nx")
    open_document(client, formatted, edits[0].new_text)
    again = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(
            lsp.TextDocumentIdentifier(formatted), lsp.FormattingOptions(tab_size=4, insert_spaces=True)
        )
    )
    assert again is not None and len(again) == 0  # formatting twice changes nothing
    close_document(client, formatted)
