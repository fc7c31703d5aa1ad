#!/usr/bin/env python3
"""The framework floor: a bare pygls 2 server over stdio that does no work.

It publishes empty diagnostics for every opened or changed document (or answers
pull requests with empty reports) and answers completion, hover, document
symbols and semantic tokens with empty results, so ``lsp_latency.py`` can
compare every figure of nexa-lsp with what pygls and the transport cost alone.

With ``NEXA_FLOOR_PAYLOAD`` naming a JSON file (``{"diagnostics": [...],
"documentSymbol": [...], "semanticTokens": {...}}``, what nexa-lsp answered for
the same document), it is the *same-payload floor*: it sends those answers,
encoded once at start-up, as its diagnostics and its documentSymbol and
semantic-tokens answers, so the cost of delivering an answer of that size
(writing, the pipe, the client's decoding) is measured apart from the work of
computing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol


class _Encoded:
    """An answer of the same-payload mode: the JSON text of ``PAYLOAD[key]``."""

    def __init__(self, key: str) -> None:
        self.key = key


class FloorProtocol(LanguageServerProtocol):
    """pygls' protocol; an :class:`_Encoded` answer is written as it is (no conversion)."""

    def _send_response(self, msg_id: Any, result: Any | None = None, error: Any = None) -> None:
        if error is None and isinstance(result, _Encoded):
            self._result_types.pop(msg_id, None)
            _write(f'{{"id": {json.dumps(msg_id)}, "result": {PAYLOAD[result.key]}, "jsonrpc": "2.0"}}')
            return
        super()._send_response(msg_id, result, error)


server = LanguageServer("nexa-lsp-floor", "1", protocol_cls=FloorProtocol)
LEGEND = lsp.SemanticTokensLegend(token_types=["class"], token_modifiers=[])


def _load_payload() -> dict[str, str]:
    """The answers of the same-payload mode, each already JSON text (empty: the bare floor)."""
    name = os.environ.get("NEXA_FLOOR_PAYLOAD")
    if not name:
        return {}
    loaded: dict[str, Any] = json.loads(Path(name).read_text(encoding="utf-8"))
    return {key: json.dumps(value) for key, value in loaded.items()}


PAYLOAD = _load_payload()


def _write(body: str) -> None:
    """Write one JSON-RPC message already encoded (as pygls frames its own)."""
    data = body.encode("utf-8")
    writer = server.protocol.writer
    assert writer is not None
    writer.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)


def _publish(uri: str, version: int | None) -> None:
    caps = server.client_capabilities.text_document
    if caps is not None and caps.diagnostic is not None:  # push unless the client pulls
        return
    if "diagnostics" in PAYLOAD:
        head = f'{{"uri": {json.dumps(uri)}, "version": {json.dumps(version)}'
        params = f'{head}, "diagnostics": {PAYLOAD["diagnostics"]}}}'
        _write(f'{{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {params}}}')
        return
    server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[], version=version))


def _answer(key: str, empty: Any) -> Any:
    """``empty`` (the bare floor) or the recorded answer ``key``."""
    return empty if key not in PAYLOAD else _Encoded(key)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
    _publish(params.text_document.uri, params.text_document.version)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
    _publish(params.text_document.uri, params.text_document.version)


@server.feature(
    lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DiagnosticOptions(inter_file_dependencies=False, workspace_diagnostics=True)
)
def diagnostic(params: lsp.DocumentDiagnosticParams) -> Any:
    return _answer("pulled", lsp.RelatedFullDocumentDiagnosticReport(items=[]))


@server.feature(lsp.WORKSPACE_DIAGNOSTIC)
def workspace_diagnostic(params: lsp.WorkspaceDiagnosticParams) -> lsp.WorkspaceDiagnosticReport:
    return lsp.WorkspaceDiagnosticReport(items=[])


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION)
def completion(params: lsp.CompletionParams) -> lsp.CompletionList:
    return lsp.CompletionList(is_incomplete=False, items=[])


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(params: lsp.HoverParams) -> lsp.Hover | None:
    return None


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def document_symbol(params: lsp.DocumentSymbolParams) -> Any:
    return _answer("documentSymbol", [])


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
def tokens_full(params: lsp.SemanticTokensParams) -> Any:
    return _answer("semanticTokens", lsp.SemanticTokens(data=[], result_id="0"))


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, LEGEND)
def tokens_delta(params: lsp.SemanticTokensDeltaParams) -> lsp.SemanticTokensDelta:
    return lsp.SemanticTokensDelta(edits=[], result_id="0")


if __name__ == "__main__":
    server.start_io()
