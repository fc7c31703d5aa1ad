"""Signature help, inlay hints, document links, the call hierarchy and range formatting over
stdio, with the VS Code and Neovim capability profiles (and plain text for eglot without
markdown-mode). Chinese text and astral characters precede every position asked about."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.server.conftest import CONFIG, PROFILES, close_document, initialize, open_document, position_of, uri, utf16
from tests.server.test_plaintext_client import eglot_19_without_markdown_mode

pytestmark = pytest.mark.asyncio(loop_scope="module")

MAIN = """nexa 3.0;
// 工具与代理：中文注释 😀
include "库/工具.nxlib";
tool Search { description: "搜索网页 😀", parameters: {"查询😀": "string", "limit": "number"}, approval: "required" }
agent Writer uses Search { prompt: "写作 😀", model: "deepseek/deepseek-chat" }
agent Editor { prompt: "编辑 😀" }
agent Keyed uses "密钥.nxs", "missing.nxs" { prompt: "钥匙 😀" }
flow main(topic: str) {
    r = Writer.execute("话题 😀 {topic}")
    again = Writer.continue(r, "更多 😀")
    x = Search("中文 😀", limit = 3)
    y = r >> Editor
    z = Helper.run("排版 😀", "二")
}
"""
LIB = 'agent Helper { prompt: "帮助 😀" }\n'
MARKUP = re.compile(r"```|\*\*|`|^\s*> ", re.M)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("editing")
    (root / "main.nx").write_text(MAIN, encoding="utf-8")
    (root / "库").mkdir()
    (root / "库" / "工具.nxlib").write_text(LIB, encoding="utf-8")
    (root / "密钥.nxs").write_text('MODEL = "openai/gpt-4o"\n', encoding="utf-8")
    return root


@pytest_lsp.fixture(scope="module", params=PROFILES, config=CONFIG)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, folder: Path) -> Any:
    result = await initialize(lsp_client, request.param, [folder], {"diagnostics": {"debounceMs": 0}})
    lsp_client.server_capabilities = result.capabilities  # type: ignore[attr-defined]
    open_document(lsp_client, uri(folder / "main.nx"), MAIN)
    yield
    await lsp_client.shutdown_session()


def main_doc(folder: Path) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri(folder / "main.nx"))


def span(text: str, needle: str, occurrence: int = 0) -> lsp.Range:
    start = position_of(text, needle, occurrence=occurrence)
    return lsp.Range(start, lsp.Position(start.line, start.character + utf16(needle)))


def whole(text: str) -> lsp.Range:
    return lsp.Range(lsp.Position(0, 0), lsp.Position(text.count("\n") + 1, 0))


# ---------------------------------------------------------------------- signature help


def parameter_labels(sig: lsp.SignatureInformation) -> list[str]:
    """Each parameter's label as the client reads it (UTF-16 offsets into the signature label)."""
    units = sig.label.encode("utf-16-le")
    out = []
    for param in sig.parameters or []:
        if isinstance(param.label, str):
            out.append(param.label)
        else:
            start, end = param.label
            out.append(units[2 * start : 2 * end].decode("utf-16-le"))
    return out


async def help_at(client: LanguageClient, folder: Path, pos: lsp.Position, trigger: str | None = None) -> Any:
    context = None
    if trigger is not None:
        kind = lsp.SignatureHelpTriggerKind.TriggerCharacter
        context = lsp.SignatureHelpContext(trigger_kind=kind, is_retrigger=False, trigger_character=trigger)
    params = lsp.SignatureHelpParams(main_doc(folder), pos, context=context)
    return await client.text_document_signature_help_async(params)


async def test_the_server_declares_the_editing_features(client: LanguageClient) -> None:
    caps: lsp.ServerCapabilities = client.server_capabilities  # type: ignore[attr-defined]
    assert caps.signature_help_provider is not None
    assert list(caps.signature_help_provider.trigger_characters or []) == ["(", ","]
    assert isinstance(caps.inlay_hint_provider, lsp.InlayHintOptions) and caps.inlay_hint_provider.resolve_provider
    assert caps.document_link_provider is not None
    assert caps.call_hierarchy_provider
    assert caps.document_range_formatting_provider


async def test_signature_help_of_a_tool_call_with_utf16_parameter_offsets(client: LanguageClient, folder: Path) -> None:
    found = await help_at(client, folder, position_of(MAIN, "limit = 3"), ",")
    assert isinstance(found, lsp.SignatureHelp)
    [sig] = found.signatures
    assert sig.label == "Search(查询😀: string, limit: number)"
    assert parameter_labels(sig) == ["查询😀: string", "limit: number"]
    assert sig.parameters is not None and sig.parameters[0].label == (7, 19)  # 😀 is two UTF-16 units
    assert found.active_parameter == 1 and sig.active_parameter == 1
    assert isinstance(sig.documentation, lsp.MarkupContent) and sig.documentation.kind == lsp.MarkupKind.Markdown
    assert sig.documentation.value.startswith("搜索网页 😀\n\n**approval** required")
    first = await help_at(client, folder, position_of(MAIN, '"中文', 1))
    assert first is not None and first.active_parameter == 0


@pytest.mark.parametrize(
    ("needle", "label", "active"),
    [
        ('"话题', "Writer.execute(task: str) -> Run", 0),
        ('"更多', "Writer.continue(run: Run, input: str) -> Run", 1),
        ('"二"', "Helper.run(input: str, more...: str) -> str", 1),
    ],
)
async def test_signature_help_of_agent_methods(
    client: LanguageClient, folder: Path, needle: str, label: str, active: int
) -> None:
    found = await help_at(client, folder, position_of(MAIN, needle, 1))
    assert isinstance(found, lsp.SignatureHelp)
    [sig] = found.signatures
    assert sig.label == label
    assert found.active_parameter == active
    assert isinstance(sig.documentation, lsp.MarkupContent) and sig.documentation.kind == lsp.MarkupKind.Markdown


async def test_signature_help_while_typing_a_call(client: LanguageClient, folder: Path) -> None:
    text = MAIN.replace("    y = r >> Editor\n", "    y = Editor.execute(\n")
    target = uri(folder / "typing.nx")
    open_document(client, target, text)
    pos = position_of(text, "Editor.execute(", len("Editor.execute("))
    found = await client.text_document_signature_help_async(
        lsp.SignatureHelpParams(lsp.TextDocumentIdentifier(target), pos)
    )
    assert found is not None and found.signatures[0].label == "Editor.execute(task: str) -> Run"
    outside = await client.text_document_signature_help_async(
        lsp.SignatureHelpParams(lsp.TextDocumentIdentifier(target), position_of(text, "工具与代理"))
    )
    assert outside is None
    close_document(client, target)


# ---------------------------------------------------------------------- inlay hints


async def test_inlay_hints_show_model_tool_count_and_approval(client: LanguageClient, folder: Path) -> None:
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(main_doc(folder), whole(MAIN)))
    assert hints is not None
    found = [(h.position, h.label) for h in hints]
    assert found == [
        (span(MAIN, "Writer", 1).end, ": deepseek/deepseek-chat · 1 tool"),
        (span(MAIN, "Writer", 2).end, ": deepseek/deepseek-chat · 1 tool"),
        (span(MAIN, "Search", 2).end, "needs approval"),
        (span(MAIN, "Editor", 1).end, ": openai/gpt-4o · 0 tools"),  # MODEL of the folder's .nxs file
        (span(MAIN, "Helper").end, ": openai/gpt-4o · 0 tools"),
    ]
    line = position_of(MAIN, "    x = Search").line
    only = await client.text_document_inlay_hint_async(
        lsp.InlayHintParams(main_doc(folder), lsp.Range(lsp.Position(line, 0), lsp.Position(line + 1, 0)))
    )
    assert only is not None and [h.label for h in only] == ["needs approval"]


async def test_inlay_hint_tooltips_resolve_when_the_client_can(client: LanguageClient, folder: Path) -> None:
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(main_doc(folder), whole(MAIN)))
    assert hints is not None
    writer, _again, search = hints[0], hints[1], hints[2]
    caps = client.capabilities
    resolves = bool(caps and caps.text_document and caps.text_document.inlay_hint)
    if resolves:  # Neovim 0.10 resolves tooltips: they come later
        assert writer.tooltip is None and writer.data is not None
        writer = await client.inlay_hint_resolve_async(writer)
        search = await client.inlay_hint_resolve_async(search)
    assert isinstance(writer.tooltip, lsp.MarkupContent) and writer.tooltip.kind == lsp.MarkupKind.Markdown
    assert "**model** `deepseek/deepseek-chat` (from its `model:`)" in writer.tooltip.value
    assert "* `Search`: needs approval" in writer.tooltip.value
    assert isinstance(search.tooltip, lsp.MarkupContent)
    assert search.tooltip.value.startswith("**tool** `Search`\n\n搜索网页 😀\n\n**Needs approval**")


# ---------------------------------------------------------------------- document links


async def test_document_links_to_includes_and_nxs_files_that_exist(client: LanguageClient, folder: Path) -> None:
    links = await client.text_document_document_link_async(lsp.DocumentLinkParams(main_doc(folder)))
    assert links is not None
    assert [(link.range, link.target) for link in links] == [
        (span(MAIN, "库/工具.nxlib"), uri(folder / "库" / "工具.nxlib")),
        (span(MAIN, "密钥.nxs"), uri(folder / "密钥.nxs")),
    ]
    caps = client.capabilities
    tooltips = bool(caps and caps.text_document and caps.text_document.document_link)  # VS Code's has tooltips
    assert links[1].tooltip == (f"uses 密钥.nxs: {folder / '密钥.nxs'}" if tooltips else None)


# ---------------------------------------------------------------------- call hierarchy


async def prepare(client: LanguageClient, folder: Path, pos: lsp.Position) -> lsp.CallHierarchyItem:
    items = await client.text_document_prepare_call_hierarchy_async(
        lsp.CallHierarchyPrepareParams(main_doc(folder), pos)
    )
    assert items is not None and len(items) == 1
    return items[0]


async def test_call_hierarchy_flow_to_agent_to_tool(client: LanguageClient, folder: Path) -> None:
    main = await prepare(client, folder, position_of(MAIN, "main(", 1))
    assert (main.name, main.kind, main.uri) == ("main", lsp.SymbolKind.Method, uri(folder / "main.nx"))
    assert main.selection_range == span(MAIN, "main")
    outgoing = await client.call_hierarchy_outgoing_calls_async(lsp.CallHierarchyOutgoingCallsParams(main))
    assert outgoing is not None
    calls = {call.to.name: (call.to.kind, call.to.uri, list(call.from_ranges)) for call in outgoing}
    assert set(calls) == {"Writer", "Search", "Editor", "Helper"}
    assert calls["Writer"] == (
        lsp.SymbolKind.Class,
        uri(folder / "main.nx"),
        [span(MAIN, "Writer", 1), span(MAIN, "Writer", 2)],
    )
    assert calls["Search"][0] == lsp.SymbolKind.Function
    assert calls["Helper"][1] == uri(folder / "库" / "工具.nxlib")

    writer = next(call.to for call in outgoing if call.to.name == "Writer")
    from_writer = await client.call_hierarchy_outgoing_calls_async(lsp.CallHierarchyOutgoingCallsParams(writer))
    assert from_writer is not None and [(c.to.name, list(c.from_ranges)) for c in from_writer] == [
        ("Search", [span(MAIN, "Search", 1)])  # its `uses`
    ]
    into_writer = await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(writer))
    assert into_writer is not None and [(c.from_.name, list(c.from_ranges)) for c in into_writer] == [
        ("main", [span(MAIN, "Writer", 1), span(MAIN, "Writer", 2)])
    ]
    search = await prepare(client, folder, position_of(MAIN, "Search(", 0))
    into_search = await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(search))
    assert into_search is not None and {c.from_.name for c in into_search} == {"Writer", "main"}


async def test_call_hierarchy_across_files(client: LanguageClient, folder: Path) -> None:
    helper = await prepare(client, folder, position_of(MAIN, "Helper.run"))
    assert helper.uri == uri(folder / "库" / "工具.nxlib")
    assert helper.selection_range == span(LIB, "Helper")
    incoming = await client.call_hierarchy_incoming_calls_async(lsp.CallHierarchyIncomingCallsParams(helper))
    assert incoming is not None
    assert [(c.from_.name, c.from_.uri, list(c.from_ranges)) for c in incoming] == [
        ("main", uri(folder / "main.nx"), [span(MAIN, "Helper")])
    ]
    assert await client.text_document_prepare_call_hierarchy_async(
        lsp.CallHierarchyPrepareParams(main_doc(folder), position_of(MAIN, "topic: str"))
    ) in (None, [])


# ---------------------------------------------------------------------- range formatting


async def test_range_formatting_touches_only_the_lines_of_the_range(client: LanguageClient, folder: Path) -> None:
    text = 'agent A { prompt: "中文 😀" }\nflow main {\nx = A.run("一 😀")   \n      y = A.run("二")\n}\n'
    target = uri(folder / "range.nx")
    open_document(client, target, text)
    line = position_of(text, "x = A.run").line
    asked = lsp.Range(position_of(text, '"一', 2), position_of(text, '"一', 3))
    edits = await client.text_document_range_formatting_async(
        lsp.DocumentRangeFormattingParams(
            lsp.TextDocumentIdentifier(target), asked, lsp.FormattingOptions(tab_size=4, insert_spaces=True)
        )
    )
    assert edits is not None and list(edits) == [
        lsp.TextEdit(
            range=lsp.Range(lsp.Position(line, 0), lsp.Position(line + 1, 0)), new_text='    x = A.run("一 😀")\n'
        )
    ]
    tabs = await client.text_document_range_formatting_async(
        lsp.DocumentRangeFormattingParams(
            lsp.TextDocumentIdentifier(target),
            lsp.Range(lsp.Position(line, 0), lsp.Position(line + 2, 0)),
            lsp.FormattingOptions(tab_size=8, insert_spaces=False),
        )
    )
    assert tabs is not None and [e.new_text for e in tabs] == ['\tx = A.run("一 😀")\n\ty = A.run("二")\n']
    close_document(client, target)


# ---------------------------------------------------------------------- plain text only


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def plain_client(lsp_client: LanguageClient, folder: Path) -> Any:
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=eglot_19_without_markdown_mode(),
            root_uri=uri(folder),
            workspace_folders=[lsp.WorkspaceFolder(uri=uri(folder), name=folder.name)],
        )
    )
    open_document(lsp_client, uri(folder / "main.nx"), MAIN)
    yield
    await lsp_client.shutdown_session()


async def test_signature_help_documentation_is_plain_text_for_plaintext_clients(
    plain_client: LanguageClient, folder: Path
) -> None:
    for needle in ("limit = 3", '"更多'):
        found = await help_at(plain_client, folder, position_of(MAIN, needle, 1))
        assert isinstance(found, lsp.SignatureHelp)
        docs = [found.signatures[0].documentation] + [p.documentation for p in found.signatures[0].parameters or []]
        for text in docs:
            value = text.value if isinstance(text, lsp.MarkupContent) else text
            assert isinstance(text, str) or text.kind == lsp.MarkupKind.PlainText
            assert value and not MARKUP.search(value), value
    tool = await help_at(plain_client, folder, position_of(MAIN, "limit = 3"))
    assert tool.signatures[0].documentation.startswith("搜索网页 😀\n\napproval required: a call pauses the run in")
