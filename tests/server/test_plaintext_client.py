"""A client that takes only plain text (eglot 1.9 without markdown-mode) gets plain text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from tests.server.conftest import CONFIG, open_document, position_of, uri
from tests.server.sources import LIB, MAIN

pytestmark = pytest.mark.asyncio(loop_scope="module")

MARKUP = re.compile(r"```|\*\*|`|^\s*> ", re.M)


def eglot_19_without_markdown_mode() -> lsp.ClientCapabilities:
    """What eglot 1.9 declares when markdown-mode is missing: hovers in plain text, and no
    documentation format for completion items (a documentation string is then plain text)."""
    caps = client_capabilities("emacs")
    assert caps.text_document is not None and caps.text_document.hover is not None
    caps.text_document.hover.content_format = [lsp.MarkupKind.PlainText]
    completion = caps.text_document.completion
    assert completion is not None and completion.completion_item is not None
    completion.completion_item.documentation_format = None
    completion.completion_item.resolve_support = None
    return caps


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("plain")
    (root / "lib.nxlib").write_text(LIB, encoding="utf-8")
    lsp_client.root = root  # type: ignore[attr-defined]
    await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=eglot_19_without_markdown_mode(),
            root_uri=uri(root),
            workspace_folders=[lsp.WorkspaceFolder(uri=uri(root), name=root.name)],
        )
    )
    open_document(lsp_client, uri(root / "main.nx"), MAIN)
    yield
    await lsp_client.shutdown_session()


def doc(client: LanguageClient) -> lsp.TextDocumentIdentifier:
    root: Path = client.root  # type: ignore[attr-defined]
    return lsp.TextDocumentIdentifier(uri(root / "main.nx"))


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        ("Analyst.run", "agent Analyst uses Lookup, Formatter implements Report"),  # a fenced signature and a quote
        ("Lookup {", "tool Lookup"),
        ("flow main", "flow"),  # a keyword
        ("tidy(draft)", "tidy"),  # declared in the included file
    ],
)
async def test_hovers_are_plain_text(client: LanguageClient, needle: str, expected: str) -> None:
    found = await client.text_document_hover_async(lsp.HoverParams(doc(client), position_of(MAIN, needle)))
    assert found is not None and isinstance(found.contents, lsp.MarkupContent)
    assert found.contents.kind == lsp.MarkupKind.PlainText
    assert expected in found.contents.value
    assert not MARKUP.search(found.contents.value), found.contents.value


async def test_the_prompt_excerpt_keeps_its_chinese_text_without_a_quote_marker(client: LanguageClient) -> None:
    found = await client.text_document_hover_async(lsp.HoverParams(doc(client), position_of(MAIN, "Analyst.run")))
    assert found is not None and isinstance(found.contents, lsp.MarkupContent)
    assert "\nLook the record up and score it. 请用中文回答。" in found.contents.value


async def test_completion_documentation_is_plain_text(client: LanguageClient) -> None:
    at = position_of(MAIN, "    print(draft)")
    result = await client.text_document_completion_async(lsp.CompletionParams(doc(client), at))
    assert isinstance(result, lsp.CompletionList)
    documented = [i for i in result.items if i.documentation]
    assert len(documented) >= 5
    for item in documented:
        assert isinstance(item.documentation, str), item  # no format declared: a plain string
        assert not MARKUP.search(item.documentation), (item.label, item.documentation)
    analyst = next(i for i in documented if i.label == "Analyst")
    assert "agent Analyst" in str(analyst.documentation)
