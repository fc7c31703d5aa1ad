"""Language features: symbols, hover, completion, navigation, rename, semantic tokens,
formatting, folding, selection ranges, code actions and the ``nexa.migrateFile`` command.

Each handler converts in (:mod:`nexa_lsp.server.from_lsp`), calls a pure function of
:mod:`nexa_lsp.ide`, and converts out (:mod:`nexa_lsp.server.to_lsp`). The ide modules
are imported inside the handlers on purpose ("lazy: start-up"): ``initialize`` is
answered before the ide, analysis and syntax layers load; the warm-up after
``initialized`` loads them in the background.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from nexa_lsp.server import chunked_lsp, to_lsp
from nexa_lsp.server.app import NexaLanguageServer, RequestFailed
from nexa_lsp.server.documents import DocumentState, FileView, uri_of_path
from nexa_lsp.server.from_lsp import offset, offsets
from nexa_lsp.server.sync import check, document

if TYPE_CHECKING:
    from nexa_lsp.analysis.symbols import Analysis
    from nexa_lsp.ide.actions import MigrationPlan
    from nexa_lsp.ide.navigation import Place
    from nexa_lsp.syntax.source import SourceFile

FIX_ALL_KIND = "source.fixAll.nexa"
MIGRATE_KIND = "source.migrate.nexa"


def _cursor(server: NexaLanguageServer, uri: str, pos: lsp.Position) -> tuple[DocumentState, Analysis, int]:
    state = document(server, uri)
    analysis = server.documents.analysis(state)
    return state, analysis, offset(analysis.source.lines, pos)


def _uri_for(state: DocumentState, path: Path | None) -> str:
    return state.uri if path is None or path == state.path else uri_of_path(path)


def _location(state: DocumentState, place: Place) -> lsp.Location:
    return to_lsp.location(_uri_for(state, place.path), place.source.lines, place.start, place.end)


def _other_analyses(view: FileView, here: Path | None, name: str) -> list[tuple[Path, Analysis]]:
    """Analyses of the other open and workspace files that mention ``name`` (cheap text test
    first). Reads every workspace file: run it in a worker thread."""
    out = []
    for path in view.known_files():
        if path == here:
            continue
        text = view.text(path)
        if text is None or name not in text:
            continue
        analysis = view.analysis_of_file(path)
        if analysis is not None:
            out.append((path, analysis))
    return out


async def _others(server: NexaLanguageServer, state: DocumentState, name: str | None) -> list[tuple[Path, Analysis]]:
    """:func:`_other_analyses` in a worker thread, over the files as they are now (none without a name)."""
    if name is None:
        return []
    return await asyncio.to_thread(_other_analyses, server.documents.view(), state.path, name)


def _workspace_files(view: FileView) -> list[tuple[Path, SourceFile]]:
    """The parse of every workspace file (open ones as the editor has them): a worker thread's job."""
    found = []
    for path in view.known_files():
        source = view.read(path)
        if source is not None:
            found.append((path, source))
    return found


def _migration(server: NexaLanguageServer, state: DocumentState) -> MigrationPlan:
    """The migration plan of the document's current version (computed once per version)."""
    from nexa_lsp.ide.actions import migration_plan  # lazy: start-up

    if state.migration is not None and state.migration[0] == state.version:
        return state.migration[1]
    documents = server.documents
    plan = migration_plan(documents.parsed(state), lambda include, _at: documents.locate(include, state.path)[1])
    state.migration = (state.version, plan)
    return plan


def _tokens(
    server: NexaLanguageServer, uri: str, start: int = 0, end: int | None = None
) -> tuple[DocumentState, list[int]]:
    """The encoded semantic tokens of a document (of ``[start, end)`` when given; the whole
    document from the per-chunk encodings)."""
    from nexa_lsp.ide.tokens import encoded_semantic_tokens, semantic_tokens  # lazy: start-up

    state = document(server, uri)
    analysis = server.documents.analysis(state)
    if start == 0 and end is None:
        return state, encoded_semantic_tokens(analysis)
    return state, to_lsp.encode_tokens(analysis.source.lines, semantic_tokens(analysis, start, end))


def _tokens_result_id(state: DocumentState, data: list[int]) -> str:
    return f"{state.version}:{len(data)}:{hash(tuple(data)) & 0xFFFFFFFF}"


def register(server: NexaLanguageServer) -> None:
    converter = server.protocol._converter

    def encode(symbols: Sequence[lsp.DocumentSymbol]) -> str:
        """The symbols as JSON list items, exactly as pygls would write them."""
        return chunked_lsp.encode_json([converter.unstructure(s) for s in symbols])[1:-1]

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbols(
        params: lsp.DocumentSymbolParams,
    ) -> list[lsp.DocumentSymbol] | list[lsp.SymbolInformation] | chunked_lsp.EncodedJson:
        state = document(server, params.text_document.uri)
        parsed = server.documents.parsed(state)
        return chunked_lsp.chunked_document_symbols(state.uri, parsed, server.client, encode)

    @server.feature(lsp.WORKSPACE_SYMBOL)
    async def workspace_symbols(params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
        from nexa_lsp.ide.outline import workspace_symbols as find  # lazy: start-up

        files = await asyncio.to_thread(_workspace_files, server.documents.view())
        out = [to_lsp.workspace_symbol(uri_of_path(found.path), found) for found in find(params.query, files)]
        for state in server.documents:
            if state.path is None:  # an unsaved document: its uri stands for the path
                found_here = find(params.query, [(Path(state.uri), server.documents.parsed(state))])
                out.extend(to_lsp.workspace_symbol(state.uri, found) for found in found_here)
        return out

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        from nexa_lsp.ide.hover import hover as describe  # lazy: start-up

        _state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        found = describe(analysis, at)
        return None if found is None else to_lsp.hover(analysis.source.lines, found, server.client)

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, to_lsp.COMPLETION_OPTIONS)
    def completion(params: lsp.CompletionParams) -> lsp.CompletionList:
        from nexa_lsp.ide.completion import complete, item_documentation  # lazy: start-up

        state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        result = complete(analysis, at)
        lazy = server.client.lazy_completion_documentation
        # a declaration's documentation is left to completionItem/resolve when the client asks for it
        items = [(i, "" if lazy and i.symbol is not None else item_documentation(i)) for i in result.items]
        resolve_data = {"uri": state.uri} if lazy else None
        lines = analysis.source.lines
        return to_lsp.completion_list(
            lines, items, result.replace_start, at, result.incomplete, server.client, resolve_data
        )

    @server.feature(lsp.COMPLETION_ITEM_RESOLVE)
    def completion_resolve(item: lsp.CompletionItem) -> lsp.CompletionItem:
        from nexa_lsp.ide.describe import symbol_summary  # lazy: start-up

        data = item.data if isinstance(item.data, dict) else {}
        state = server.documents.get(str(data.get("uri", "")))
        if state is None or item.documentation is not None:
            return item
        symbol = server.documents.analysis(state).lookup(str(data.get("name", "")))
        if symbol is not None:
            item.documentation = to_lsp.completion_documentation(symbol_summary(symbol), server.client)
        return item

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(params: lsp.DefinitionParams) -> list[lsp.Location]:
        from nexa_lsp.ide.navigation import definition as find  # lazy: start-up

        state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        return [_location(state, p) for p in find(analysis, at)]

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    async def references(params: lsp.ReferenceParams) -> list[lsp.Location]:
        from nexa_lsp.ide.navigation import references as find  # lazy: start-up
        from nexa_lsp.ide.navigation import target_at  # lazy: start-up

        state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        target = target_at(analysis, at)
        if target is None:
            return []
        others = await _others(server, state, target.symbol.name if target.symbol is not None else None)
        return [_location(state, p) for p in find(analysis, at, others, params.context.include_declaration)]

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    def highlight(params: lsp.DocumentHighlightParams) -> list[lsp.DocumentHighlight]:
        from nexa_lsp.ide.navigation import highlights  # lazy: start-up

        _state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        return [to_lsp.highlight(analysis.source.lines, h) for h in highlights(analysis, at)]

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(params: lsp.PrepareRenameParams) -> lsp.PrepareRenamePlaceholder | None:
        from nexa_lsp.ide.navigation import RenameError  # lazy: start-up
        from nexa_lsp.ide.navigation import prepare_rename as prepare  # lazy: start-up

        _state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        try:
            start, end, text = prepare(analysis, at)
        except RenameError:
            return None
        return to_lsp.rename_placeholder(analysis.source.lines, start, end, text)

    @server.feature(lsp.TEXT_DOCUMENT_RENAME, to_lsp.RENAME_OPTIONS)
    async def rename(params: lsp.RenameParams) -> lsp.WorkspaceEdit:
        from nexa_lsp.ide.navigation import RenameError, target_at  # lazy: start-up
        from nexa_lsp.ide.navigation import rename as plan  # lazy: start-up

        state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        target = target_at(analysis, at)
        others = await _others(server, state, target.symbol.name if target and target.symbol else None)
        try:
            edits = plan(analysis, at, params.new_name, others)
        except RenameError as exc:
            raise RequestFailed(str(exc)) from exc
        return to_lsp.rename_edit(
            (_uri_for(state, path), place.source.lines, place.start, place.end, text)
            for path, places in edits.items()
            for place, text in places
        )

    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, to_lsp.SEMANTIC_TOKENS_LEGEND)
    def tokens_full(params: lsp.SemanticTokensParams) -> lsp.SemanticTokens:
        state, data = _tokens(server, params.text_document.uri)
        state.tokens = (_tokens_result_id(state, data), data)
        return to_lsp.semantic_tokens(data, state.tokens[0])

    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, to_lsp.SEMANTIC_TOKENS_LEGEND)
    def tokens_delta(params: lsp.SemanticTokensDeltaParams) -> lsp.SemanticTokens | lsp.SemanticTokensDelta:
        previous = document(server, params.text_document.uri).tokens
        state, data = _tokens(server, params.text_document.uri)
        state.tokens = (_tokens_result_id(state, data), data)
        if previous is None or previous[0] != params.previous_result_id:
            return to_lsp.semantic_tokens(data, state.tokens[0])
        from nexa_lsp.ide.token_edits import token_edits  # lazy: start-up

        return to_lsp.semantic_token_edits(token_edits(previous[1], data), state.tokens[0])

    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, to_lsp.SEMANTIC_TOKENS_LEGEND)
    def tokens_range(params: lsp.SemanticTokensRangeParams) -> lsp.SemanticTokens:
        state = document(server, params.text_document.uri)
        start, end = offsets(server.documents.parsed(state).lines, params.range)
        return to_lsp.semantic_tokens(_tokens(server, state.uri, start, end)[1])

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
    def formatting(params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit]:
        """Whitespace-only formatting (``syntax/formatting.py``): one edit, or none when formatted."""
        from nexa_lsp.syntax.formatting import FormatOptions, format_source  # lazy: start-up

        source = server.documents.parsed(document(server, params.text_document.uri))
        indent = " " * params.options.tab_size if params.options.insert_spaces else "\t"
        formatted = format_source(source.text, FormatOptions(indent=indent or "    "))
        return to_lsp.replace_all(source.lines, source.text, formatted)

    @server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
    def folding(params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
        from nexa_lsp.ide.structure import folding_ranges  # lazy: start-up

        folds = folding_ranges(server.documents.parsed(document(server, params.text_document.uri)))
        limit = server.client.folding_range_limit
        return [to_lsp.folding_range(f) for f in (folds[:limit] if limit else folds)]

    @server.feature(lsp.TEXT_DOCUMENT_SELECTION_RANGE)
    def selection(params: lsp.SelectionRangeParams) -> list[lsp.SelectionRange]:
        from nexa_lsp.ide.structure import selection_ranges  # lazy: start-up

        source = server.documents.parsed(document(server, params.text_document.uri))
        return [
            to_lsp.selection_range(source.lines, selection_ranges(source, offset(source.lines, pos)))
            for pos in params.positions
        ]

    server.code_action_kinds.extend([lsp.CodeActionKind.QuickFix, FIX_ALL_KIND, MIGRATE_KIND])

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, to_lsp.code_action_options(server.code_action_kinds))
    def code_actions(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        from nexa_lsp.ide.actions import code_actions as find  # lazy: start-up

        state = document(server, params.text_document.uri)
        checked = check(server, state)
        source = server.documents.parsed(state)
        start, end = offsets(source.lines, params.range)
        by_key = {to_lsp.diagnostic_key(d): d for d in checked.lsp}
        actions = find(source, checked.diagnostics, start, end, params.context.only, lambda: _migration(server, state))
        out = [to_lsp.code_action(state.uri, state.version, source.lines, a, by_key, server.client) for a in actions]
        for provider in server.code_action_providers:
            try:
                out.extend(provider(params))
            except Exception as exc:  # the other actions are still worth offering
                name = getattr(provider, "__qualname__", provider)
                server.log(f"code actions of {name} failed: {type(exc).__name__}: {exc}", lsp.MessageType.Error)
        return out

    @server.command("nexa.migrateFile")
    async def migrate_file(arg: Any) -> dict[str, Any]:
        uri = arg.get("uri") if isinstance(arg, dict) else None
        if not isinstance(uri, str):
            raise RequestFailed('nexa.migrateFile takes {"uri": "..."}')
        state = document(server, uri)
        source = server.documents.parsed(state)
        plan = _migration(server, state)
        if not plan.available:
            raise RequestFailed("migration to Nexa 3.0 is not available in this nexa-lsp")
        if plan.edits is None:
            return {"applied": False, "remaining": plan.blockers}
        edit = to_lsp.workspace_edit(state.uri, state.version, source.lines, plan.edits, server.client)
        result = await server.workspace_apply_edit_async(
            to_lsp.apply_edit_request(edit, "Migrate this file to Nexa 3.0")
        )
        if not result.applied:
            raise RequestFailed(f"the editor did not apply the migration: {result.failure_reason or 'refused'}")
        return {"applied": True, "remaining": []}
