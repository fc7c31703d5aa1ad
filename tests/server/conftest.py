"""Shared helpers for the language-server tests (pytest-lsp over stdio).

Every test module runs the real server (`python -m nexa_lsp`) once per client
profile: VS Code 1.65 (push diagnostics, code lenses, snippets) and Neovim 0.10
(pull diagnostics, no code lenses, no snippets).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import JsonRPCResponseMessage, default_converter
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER_COMMAND = [sys.executable, "-m", "nexa_lsp"]
PROFILES = ["visual_studio_code", "neovim@v0.10.0"]
TIMEOUT = 20.0


def json_results_converter() -> Any:
    """pygls' converter, except that the results of requests lsprotocol has no type for
    (``nexa/*``) stay plain JSON: pygls makes named tuples of them, which renames keys that
    are Python keywords (``continue``)."""
    converter = default_converter()
    converter.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    return converter


def make_client() -> LanguageClient:
    """The pytest-lsp client, also recording published versions and applying edits it is sent."""
    client = LanguageClient(converter_factory=json_results_converter)
    client.published = []  # type: ignore[attr-defined]
    client.applied_edits = []  # type: ignore[attr-defined]
    features: dict[str, Any] = dict(DEFAULT_CLIENT_FEATURES)
    record = features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(ls: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
        record(ls, params)
        ls.published.append(params)  # type: ignore[attr-defined]

    def apply_edit(ls: LanguageClient, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        ls.applied_edits.append(params)  # type: ignore[attr-defined]
        return lsp.ApplyWorkspaceEditResult(applied=True)

    def code_lens_refresh(ls: LanguageClient, params: None) -> None:
        return None

    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[lsp.WORKSPACE_APPLY_EDIT] = apply_edit
    features[lsp.WORKSPACE_CODE_LENS_REFRESH] = code_lens_refresh
    register_lsp_features(client, features)
    return client


CONFIG = ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client)


def uri(path: Path) -> str:
    return str(from_fs_path(str(path)))


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def position_of(text: str, needle: str, delta: int = 0, occurrence: int = 0) -> lsp.Position:
    """LSP position (UTF-16) of ``needle`` (+``delta`` code points) in ``text``."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    index += delta
    line = text.count("\n", 0, index)
    line_start = text.rfind("\n", 0, index) + 1
    return lsp.Position(line=line, character=utf16(text[line_start:index]))


def is_push(client: LanguageClient) -> bool:
    caps = client.capabilities
    return caps is None or caps.text_document is None or caps.text_document.diagnostic is None


async def initialize(
    client: LanguageClient, profile: str, folders: list[Path], options: dict[str, Any] | None = None
) -> lsp.InitializeResult:
    return await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities(profile),
            root_uri=uri(folders[0]) if folders else None,
            workspace_folders=[lsp.WorkspaceFolder(uri=uri(f), name=f.name) for f in folders],
            initialization_options=options,
        )
    )


def open_document(client: LanguageClient, doc_uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=doc_uri, language_id="nexa", version=version, text=text)
        )
    )


def close_document(client: LanguageClient, doc_uri: str) -> None:
    client.text_document_did_close(
        lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=doc_uri))
    )


def edit(
    client: LanguageClient, doc_uri: str, version: int, start: lsp.Position, end: lsp.Position, new_text: str
) -> None:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=doc_uri, version=version),
            content_changes=[
                lsp.TextDocumentContentChangePartial(range=lsp.Range(start=start, end=end), text=new_text)
            ],
        )
    )


async def wait_until(predicate: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting for the server")
        await asyncio.sleep(0.01)


async def diagnostics(client: LanguageClient, doc_uri: str, version: int | None = None) -> list[lsp.Diagnostic]:
    """The diagnostics of a document as the client gets them: pushed, or pulled."""
    if is_push(client):

        def published() -> list[lsp.PublishDiagnosticsParams]:
            return [
                p
                for p in client.published
                if p.uri == doc_uri  # type: ignore[attr-defined]
                and (version is None or p.version == version)
            ]

        found = await wait_until(published)
        return list(found[-1].diagnostics)
    report = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=doc_uri))
    )
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
    return list(report.items)


def codes(items: list[lsp.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in items)
