#!/usr/bin/env python3
"""The framework floor: a bare pygls 2 server over stdio that does no work.

It publishes empty diagnostics for every opened or changed document (or answers
pull requests with empty reports) and answers completion, hover, document
symbols and semantic tokens with empty results, so ``lsp_latency.py`` can
compare every figure of nexa-lsp with what pygls and the transport cost alone.
"""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

server = LanguageServer("nexa-lsp-floor", "1")
LEGEND = lsp.SemanticTokensLegend(token_types=["class"], token_modifiers=[])


def _publish(uri: str, version: int | None) -> None:
    caps = server.client_capabilities.text_document
    if caps is None or caps.diagnostic is None:  # push unless the client pulls
        server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[], version=version))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
    _publish(params.text_document.uri, params.text_document.version)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
    _publish(params.text_document.uri, params.text_document.version)


@server.feature(
    lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DiagnosticOptions(inter_file_dependencies=False, workspace_diagnostics=True)
)
def diagnostic(params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
    return lsp.RelatedFullDocumentDiagnosticReport(items=[])


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
def document_symbol(params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    return []


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
def tokens_full(params: lsp.SemanticTokensParams) -> lsp.SemanticTokens:
    return lsp.SemanticTokens(data=[], result_id="0")


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, LEGEND)
def tokens_delta(params: lsp.SemanticTokensDeltaParams) -> lsp.SemanticTokensDelta:
    return lsp.SemanticTokensDelta(edits=[], result_id="0")


if __name__ == "__main__":
    server.start_io()
