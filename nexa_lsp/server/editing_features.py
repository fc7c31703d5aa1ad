"""Editing features: signature help, inlay hints (resolvable), document links, the call
hierarchy (flow -> agent -> tool) and range formatting.

Each handler converts in (:mod:`nexa_lsp.server.from_lsp`), calls a pure function of
:mod:`nexa_lsp.ide` (or ``syntax/formatting.py``) and converts out; the ide modules are
imported inside the handlers, as in :mod:`nexa_lsp.server.features` (start-up).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from nexa_lsp.server.app import NexaLanguageServer
from nexa_lsp.server.documents import DocumentState, normal_path, uri_of_path
from nexa_lsp.server.features import _cursor, _other_analyses
from nexa_lsp.server.from_lsp import offsets
from nexa_lsp.server.sync import document
from nexa_lsp.server.to_lsp import editing as convert

if TYPE_CHECKING:
    from nexa_lsp.analysis.symbols import Analysis
    from nexa_lsp.ide.calls import CallItem, CallLink


def _default_model(server: NexaLanguageServer, state: DocumentState) -> str | None:
    """``MODEL`` of the ``.nxs`` files above a saved document (read only while runs are
    enabled: an untrusted workspace turns them off); None when unknown or unreadable."""
    if state.path is None or not server.settings_for(state.uri).runs_enabled:
        return None
    from nexa_lsp.runtime.errors import SettingsError  # lazy: start-up
    from nexa_lsp.runtime.settings import Settings  # lazy: start-up

    try:
        return Settings.load(state.path.parent, environ={}).default_model()
    except (SettingsError, OSError):
        return None


# ---------------------------------------------------------------------- call hierarchy items


def _item_data(uri: str, path: Path | None, item: CallItem) -> dict[str, Any]:
    """What names an item in later requests: the document, the declaring file and the declaration."""
    declared = item.path if item.path is not None else path
    return {"uri": uri, "path": None if declared is None else str(declared), "kind": item.kind.value, "name": item.name}


def _item_uri(base_uri: str, base_path: Path | None, item: CallItem) -> str:
    return base_uri if item.path is None or item.path == base_path else uri_of_path(item.path)


def _to_item(base_uri: str, base_path: Path | None, item: CallItem) -> lsp.CallHierarchyItem:
    return convert.call_item(_item_uri(base_uri, base_path, item), item, _item_data(base_uri, base_path, item))


def _declaring(server: NexaLanguageServer, item: lsp.CallHierarchyItem) -> tuple[str, Path | None, Analysis] | None:
    """The uri, path and analysis of the file declaring ``item`` (open document, else disk)."""
    data = item.data if isinstance(item.data, dict) else {}
    written = data.get("path")
    path = normal_path(written) if isinstance(written, str) else None
    state = server.documents.get(str(data.get("uri", item.uri)))
    if path is not None and (state is None or state.path != path):
        state = server.documents.get(uri_of_path(path))
    if state is not None:
        return state.uri, state.path, server.documents.analysis(state)
    if path is None:
        return None
    analysis = server.documents.view().analysis_of_file(path)
    return None if analysis is None else (uri_of_path(path), path, analysis)


def _named(analysis: Analysis, item: lsp.CallHierarchyItem) -> CallItem | None:
    from nexa_lsp.analysis.names import DeclKind  # lazy: start-up
    from nexa_lsp.ide.calls import item_named  # lazy: start-up

    data = item.data if isinstance(item.data, dict) else {}
    try:
        kind = DeclKind(data.get("kind"))
    except ValueError:
        return None
    return item_named(analysis, str(data.get("name", item.name)), kind)


def _links(
    base_uri: str, base_path: Path | None, links: list[CallLink]
) -> list[tuple[lsp.CallHierarchyItem, CallLink]]:
    return [(_to_item(base_uri, base_path, link.item), link) for link in links]


# ---------------------------------------------------------------------- handlers


def register(server: NexaLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP, convert.SIGNATURE_HELP_OPTIONS)
    def signature_help(params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
        from nexa_lsp.ide.signatures import signature_help as find  # lazy: start-up

        _state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        found = find(analysis, at)
        return None if found is None else convert.signature_help(found, server.client)

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, convert.INLAY_HINT_OPTIONS)
    async def inlay_hints(params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        from nexa_lsp.ide.hints import inlay_hints as find  # lazy: start-up
        from nexa_lsp.ide.hints import resolve_hint  # lazy: start-up

        state = document(server, params.text_document.uri)
        model = await asyncio.to_thread(_default_model, server, state)
        analysis = server.documents.analysis(document(server, state.uri))  # the text as it is now
        lines = analysis.source.lines
        start, end = offsets(lines, params.range)
        eager = not server.client.inlay_hint_resolves_tooltip
        return [
            convert.inlay_hint(
                lines,
                hint,
                {"uri": state.uri, "kind": hint.kind, "name": hint.name, "model": model},
                resolve_hint(analysis, hint.kind, hint.name, model) if eager else None,
                server.client,
            )
            for hint in find(analysis, start, end, model)
        ]

    @server.feature(lsp.INLAY_HINT_RESOLVE)
    def inlay_hint_resolve(hint: lsp.InlayHint) -> lsp.InlayHint:
        from nexa_lsp.ide.hints import resolve_hint  # lazy: start-up

        data = hint.data if isinstance(hint.data, dict) else {}
        state = server.documents.get(str(data.get("uri", "")))
        if state is None or hint.tooltip is not None:
            return hint
        model = data.get("model")
        analysis = server.documents.analysis(state)
        tooltip = resolve_hint(
            analysis, str(data.get("kind", "")), str(data.get("name", "")), model if isinstance(model, str) else None
        )
        if tooltip is not None:
            hint.tooltip = convert.hint_tooltip(tooltip, server.client)
        return hint

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_LINK, convert.DOCUMENT_LINK_OPTIONS)
    def document_links(params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
        from nexa_lsp.ide.links import document_links as find  # lazy: start-up

        state = document(server, params.text_document.uri)
        source = server.documents.parsed(state)
        return [
            convert.document_link(source.lines, link, uri_of_path(link.target), server.client)
            for link in find(source, state.path)
        ]

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
    def prepare_call_hierarchy(params: lsp.CallHierarchyPrepareParams) -> list[lsp.CallHierarchyItem] | None:
        from nexa_lsp.ide.calls import prepare_call_hierarchy as prepare  # lazy: start-up

        state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        item = prepare(analysis, at)
        return None if item is None else [_to_item(state.uri, state.path, item)]

    @server.feature(lsp.CALL_HIERARCHY_INCOMING_CALLS)
    async def incoming_calls(params: lsp.CallHierarchyIncomingCallsParams) -> list[lsp.CallHierarchyIncomingCall]:
        from nexa_lsp.ide.calls import incoming_calls as find  # lazy: start-up

        declaring = _declaring(server, params.item)
        item = None if declaring is None else _named(declaring[2], params.item)
        if declaring is None or item is None:
            return []
        uri, path, analysis = declaring
        others = await asyncio.to_thread(_other_analyses, server.documents.view(), path, item.name)
        links = _links(uri, path, find(analysis, item, others))
        return [convert.incoming_call(lsp_item, link.item.source.lines, link.ranges) for lsp_item, link in links]

    @server.feature(lsp.CALL_HIERARCHY_OUTGOING_CALLS)
    def outgoing_calls(params: lsp.CallHierarchyOutgoingCallsParams) -> list[lsp.CallHierarchyOutgoingCall]:
        from nexa_lsp.ide.calls import outgoing_calls as find  # lazy: start-up

        declaring = _declaring(server, params.item)
        item = None if declaring is None else _named(declaring[2], params.item)
        if declaring is None or item is None:
            return []
        uri, path, analysis = declaring
        lines = analysis.source.lines
        return [
            convert.outgoing_call(lsp_item, lines, link.ranges)
            for lsp_item, link in _links(uri, path, find(analysis, item))
        ]

    @server.feature(lsp.TEXT_DOCUMENT_RANGE_FORMATTING)
    def range_formatting(params: lsp.DocumentRangeFormattingParams) -> list[lsp.TextEdit]:
        """Whitespace-only formatting of the lines the range touches (``syntax/formatting.py``)."""
        from nexa_lsp.syntax.formatting import FormatOptions, format_range  # lazy: start-up

        source = server.documents.parsed(document(server, params.text_document.uri))
        indent = " " * params.options.tab_size if params.options.insert_spaces else "\t"
        start, end = offsets(source.lines, params.range)
        return convert.range_edit(
            source.lines, format_range(source.text, start, end, FormatOptions(indent=indent or "    "))
        )
