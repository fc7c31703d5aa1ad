"""Language features: symbols, hover, completion, navigation, rename, semantic
tokens, folding, selection ranges, code actions and the ``nexa.migrateFile``
command. Each handler converts positions, calls a pure function of
:mod:`nexa_lsp.ide`, and converts the plain result to lsprotocol types."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from nexa_lsp.ide.legend import TOKEN_MODIFIERS, TOKEN_TYPES
from nexa_lsp.server.app import NexaLanguageServer, RequestFailed
from nexa_lsp.server.convert import offset, offsets, to_range
from nexa_lsp.server.documents import DocumentState, uri_of_path
from nexa_lsp.server.sync import check, document

if TYPE_CHECKING:
    from nexa_lsp.analysis.symbols import Analysis
    from nexa_lsp.ide.actions import ActionData, MigrationPlan
    from nexa_lsp.ide.navigation import Place
    from nexa_lsp.ide.outline import OutlineSymbol
    from nexa_lsp.syntax.source import SourceFile

LEGEND = lsp.SemanticTokensLegend(token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS))
FIX_ALL_KIND = "source.fixAll.nexa"
MIGRATE_KIND = "source.migrate.nexa"


def _cursor(server: NexaLanguageServer, uri: str, pos: lsp.Position) -> tuple[DocumentState, Analysis, int]:
    state = document(server, uri)
    analysis = server.documents.analysis(state)
    return state, analysis, offset(analysis.source.lines, pos)


def _uri_for(state: DocumentState, path: Path | None) -> str:
    return state.uri if path is None or path == state.path else uri_of_path(path)


def _location(state: DocumentState, place: Place) -> lsp.Location:
    return lsp.Location(uri=_uri_for(state, place.path), range=to_range(place.source.lines, place.start, place.end))


def _other_analyses(server: NexaLanguageServer, state: DocumentState, name: str) -> list[tuple[Path, Analysis]]:
    """Analyses of the other open and workspace files that mention ``name`` (cheap text test first)."""
    out = []
    for path in server.documents.known_files():
        if path == state.path:
            continue
        text = server.documents.disk_text(path)
        if text is None or name not in text:
            continue
        analysis = server.documents.analysis_of_file(path)
        if analysis is not None:
            out.append((path, analysis))
    return out


def _markup(server: NexaLanguageServer, text: str, capability: str) -> lsp.MarkupContent | str:
    """Markdown when the client renders it, else the same text as plain text."""
    formats = _client_list(server, capability)
    if lsp.MarkupKind.Markdown in formats:
        return lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text)
    if lsp.MarkupKind.PlainText in formats:
        return lsp.MarkupContent(kind=lsp.MarkupKind.PlainText, value=text)
    return text


def _client_list(server: NexaLanguageServer, capability: str) -> list[Any]:
    """A list-valued client capability (empty when the client does not declare it)."""
    value: Any = server.client_capabilities
    for part in capability.split("."):
        value = getattr(value, part, None)
        if value is None:
            return []
    return list(value)


# ---------------------------------------------------------------------- symbols


def _document_symbol(lines: Any, sym: OutlineSymbol) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(
        name=sym.name,
        kind=getattr(lsp.SymbolKind, sym.kind.value),
        detail=sym.detail or None,
        range=to_range(lines, sym.start, sym.end),
        selection_range=to_range(lines, sym.selection_start, sym.selection_end),
        children=[_document_symbol(lines, c) for c in sym.children] or None,
    )


def _flat_symbols(
    uri: str, lines: Any, symbols: Iterable[OutlineSymbol], container: str | None
) -> Iterable[lsp.SymbolInformation]:
    for sym in symbols:
        yield lsp.SymbolInformation(
            name=sym.name,
            kind=getattr(lsp.SymbolKind, sym.kind.value),
            location=lsp.Location(uri, to_range(lines, sym.start, sym.end)),
            container_name=container,
        )
        yield from _flat_symbols(uri, lines, sym.children, sym.name)


# ---------------------------------------------------------------------- completion


def _completion_item(
    server: NexaLanguageServer, item: Any, rng: lsp.Range | None, snippets: bool, resolve_data: dict[str, str] | None
) -> lsp.CompletionItem:
    """One item; ``rng`` None when the list's default edit range applies, ``resolve_data`` set
    when the documentation of a declaration is left to ``completionItem/resolve``."""
    from nexa_lsp.ide.completion import item_documentation

    use_snippet = snippets and item.snippet is not None
    text = item.snippet if use_snippet else (item.insert_text or item.label)
    documentation = None
    data = None
    if item.symbol is not None and resolve_data is not None:
        data = {**resolve_data, "name": item.label}
    else:
        docs = item_documentation(item)
        if docs:
            documentation = _markup(server, docs, "text_document.completion.completion_item.documentation_format")
    return lsp.CompletionItem(
        label=item.label,
        kind=getattr(lsp.CompletionItemKind, item.kind.value),
        detail=item.detail or None,
        documentation=documentation,
        sort_text=f"{item.group}{item.label}",
        text_edit=lsp.TextEdit(range=rng, new_text=text) if rng is not None else None,
        text_edit_text=text if rng is None and text != item.label else None,
        insert_text_format=lsp.InsertTextFormat.Snippet if use_snippet else lsp.InsertTextFormat.PlainText,
        data=data,
    )


# ---------------------------------------------------------------------- semantic tokens


def _encode(source: SourceFile, tokens: Iterable[Any]) -> list[int]:
    data: list[int] = []
    lines = source.lines
    prev_line = 0
    prev_char = 0
    for tk in tokens:
        start = lines.utf16_position(tk.start)
        end = lines.utf16_position(tk.start + tk.length)
        if end.line != start.line:
            continue
        delta_line = start.line - prev_line
        delta_char = start.character - prev_char if delta_line == 0 else start.character
        data.extend((delta_line, delta_char, end.character - start.character, tk.type_index, tk.modifiers))
        prev_line, prev_char = start.line, start.character
    return data


def _token_edits(old: list[int], new: list[int]) -> list[lsp.SemanticTokensEdit]:
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    if prefix == len(old) == len(new):
        return []
    return [
        lsp.SemanticTokensEdit(
            start=prefix, delete_count=len(old) - prefix - suffix, data=new[prefix : len(new) - suffix]
        )
    ]


# ---------------------------------------------------------------------- code actions


def _workspace_edit(
    server: NexaLanguageServer, state: DocumentState, source: SourceFile, edits: Iterable[Any]
) -> lsp.WorkspaceEdit:
    lines = source.lines
    text_edits: list[lsp.TextEdit | lsp.AnnotatedTextEdit | lsp.SnippetTextEdit] = [
        lsp.TextEdit(range=to_range(lines, e.start, e.end), new_text=e.new_text) for e in edits
    ]
    if server.client_supports("workspace.workspace_edit.document_changes"):
        # versioned: a client refuses the edit if the document changed since it was computed
        return lsp.WorkspaceEdit(
            document_changes=[
                lsp.TextDocumentEdit(
                    text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=state.uri, version=state.version),
                    edits=text_edits,
                )
            ]
        )
    return lsp.WorkspaceEdit(changes={state.uri: [e for e in text_edits if isinstance(e, lsp.TextEdit)]})


def _migration(server: NexaLanguageServer, state: DocumentState) -> MigrationPlan:
    from nexa_lsp.ide.actions import migration_plan

    if state.migration is not None and state.migration[0] == state.version:
        return state.migration[1]
    plan = migration_plan(server.documents.parsed(state))
    state.migration = (state.version, plan)
    return plan


def _code_action(
    server: NexaLanguageServer,
    state: DocumentState,
    source: SourceFile,
    action: ActionData,
    by_key: dict[tuple[str, int, int], lsp.Diagnostic],
) -> lsp.CodeAction:
    lines = source.lines
    diagnostics = []
    for d in action.diagnostics:
        rng = to_range(lines, d.span.start, d.span.end)
        key = (d.code, rng.start.line, rng.start.character)
        if key in by_key:
            diagnostics.append(by_key[key])
    return lsp.CodeAction(
        title=action.title,
        kind=action.kind,
        diagnostics=diagnostics or None,
        is_preferred=action.preferred or None,
        edit=_workspace_edit(server, state, source, action.edits),
    )


def register(server: NexaLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbols(params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol] | list[lsp.SymbolInformation]:
        from nexa_lsp.ide.outline import document_symbols as outline

        state = document(server, params.text_document.uri)
        source = server.documents.parsed(state)
        symbols = outline(source)
        if server.client_supports("text_document.document_symbol.hierarchical_document_symbol_support"):
            return [_document_symbol(source.lines, s) for s in symbols]
        return list(_flat_symbols(state.uri, source.lines, symbols, None))

    @server.feature(lsp.WORKSPACE_SYMBOL)
    def workspace_symbols(params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
        from nexa_lsp.ide.outline import workspace_symbols as find

        files: list[tuple[Path, SourceFile]] = []
        unsaved = []
        for state in server.documents:
            if state.path is None:
                unsaved.append(state)
        for path in server.documents.known_files():
            source = server.documents.read(path)
            if source is not None:
                files.append((path, source))
        out = []
        for found in find(params.query, files):
            out.append(
                lsp.SymbolInformation(
                    name=found.name,
                    kind=getattr(lsp.SymbolKind, found.kind.value),
                    container_name=found.container,
                    location=lsp.Location(
                        uri_of_path(found.path), to_range(found.source.lines, found.start, found.end)
                    ),
                )
            )
        for state in unsaved:
            source = server.documents.parsed(state)
            for found in find(params.query, [(Path(state.uri), source)]):
                out.append(
                    lsp.SymbolInformation(
                        name=found.name,
                        kind=getattr(lsp.SymbolKind, found.kind.value),
                        container_name=found.container,
                        location=lsp.Location(state.uri, to_range(source.lines, found.start, found.end)),
                    )
                )
        return out

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        from nexa_lsp.ide.hover import hover as describe

        _state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        found = describe(analysis, at)
        if found is None:
            return None
        return lsp.Hover(
            contents=_markup(server, found.markdown, "text_document.hover.content_format"),
            range=to_range(analysis.source.lines, found.start, found.end),
        )

    @server.feature(
        lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["."], resolve_provider=True)
    )
    def completion(params: lsp.CompletionParams) -> lsp.CompletionList:
        from nexa_lsp.ide.completion import complete

        state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        result = complete(analysis, at)
        rng = to_range(analysis.source.lines, result.replace_start, at)
        snippets = server.client_supports("text_document.completion.completion_item.snippet_support")
        defaults = None
        item_range: lsp.Range | None = rng
        if "editRange" in _client_list(server, "text_document.completion.completion_list.item_defaults"):
            defaults = lsp.CompletionItemDefaults(edit_range=rng)
            item_range = None
        lazy = "documentation" in _client_list(
            server, "text_document.completion.completion_item.resolve_support.properties"
        )
        resolve_data = {"uri": state.uri} if lazy else None
        items = [_completion_item(server, item, item_range, snippets, resolve_data) for item in result.items]
        return lsp.CompletionList(is_incomplete=result.incomplete, items=items, item_defaults=defaults)

    @server.feature(lsp.COMPLETION_ITEM_RESOLVE)
    def completion_resolve(item: lsp.CompletionItem) -> lsp.CompletionItem:
        from nexa_lsp.ide.describe import symbol_summary

        data = item.data if isinstance(item.data, dict) else {}
        state = server.documents.get(str(data.get("uri", "")))
        if state is None or item.documentation is not None:
            return item
        symbol = server.documents.analysis(state).lookup(str(data.get("name", "")))
        if symbol is not None:
            item.documentation = _markup(
                server, symbol_summary(symbol), "text_document.completion.completion_item.documentation_format"
            )
        return item

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(params: lsp.DefinitionParams) -> list[lsp.Location]:
        from nexa_lsp.ide.navigation import definition as find

        state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        return [_location(state, p) for p in find(analysis, at)]

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def references(params: lsp.ReferenceParams) -> list[lsp.Location]:
        from nexa_lsp.ide.navigation import references as find
        from nexa_lsp.ide.navigation import target_at

        state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        target = target_at(analysis, at)
        if target is None:
            return []
        others = _other_analyses(server, state, target.symbol.name) if target.symbol is not None else []
        places = find(analysis, at, others, params.context.include_declaration)
        return [_location(state, p) for p in places]

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    def highlight(params: lsp.DocumentHighlightParams) -> list[lsp.DocumentHighlight]:
        from nexa_lsp.ide.navigation import highlights

        _state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        lines = analysis.source.lines
        return [
            lsp.DocumentHighlight(
                range=to_range(lines, h.start, h.end),
                kind=lsp.DocumentHighlightKind.Write if h.write else lsp.DocumentHighlightKind.Read,
            )
            for h in highlights(analysis, at)
        ]

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(params: lsp.PrepareRenameParams) -> lsp.PrepareRenamePlaceholder | None:
        from nexa_lsp.ide.navigation import RenameError
        from nexa_lsp.ide.navigation import prepare_rename as prepare

        _state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        try:
            start, end, text = prepare(analysis, at)
        except RenameError:
            return None
        return lsp.PrepareRenamePlaceholder(range=to_range(analysis.source.lines, start, end), placeholder=text)

    @server.feature(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True))
    def rename(params: lsp.RenameParams) -> lsp.WorkspaceEdit:
        from nexa_lsp.ide.navigation import RenameError, target_at
        from nexa_lsp.ide.navigation import rename as plan

        state, analysis, at = _cursor(server, params.text_document.uri, params.position)
        target = target_at(analysis, at)
        others = _other_analyses(server, state, target.symbol.name) if target and target.symbol else []
        try:
            edits = plan(analysis, at, params.new_name, others)
        except RenameError as exc:
            raise RequestFailed(str(exc)) from exc
        changes: dict[str, list[lsp.TextEdit]] = {}
        for path, places in edits.items():
            uri = _uri_for(state, path)
            changes.setdefault(uri, []).extend(
                lsp.TextEdit(range=to_range(place.source.lines, place.start, place.end), new_text=text)
                for place, text in places
            )
        return lsp.WorkspaceEdit(changes=changes)

    def _tokens(uri: str) -> tuple[DocumentState, list[int]]:
        from nexa_lsp.ide.tokens import semantic_tokens

        state = document(server, uri)
        analysis = server.documents.analysis(state)
        return state, _encode(analysis.source, semantic_tokens(analysis))

    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    def tokens_full(params: lsp.SemanticTokensParams) -> lsp.SemanticTokens:
        state, data = _tokens(params.text_document.uri)
        result_id = f"{state.version}:{len(data)}:{hash(tuple(data)) & 0xFFFFFFFF}"
        state.tokens = (result_id, data)
        return lsp.SemanticTokens(data=data, result_id=result_id)

    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, LEGEND)
    def tokens_delta(params: lsp.SemanticTokensDeltaParams) -> lsp.SemanticTokens | lsp.SemanticTokensDelta:
        previous = document(server, params.text_document.uri).tokens
        state, data = _tokens(params.text_document.uri)
        result_id = f"{state.version}:{len(data)}:{hash(tuple(data)) & 0xFFFFFFFF}"
        state.tokens = (result_id, data)
        if previous is None or previous[0] != params.previous_result_id:
            return lsp.SemanticTokens(data=data, result_id=result_id)
        return lsp.SemanticTokensDelta(edits=_token_edits(previous[1], data), result_id=result_id)

    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)
    def tokens_range(params: lsp.SemanticTokensRangeParams) -> lsp.SemanticTokens:
        from nexa_lsp.ide.tokens import semantic_tokens

        state = document(server, params.text_document.uri)
        analysis = server.documents.analysis(state)
        start, end = offsets(analysis.source.lines, params.range)
        return lsp.SemanticTokens(data=_encode(analysis.source, semantic_tokens(analysis, start, end)))

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
    def formatting(params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
        """Whitespace-only formatting (``syntax/formatting.py``): one edit, or none when formatted."""
        from nexa_lsp.syntax.formatting import FormatOptions, format_source

        state = document(server, params.text_document.uri)
        source = server.documents.parsed(state)
        indent = " " * params.options.tab_size if params.options.insert_spaces else "\t"
        formatted = format_source(source.text, FormatOptions(indent=indent or "    "))
        if formatted == source.text:
            return []
        return [lsp.TextEdit(range=to_range(source.lines, 0, len(source.text)), new_text=formatted)]

    @server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
    def folding(params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
        from nexa_lsp.ide.structure import folding_ranges

        state = document(server, params.text_document.uri)
        source = server.documents.parsed(state)
        kinds = {"comment": lsp.FoldingRangeKind.Comment, "imports": lsp.FoldingRangeKind.Imports}
        folds = folding_ranges(source)
        caps = server.client_capabilities.text_document
        limit = caps.folding_range.range_limit if caps is not None and caps.folding_range is not None else None
        if limit:
            folds = folds[:limit]
        return [
            lsp.FoldingRange(start_line=f.start_line, end_line=f.end_line, kind=kinds.get(f.kind) if f.kind else None)
            for f in folds
        ]

    @server.feature(lsp.TEXT_DOCUMENT_SELECTION_RANGE)
    def selection(params: lsp.SelectionRangeParams) -> list[lsp.SelectionRange]:
        from nexa_lsp.ide.structure import selection_ranges

        state = document(server, params.text_document.uri)
        source = server.documents.parsed(state)
        out = []
        for pos in params.positions:
            parent: lsp.SelectionRange | None = None
            for start, end in reversed(selection_ranges(source, offset(source.lines, pos))):
                parent = lsp.SelectionRange(range=to_range(source.lines, start, end), parent=parent)
            assert parent is not None
            out.append(parent)
        return out

    server.code_action_kinds.extend([lsp.CodeActionKind.QuickFix, FIX_ALL_KIND, MIGRATE_KIND])

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=server.code_action_kinds))
    def code_actions(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        from nexa_lsp.ide.actions import code_actions as find

        state = document(server, params.text_document.uri)
        checked = check(server, state)
        source = server.documents.parsed(state)
        start, end = offsets(source.lines, params.range)
        by_key = {(str(d.code), d.range.start.line, d.range.start.character): d for d in checked.lsp}
        actions = find(source, checked.diagnostics, start, end, params.context.only, lambda: _migration(server, state))
        out = [_code_action(server, state, source, a, by_key) for a in actions]
        for provider in server.code_action_providers:
            try:
                out.extend(provider(params))
            except Exception as exc:  # the other actions are still worth offering
                server.log(
                    f"code actions of {getattr(provider, '__qualname__', provider)} failed: "
                    f"{type(exc).__name__}: {exc}",
                    lsp.MessageType.Error,
                )
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
        edit = _workspace_edit(server, state, source, plan.edits)
        result = await server.workspace_apply_edit_async(
            lsp.ApplyWorkspaceEditParams(edit=edit, label="Migrate this file to Nexa 3.0")
        )
        if not result.applied:
            raise RequestFailed(f"the editor did not apply the migration: {result.failure_reason or 'refused'}")
        return {"applied": True, "remaining": []}
