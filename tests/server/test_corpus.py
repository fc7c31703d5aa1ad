"""Every file of the Nexa 2.x corpus opens cleanly: diagnostics arrive, no server error,
and the outline names every top-level declaration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from nexa_lsp.syntax.source import parse_source
from tests.server.conftest import CONFIG, PROFILES, close_document, diagnostics, initialize, open_document, uri

pytestmark = pytest.mark.asyncio(loop_scope="module")

CORPUS = (Path(__file__).parents[2] / "../shared/corpus/nexa-2.x").resolve()


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".nx", ".nxlib") and p.is_file())


@pytest_lsp.fixture(scope="module", params=PROFILES, config=CONFIG)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest) -> Any:
    await initialize(lsp_client, request.param, [CORPUS] if CORPUS.is_dir() else [], {"diagnostics": {"debounceMs": 0}})
    yield
    await lsp_client.shutdown_session()


def _names(symbols: list[Any]) -> list[str]:
    out = []
    for sym in symbols:
        out.append(sym.name)
        if isinstance(sym, lsp.DocumentSymbol):
            out.extend(_names(list(sym.children or [])))
    return out


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the Nexa 2.x corpus is not beside the project")
async def test_every_corpus_file_opens_cleanly(client: LanguageClient) -> None:
    files = corpus_files()
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        doc = uri(path)
        open_document(client, doc, text)
        await diagnostics(client, doc, 1)
        symbols = await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(doc))
        )
        top = [s.name for s in symbols or []]
        for decl in parse_source(text).declarations():
            if decl.name:
                assert any(decl.name in name for name in top), (path, decl.name, top)
        close_document(client, doc)
    errors = [m.message for m in client.log_messages if m.type == lsp.MessageType.Error]
    assert errors == []
