"""Documents, settings and diagnostics: the part of the server that follows edits.

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
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from nexa_lsp.server.app import NexaLanguageServer, RequestFailed
from nexa_lsp.server.convert import to_range
from nexa_lsp.server.documents import Checked, DocumentState, path_of_uri, uri_of_path
from nexa_lsp.server.settings import SECTION, ServerSettings

if TYPE_CHECKING:
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import SourceFile


def document(server: NexaLanguageServer, uri: str) -> DocumentState:
    """The open document ``uri``; requests for anything else fail with a clear message."""
    state = server.documents.get(uri)
    if state is None:
        raise RequestFailed(f"{uri} is not open in the editor (nexa-lsp answers for open documents)")
    return state


# ---------------------------------------------------------------------- diagnostics


def check(server: NexaLanguageServer, state: DocumentState) -> Checked:
    """Diagnostics of the document's current version (computed once per version and settings)."""
    if state.checked is not None and state.checked.version == state.version:
        return state.checked
    from nexa_lsp.analysis.engine import CheckSettings, check_source
    from nexa_lsp.analysis.severity import SEVERITY_NAMES

    documents = server.documents
    source = documents.parsed(state)
    settings = server.settings_for(state.uri)
    resolved: set[Path] = set()

    def resolve(include: str, _including: Path | None) -> SourceFile | None:
        path, included = documents.locate(include, state.path)
        if path is not None:
            resolved.add(path)
        return included

    check_settings = CheckSettings(
        migration_hints=settings.migration_hints,
        migration_severity=SEVERITY_NAMES[settings.migration_severity],
        severity_overrides={code: SEVERITY_NAMES[level] for code, level in settings.severity_overrides},
    )
    diagnostics = check_source(source, resolve, check_settings)
    state.include_paths = resolved
    for provider in server.diagnostic_providers:
        try:
            diagnostics.extend(provider(state, source))
        except Exception as exc:  # one feature's failure must not hide the others' findings
            server.log(
                f"diagnostics of {getattr(provider, '__qualname__', provider)} failed: {type(exc).__name__}: {exc}",
                lsp.MessageType.Error,
            )
    diagnostics.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    converted = [to_lsp_diagnostic(server, state, source, d) for d in diagnostics]
    digest = hashlib.sha1(usedforsecurity=False)
    for d in converted:
        digest.update(
            repr(
                (
                    d.code,
                    d.range.start.line,
                    d.range.start.character,
                    d.range.end.line,
                    d.range.end.character,
                    d.severity,
                    d.message,
                )
            ).encode()
        )
    state.checked = Checked(state.version, diagnostics, converted, digest.hexdigest()[:20])
    server.idle_collector.settle()
    return state.checked


def to_lsp_diagnostic(
    server: NexaLanguageServer, state: DocumentState, source: SourceFile, d: Diagnostic
) -> lsp.Diagnostic:
    lines = source.lines
    tags: list[lsp.DiagnosticTag] = []
    if d.unnecessary and _tag_supported(server, lsp.DiagnosticTag.Unnecessary):
        tags.append(lsp.DiagnosticTag.Unnecessary)
    related = None
    if d.related and server.client_supports("text_document.publish_diagnostics.related_information"):
        related = [
            lsp.DiagnosticRelatedInformation(
                lsp.Location(state.uri, to_range(lines, r.span.start, r.span.end)), r.message
            )
            for r in d.related
        ]
    fixes = [{"title": f.title, "safe": f.safe} for f in d.fixes]
    data: dict[str, object] = dict(d.data)
    if fixes:
        data["fixes"] = fixes
    return lsp.Diagnostic(
        range=to_range(lines, d.span.start, d.span.end),
        message=d.message,
        severity=lsp.DiagnosticSeverity(int(d.severity)),
        code=d.code,
        source="nexa",
        tags=tags or None,
        related_information=related,
        data=data or None,
    )


def _tag_supported(server: NexaLanguageServer, tag: lsp.DiagnosticTag) -> bool:
    caps = server.client_capabilities.text_document
    pd = caps.publish_diagnostics if caps is not None else None
    support = pd.tag_support if pd is not None else None
    return support is not None and tag in support.value_set


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
    server.text_document_publish_diagnostics(
        lsp.PublishDiagnosticsParams(uri=uri, diagnostics=checked.lsp, version=checked.version)
    )


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
    if not server.push_diagnostics and server.client_supports("workspace.diagnostics.refresh_support"):
        server.workspace_diagnostic_refresh(None)


def recheck_dependents(server: NexaLanguageServer, path: Path | None) -> None:
    if path is None:
        return
    dependents = server.documents.dependents(path)
    for state in dependents:
        state.checked = None
        schedule(server, state)
    if dependents and not server.push_diagnostics and server.client_supports("workspace.diagnostics.refresh_support"):
        server.workspace_diagnostic_refresh(None)


# ---------------------------------------------------------------------- settings


def apply_settings(
    server: NexaLanguageServer, global_data: object, per_folder: dict[str, object] | None = None
) -> None:
    base, problems = ServerSettings().updated(server.initialization_options)
    settings, more = base.updated(global_data)
    problems += more
    server.settings = settings
    server.folder_settings = {}
    for folder, data in (per_folder or {}).items():
        folder_settings, more = settings.updated(data)
        problems += more
        if folder_settings != settings:
            server.folder_settings[folder] = folder_settings
    for problem in dict.fromkeys(problems):
        server.log(problem, lsp.MessageType.Warning)
    for listener in server.settings_listeners:
        listener()


async def pull_configuration(server: NexaLanguageServer) -> bool:
    """Ask the client for the ``nexa`` section (globally and per workspace folder)."""
    if not server.client_supports("workspace.configuration"):
        return False
    folders = list(server.workspace.folders.values())
    items = [lsp.ConfigurationItem(section=SECTION)]
    items += [lsp.ConfigurationItem(scope_uri=f.uri, section=SECTION) for f in folders]
    try:
        answer = await server.workspace_configuration_async(lsp.ConfigurationParams(items=items))
    except Exception as exc:
        server.log(f"workspace/configuration failed: {exc}; using the defaults", lsp.MessageType.Warning)
        return False
    values = list(answer or [])
    values += [None] * (len(items) - len(values))
    apply_settings(server, values[0], {f.uri: v for f, v in zip(folders, values[1:], strict=False)})
    return True


# ---------------------------------------------------------------------- handlers


def warm_up() -> None:
    """Load the parsers and analysis modules before the first document needs them."""
    from nexa_lsp.ide import completion, hover  # noqa: F401
    from nexa_lsp.syntax.grammar import parser_for
    from nexa_lsp.syntax.version import VersionPath

    for path in VersionPath:
        parser_for(path)


def register(server: NexaLanguageServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        server.initialization_options = params.initialization_options
        settings, problems = ServerSettings().updated(params.initialization_options)
        server.settings = settings
        for problem in problems:
            server.log(problem, lsp.MessageType.Warning)
        server.refresh_folders()

    @server.feature(lsp.INITIALIZED)
    async def initialized(params: lsp.InitializedParams) -> None:
        asyncio.get_running_loop().call_soon(_safe_warm_up, server)
        if await pull_configuration(server):
            recheck_all(server)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: lsp.DidChangeConfigurationParams) -> None:
        if not await pull_configuration(server):
            apply_settings(server, params.settings)
        recheck_all(server)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        server.refresh_folders()
        await pull_configuration(server)
        recheck_all(server)

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

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        state = server.documents.open(item.uri, item.text, item.version)
        schedule(server, state, 0)
        recheck_dependents(server, state.path)
        server.idle_collector.activity()

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        text = server.workspace.get_text_document(uri).source
        state = server.documents.change(uri, text, params.text_document.version)
        if state is None:
            return
        schedule(server, state)
        recheck_dependents(server, state.path)
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
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=state.uri, diagnostics=[]))
        recheck_dependents(server, state.path)
        server.idle_collector.activity()

    @server.feature(
        lsp.TEXT_DOCUMENT_DIAGNOSTIC,
        lsp.DiagnosticOptions(identifier=SECTION, inter_file_dependencies=True, workspace_diagnostics=True),
    )
    def document_diagnostic(params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
        state = document(server, params.text_document.uri)
        checked = check(server, state)
        if params.previous_result_id is not None and params.previous_result_id == checked.result_id:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=checked.result_id)
        return lsp.RelatedFullDocumentDiagnosticReport(items=checked.lsp, result_id=checked.result_id)

    @server.feature(lsp.WORKSPACE_DIAGNOSTIC)
    def workspace_diagnostic(params: lsp.WorkspaceDiagnosticParams) -> lsp.WorkspaceDiagnosticReport:
        previous = {p.uri: p.value for p in params.previous_result_ids}
        items: list[lsp.WorkspaceDocumentDiagnosticReport] = []
        open_paths = set()
        for state in server.documents:
            if state.path is not None:
                open_paths.add(state.path)
            checked = check(server, state)
            if previous.get(state.uri) == checked.result_id:
                items.append(
                    lsp.WorkspaceUnchangedDocumentDiagnosticReport(
                        uri=state.uri, version=state.version, result_id=checked.result_id
                    )
                )
            else:
                items.append(
                    lsp.WorkspaceFullDocumentDiagnosticReport(
                        uri=state.uri, version=state.version, items=checked.lsp, result_id=checked.result_id
                    )
                )
        for path in server.documents.workspace_files():
            if path in open_paths:
                continue
            report = _file_report(server, path, previous)
            if report is not None:
                items.append(report)
        return lsp.WorkspaceDiagnosticReport(items=items)


def _file_report(
    server: NexaLanguageServer, path: Path, previous: dict[str, str]
) -> lsp.WorkspaceDocumentDiagnosticReport | None:
    """Diagnostics of a workspace file that is not open (read from disk)."""
    uri = uri_of_path(path)
    text = server.documents.disk_text(path)
    if text is None:
        return None
    state = DocumentState(uri, path, text, None, server.documents.read(path))
    checked = check(server, state)
    if previous.get(uri) == checked.result_id:
        return lsp.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, version=None, result_id=checked.result_id)
    return lsp.WorkspaceFullDocumentDiagnosticReport(
        uri=uri, version=None, items=checked.lsp, result_id=checked.result_id
    )


def _safe_warm_up(server: NexaLanguageServer) -> None:
    try:
        warm_up()
    except Exception as exc:
        server.log(f"warm-up failed: {exc}", lsp.MessageType.Warning)
    server.idle_collector.collect()
