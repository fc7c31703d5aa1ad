"""Documents and diagnostics: the part of the server that follows edits.

* Edits arrive incrementally; diagnostics run ``nexa.diagnostics.debounceMs``
  after the last edit, on the document's latest text, and are published with
  that version (an older version is never published).
* Diagnostics are pushed (``textDocument/publishDiagnostics``) unless the client
  pulls them (``textDocument/diagnostic`` capability), as ruff and basedpyright do.
* Both use :func:`nexa_lsp.analysis.engine.check_source`, like ``nexa-lsp check``.
"""

from __future__ import annotations

import asyncio
import hashlib
import heapq
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from nexa_lsp.server import chunked_lsp, from_lsp, to_lsp
from nexa_lsp.server.app import NexaLanguageServer, RequestFailed
from nexa_lsp.server.documents import Checked, DocumentState, path_of_uri
from nexa_lsp.server.settings import SECTION, ServerSettings

if TYPE_CHECKING:
    from nexa_lsp.server.from_lsp import ClientFacts
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import SourceFile

#: ``nexa/debugText`` ``{"textDocument": {"uri"}}`` -> ``{"text", "version"}``: the server's text of an
#: open document, for tests that compare it with the editor's (docs/reliability.md).
DEBUG_TEXT = "nexa/debugText"

#: Finds an included file: ``(include, including path) -> (path, parse)`` (see ``DocumentStore.locate``).
Locate = Callable[[str, "Path | None"], "tuple[Path | None, SourceFile | None]"]


def document(server: NexaLanguageServer, uri: str) -> DocumentState:
    """The open document ``uri``; requests for anything else fail with a clear message."""
    state = server.documents.get(uri)
    if state is None:
        raise RequestFailed(f"{uri} is not open in the editor (nexa-lsp answers for open documents)")
    return state


# ---------------------------------------------------------------------- diagnostics


def base_diagnostics(
    source: SourceFile, path: Path | None, locate: Locate, settings: ServerSettings
) -> tuple[list[Diagnostic], set[Path]]:
    """What :func:`check_source` finds in ``source`` under ``settings``, and the files its
    includes resolved to. Safe in a worker thread when ``locate`` is (a :class:`FileView`'s)."""
    from nexa_lsp.analysis.engine import CheckSettings, check_source  # lazy: start-up
    from nexa_lsp.analysis.severity import SEVERITY_NAMES  # lazy: start-up

    resolved: set[Path] = set()

    def resolve(include: str, _including: Path | None) -> SourceFile | None:
        found, included = locate(include, path)
        if found is not None:
            resolved.add(found)
        return included

    check_settings = CheckSettings(
        migration_hints=settings.migration_hints,
        migration_severity=SEVERITY_NAMES[settings.migration_severity],
        severity_overrides={code: SEVERITY_NAMES[level] for code, level in settings.severity_overrides},
    )
    return check_source(source, resolve, check_settings), resolved


def checked(
    uri: str,
    version: int | None,
    source: SourceFile,
    diagnostics: list[Diagnostic],
    client: ClientFacts,
    provided: list[Diagnostic] | None = None,
) -> Checked:
    """The findings (``diagnostics`` sorted by position as :func:`check_source` sorts them, then
    ``provided`` merged in), converted and encoded for the client, and their result id."""
    if provided:
        diagnostics = list(heapq.merge(diagnostics, sorted(provided, key=_position), key=_position))
    converted = chunked_lsp.chunked_diagnostics(diagnostics, uri, source, client)
    return Checked(version, diagnostics, converted.lsp, converted.result_id, converted.items_json)


def _position(d: Diagnostic) -> tuple[int, int, str]:
    """The order of the diagnostics (:func:`check_source`'s)."""
    return (d.span.start, d.span.end, d.code)


def provided_diagnostics(server: NexaLanguageServer, state: DocumentState, source: SourceFile) -> list[Diagnostic]:
    """The findings of the other features (``server.diagnostic_providers``; event loop only)."""
    found: list[Diagnostic] = []
    for provider in server.diagnostic_providers:
        try:
            found.extend(provider(state, source))
        except Exception as exc:  # one feature's failure must not hide the others' findings
            name = getattr(provider, "__qualname__", provider)
            server.log(f"diagnostics of {name} failed: {type(exc).__name__}: {exc}", lsp.MessageType.Error)
    return found


def check(server: NexaLanguageServer, state: DocumentState) -> Checked:
    """Diagnostics of the open document's current version (computed once per version and settings)."""
    if state.checked is not None and state.checked.version == state.version:
        return state.checked
    for claim in server.document_checkers:  # documents that are not Nexa sources (`.nxs` files)
        claimed = claim(state)
        if claimed is not None:
            state.checked = claimed
            return claimed
    source = server.documents.parsed(state)
    settings = server.settings_for(state.uri)
    diagnostics, state.include_paths = base_diagnostics(source, state.path, server.documents.locate, settings)
    provided = provided_diagnostics(server, state, source)
    state.checked = checked(state.uri, state.version, source, diagnostics, server.client, provided)
    server.idle_collector.settle()
    _after_check(server)
    return state.checked


def _after_check(server: NexaLanguageServer) -> None:
    """Once these diagnostics are sent, the other features may warm up (see ``startup.py``)."""
    if not server.startup.features_started:
        server.startup.warm_up_features()


def _result_id(items: list[lsp.Diagnostic]) -> str:
    """A digest of what the client shows of ``items`` (equal ids: nothing to send again)."""
    digest = hashlib.sha1(usedforsecurity=False)
    for d in items:
        start, end = d.range.start, d.range.end
        digest.update(
            repr((d.code, start.line, start.character, end.line, end.character, d.severity, d.message)).encode()
        )
    return digest.hexdigest()[:20]


def publish(server: NexaLanguageServer, uri: str) -> None:
    """Publish the diagnostics of the document's latest version (push clients)."""
    state = server.documents.get(uri)
    if state is None:
        return
    state.pending = None
    try:
        checked = check(server, state)
    except Exception as exc:  # a checker bug must not silence the server
        server.log(f"checking {uri} failed: {type(exc).__name__}: {exc}", lsp.MessageType.Error)
        return
    if checked.version != state.version:
        return
    if checked.items_json is not None:
        params = chunked_lsp.publish_diagnostics_json(uri, checked.items_json, checked.version)
        server.notify_encoded(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)
    else:
        server.text_document_publish_diagnostics(to_lsp.publish_diagnostics(uri, checked.lsp, checked.version))


def schedule(server: NexaLanguageServer, state: DocumentState, delay_ms: int | None = None) -> None:
    """Run diagnostics for ``state`` after the debounce delay (restarting a pending run)."""
    if not server.push_diagnostics:
        return
    if state.pending is not None:
        state.pending.cancel()
    delay = server.settings_for(state.uri).debounce_ms if delay_ms is None else delay_ms
    loop = asyncio.get_running_loop()
    if delay <= 0:
        state.pending = loop.call_soon(publish, server, state.uri)
    else:
        state.pending = loop.call_later(delay / 1000, publish, server, state.uri)


def recheck_all(server: NexaLanguageServer) -> None:
    """After settings or workspace changes: every open document's diagnostics are stale."""
    for state in server.documents:
        state.checked = None
        schedule(server, state, 0)
    _changed_outside_the_editor(server)


def recheck_dependents(server: NexaLanguageServer, path: Path | None) -> None:
    """After ``path`` changed: the open documents including it are stale."""
    if path is None:
        return
    dependents = server.documents.dependents(path)
    for state in dependents:
        state.checked = None
        schedule(server, state)
    if dependents:
        _changed_outside_the_editor(server)


def _changed_outside_the_editor(server: NexaLanguageServer) -> None:
    """Diagnostics changed without an edit of the document: a pull client that can be told
    to pull again is told (``workspace/diagnostic/refresh``); held workspace pulls wake up."""
    if server.client.pulls_diagnostics and server.client.diagnostic_refresh:
        server.workspace_diagnostic_refresh(None)
    else:
        server.diagnostic_changes.note()


# ---------------------------------------------------------------------- handlers


def register(server: NexaLanguageServer) -> None:
    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params: lsp.DidChangeWatchedFilesParams) -> None:
        created = False
        for change in params.changes:
            path = path_of_uri(change.uri)
            if path is None:
                continue
            server.documents.forget_disk(path)
            created = created or change.type != lsp.FileChangeType.Changed
            recheck_dependents(server, path)
        if created:
            server.documents.forget_disk()
            recheck_all(server)
        server.diagnostic_changes.note()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        state = server.documents.open(item.uri, item.text, item.version, item.language_id)
        schedule(server, state, 0)
        recheck_dependents(server, state.path)
        server.diagnostic_changes.note()
        server.idle_collector.activity()

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        changes = from_lsp.content_changes(params.content_changes)
        state = server.documents.change(uri, changes, params.text_document.version)
        if state is None:
            return
        schedule(server, state)
        recheck_dependents(server, state.path)
        server.diagnostic_changes.note()
        server.idle_collector.activity()

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: lsp.DidSaveTextDocumentParams) -> None:
        state = server.documents.get(params.text_document.uri)
        if state is not None and state.path is not None:
            server.documents.forget_disk(state.path)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        state = server.documents.close(params.text_document.uri)
        if state is None:
            return
        if state.pending is not None:
            state.pending.cancel()
        if server.push_diagnostics:
            server.text_document_publish_diagnostics(to_lsp.publish_diagnostics(state.uri, []))
        recheck_dependents(server, state.path)
        server.diagnostic_changes.note()
        server.idle_collector.activity()

    @server.feature(DEBUG_TEXT)
    def debug_text(params: Any) -> dict[str, object]:
        """A test aid: the server's copy of an open document (its text and version)."""
        state = document(server, from_lsp.text_document_uri(params, DEBUG_TEXT))
        return {"text": state.text, "version": state.version}

    @server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC, to_lsp.diagnostic_options(SECTION))
    def document_diagnostic(
        params: lsp.DocumentDiagnosticParams,
    ) -> lsp.DocumentDiagnosticReport | chunked_lsp.EncodedJson:
        checked = check(server, document(server, params.text_document.uri))
        if checked.items_json is not None and params.previous_result_id != checked.result_id:
            return chunked_lsp.EncodedJson(chunked_lsp.full_report_json(checked.items_json, checked.result_id))
        return to_lsp.document_report(checked.lsp, checked.result_id, params.previous_result_id)
