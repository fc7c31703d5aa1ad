"""The runs feature built on first use: before it is, the run-aware diagnostics it would give
are given anyway (none without a store; a store's runs on the very first publish)."""

from __future__ import annotations

from pathlib import Path

from nexa_lsp.server import runs
from nexa_lsp.server.app import NexaLanguageServer
from nexa_lsp.server.documents import DocumentState
from nexa_lsp.server.runs.features import RunFeatures
from nexa_lsp.server.runs.stores import DEFAULT_STORE
from nexa_lsp.syntax.source import parse_source
from tests.robustness.lsp_wire import WireClient
from tests.server.test_runs_support import crashed_run, make_workspace

ASKED = [{"text": "x", "tool_calls": [{"id": "c", "name": "lookup"}]}]


def _state(folder: Path, doc: Path) -> tuple[NexaLanguageServer, DocumentState]:
    server = NexaLanguageServer()
    server.documents.folders = [folder]
    text = doc.read_text(encoding="utf-8")
    return server, DocumentState(doc.as_uri(), doc, text, 1, parse_source(text))


def _codes(found: list[object]) -> list[str]:
    return sorted(getattr(d, "code", "") for d in found)


def test_without_a_store_none_and_nothing_built(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [])
    server, state = _state(ws.folder, ws.doc)
    lazy = runs.register(server)
    assert state.source is not None
    assert lazy.diagnostics_for(state, state.source) == []
    assert not lazy.loaded
    assert RunFeatures(server).views.diagnostics_for(state, state.source) == []  # what the feature says
    outside = DocumentState("untitled:x", None, state.text, 1, state.source)
    assert lazy.diagnostics_for(outside, state.source) == [] and not lazy.loaded


def test_with_a_store_the_same_as_the_built_feature(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [])
    crashed_run(ws, "Analyst", "Analyze", ASKED, "asked")
    server, state = _state(ws.folder, ws.doc)
    lazy = runs.register(server)
    assert state.source is not None
    found = lazy.diagnostics_for(state, state.source)
    assert lazy.loaded
    assert "NX202" in _codes(found)
    assert _codes(found) == _codes(RunFeatures(server).views.diagnostics_for(state, state.source))


def test_the_default_store_is_the_stores_default() -> None:
    assert runs.DEFAULT_STORE == DEFAULT_STORE


def test_the_first_publish_names_the_stored_run(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [])
    state = crashed_run(ws, "Analyst", "Analyze", ASKED, "asked")
    client = WireClient(ws.folder)
    try:
        client.initialize(ws.folder)
        client.open(ws.uri, ws.text)
        first = client.wait_notification(
            "textDocument/publishDiagnostics", lambda m: m["params"]["uri"] == ws.uri, timeout=60
        )
        codes = [d.get("code") for d in first["params"]["diagnostics"]]
        assert "NX202" in codes
        assert any(state.run_id in d["message"] for d in first["params"]["diagnostics"])
    finally:
        client.close()
