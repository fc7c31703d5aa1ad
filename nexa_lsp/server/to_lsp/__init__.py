"""Every lsprotocol object the server sends is built here, from the plain data of the lower layers.

Positions go out as UTF-16 through :class:`nexa_lsp.text.LineIndex`; enum kinds of
the ide layer are mapped exhaustively (a new kind fails type checking until it is
mapped here), each importing its enum when first used so that this module loads
without the syntax, analysis and ide layers (start-up). Sections follow the areas
of the server: positions, messages, capabilities, diagnostics, symbols, hover and
completion, navigation, semantic tokens, structure, edits and actions, and the
``nexa/*`` requests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, assert_never

from lsprotocol import types as lsp

from nexa_lsp.ide.legend import TOKEN_MODIFIERS, TOKEN_TYPES
from nexa_lsp.server.from_lsp import MARKDOWN, PLAINTEXT, ClientFacts
from nexa_lsp.server.plain_text import markdown_to_plain
from nexa_lsp.text import LineIndex, Position

if TYPE_CHECKING:
    from nexa_lsp.analysis.migration.workspace import FileStatus, WorkspaceStatus
    from nexa_lsp.analysis.migration.workspace import Position as StatusPosition
    from nexa_lsp.ide.actions import ActionData, Edit
    from nexa_lsp.ide.completion import CompletionData, ItemKind
    from nexa_lsp.ide.hover import HoverData
    from nexa_lsp.ide.navigation import Highlight
    from nexa_lsp.ide.outline import OutlineKind, OutlineSymbol, WorkspaceSymbolData
    from nexa_lsp.ide.structure import Fold
    from nexa_lsp.ide.token_edits import TokenEdit
    from nexa_lsp.ide.tokens import Token
    from nexa_lsp.server.document_info import DocumentInfo
    from nexa_lsp.syntax.diagnostics import Diagnostic, Severity

# ---------------------------------------------------------------------- positions


class Utf16Positions(Protocol):
    """What converts code-point offsets to LSP positions (a :class:`LineIndex`, or one chunk's)."""

    def utf16_position(self, offset: int) -> Position: ...


def position(lines: Utf16Positions, offset: int) -> lsp.Position:
    pos = lines.utf16_position(offset)
    return lsp.Position(line=pos.line, character=pos.character)


def to_range(lines: Utf16Positions, start: int, end: int) -> lsp.Range:
    """The LSP range of the code-point offsets ``[start, end)`` (an inverted span is empty)."""
    return lsp.Range(start=position(lines, start), end=position(lines, max(start, end)))


def location(uri: str, lines: Utf16Positions, start: int, end: int) -> lsp.Location:
    return lsp.Location(uri=uri, range=to_range(lines, start, end))


# ---------------------------------------------------------------------- messages to the client


def log_message(level: lsp.MessageType, text: str) -> lsp.LogMessageParams:
    return lsp.LogMessageParams(type=level, message=text)


def show_message(level: lsp.MessageType, text: str) -> lsp.ShowMessageParams:
    return lsp.ShowMessageParams(type=level, message=text)


def publish_diagnostics(
    uri: str, items: list[lsp.Diagnostic], version: int | None = None
) -> lsp.PublishDiagnosticsParams:
    return lsp.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version)


def configuration_request(section: str, scope_uris: Sequence[str]) -> lsp.ConfigurationParams:
    """Ask for ``section`` globally, then once per scope (workspace folder)."""
    items = [lsp.ConfigurationItem(section=section)]
    items += [lsp.ConfigurationItem(scope_uri=scope, section=section) for scope in scope_uris]
    return lsp.ConfigurationParams(items=items)


def apply_edit_request(edit: lsp.WorkspaceEdit, label: str) -> lsp.ApplyWorkspaceEditParams:
    return lsp.ApplyWorkspaceEditParams(edit=edit, label=label)


# ---------------------------------------------------------------------- capabilities (registration options)

SEMANTIC_TOKENS_LEGEND = lsp.SemanticTokensLegend(token_types=list(TOKEN_TYPES), token_modifiers=list(TOKEN_MODIFIERS))
COMPLETION_OPTIONS = lsp.CompletionOptions(trigger_characters=["."], resolve_provider=True)
RENAME_OPTIONS = lsp.RenameOptions(prepare_provider=True)


def code_action_options(kinds: list[str]) -> lsp.CodeActionOptions:
    """Options naming ``kinds`` (the list object itself: kinds added later still show)."""
    return lsp.CodeActionOptions(code_action_kinds=kinds)


def diagnostic_options(identifier: str) -> lsp.DiagnosticOptions:
    return lsp.DiagnosticOptions(identifier=identifier, inter_file_dependencies=True, workspace_diagnostics=True)


# ---------------------------------------------------------------------- diagnostics


def severity(value: Severity) -> lsp.DiagnosticSeverity:
    from nexa_lsp.syntax.diagnostics import Severity  # lazy: start-up (the syntax layer)

    match value:
        case Severity.ERROR:
            return lsp.DiagnosticSeverity.Error
        case Severity.WARNING:
            return lsp.DiagnosticSeverity.Warning
        case Severity.INFORMATION:
            return lsp.DiagnosticSeverity.Information
        case Severity.HINT:
            return lsp.DiagnosticSeverity.Hint
        case _:
            assert_never(value)


def diagnostic(d: Diagnostic, uri: str, lines: Utf16Positions, client: ClientFacts) -> lsp.Diagnostic:
    """One finding; related locations, tags and fix data as far as the client takes them."""
    related = None
    if d.related and client.related_information:
        related = [
            lsp.DiagnosticRelatedInformation(location(uri, lines, r.span.start, r.span.end), r.message)
            for r in d.related
        ]
    data: dict[str, object] = dict(d.data)
    if d.fixes:
        data["fixes"] = [{"title": f.title, "safe": f.safe} for f in d.fixes]
    return lsp.Diagnostic(
        range=to_range(lines, d.span.start, d.span.end),
        message=d.message,
        severity=severity(d.severity),
        code=d.code,
        source="nexa",
        tags=[lsp.DiagnosticTag.Unnecessary] if d.unnecessary and client.unnecessary_tag else None,
        related_information=related,
        data=data or None,
    )


def document_report(
    items: list[lsp.Diagnostic], result_id: str, previous_result_id: str | None
) -> lsp.DocumentDiagnosticReport:
    if previous_result_id == result_id:
        return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return lsp.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)


def workspace_file_report(
    uri: str, version: int | None, items: list[lsp.Diagnostic], result_id: str, previous_result_id: str | None
) -> lsp.WorkspaceDocumentDiagnosticReport:
    if previous_result_id == result_id:
        return lsp.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, version=version, result_id=result_id)
    return lsp.WorkspaceFullDocumentDiagnosticReport(uri=uri, version=version, items=items, result_id=result_id)


def workspace_report(items: list[lsp.WorkspaceDocumentDiagnosticReport]) -> lsp.WorkspaceDiagnosticReport:
    return lsp.WorkspaceDiagnosticReport(items=items)


# ---------------------------------------------------------------------- symbols


def symbol_kind(kind: OutlineKind) -> lsp.SymbolKind:
    from nexa_lsp.ide.outline import OutlineKind  # lazy: start-up (the ide layer)

    match kind:
        case OutlineKind.FILE:
            return lsp.SymbolKind.File
        case OutlineKind.MODULE:
            return lsp.SymbolKind.Module
        case OutlineKind.NAMESPACE:
            return lsp.SymbolKind.Namespace
        case OutlineKind.PACKAGE:
            return lsp.SymbolKind.Package
        case OutlineKind.CLASS:
            return lsp.SymbolKind.Class
        case OutlineKind.METHOD:
            return lsp.SymbolKind.Method
        case OutlineKind.PROPERTY:
            return lsp.SymbolKind.Property
        case OutlineKind.FIELD:
            return lsp.SymbolKind.Field
        case OutlineKind.FUNCTION:
            return lsp.SymbolKind.Function
        case OutlineKind.INTERFACE:
            return lsp.SymbolKind.Interface
        case OutlineKind.VARIABLE:
            return lsp.SymbolKind.Variable
        case OutlineKind.ENUM:
            return lsp.SymbolKind.Enum
        case OutlineKind.ENUM_MEMBER:
            return lsp.SymbolKind.EnumMember
        case OutlineKind.STRUCT:
            return lsp.SymbolKind.Struct
        case OutlineKind.EVENT:
            return lsp.SymbolKind.Event
        case OutlineKind.OBJECT:
            return lsp.SymbolKind.Object
        case OutlineKind.KEY:
            return lsp.SymbolKind.Key
        case OutlineKind.TYPE_PARAMETER:
            return lsp.SymbolKind.TypeParameter
        case OutlineKind.CONSTANT:
            return lsp.SymbolKind.Constant
        case _:
            assert_never(kind)


def document_symbol(lines: LineIndex, sym: OutlineSymbol) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(
        name=sym.name,
        kind=symbol_kind(sym.kind),
        detail=sym.detail or None,
        range=to_range(lines, sym.start, sym.end),
        selection_range=to_range(lines, sym.selection_start, sym.selection_end),
        children=[document_symbol(lines, c) for c in sym.children] or None,
    )


def document_symbols(
    uri: str, lines: LineIndex, symbols: list[OutlineSymbol], client: ClientFacts
) -> list[lsp.DocumentSymbol] | list[lsp.SymbolInformation]:
    """The outline: a tree when the client takes one, else flat with container names."""
    if client.hierarchical_symbols:
        return [document_symbol(lines, s) for s in symbols]
    return list(_flat_symbols(uri, lines, symbols, None))


def _flat_symbols(
    uri: str, lines: LineIndex, symbols: Iterable[OutlineSymbol], container: str | None
) -> Iterator[lsp.SymbolInformation]:
    for sym in symbols:
        yield lsp.SymbolInformation(
            name=sym.name,
            kind=symbol_kind(sym.kind),
            location=location(uri, lines, sym.start, sym.end),
            container_name=container,
        )
        yield from _flat_symbols(uri, lines, sym.children, sym.name)


def workspace_symbol(uri: str, found: WorkspaceSymbolData) -> lsp.SymbolInformation:
    return lsp.SymbolInformation(
        name=found.name,
        kind=symbol_kind(found.kind),
        container_name=found.container,
        location=location(uri, found.source.lines, found.start, found.end),
    )


# ---------------------------------------------------------------------- hover and completion


def markup(markdown: str, formats: Sequence[str]) -> lsp.MarkupContent | None:
    """The ide layer's Markdown in the first format the client lists that the server can write:
    Markdown as it is, or rendered as plain text (no fences, quote markers, ``**`` or backticks);
    None when the client lists none."""
    for kind in formats:
        if kind == MARKDOWN:
            return lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown)
        if kind == PLAINTEXT:
            return lsp.MarkupContent(kind=lsp.MarkupKind.PlainText, value=markdown_to_plain(markdown))
    return None


def hover(lines: LineIndex, found: HoverData, client: ClientFacts) -> lsp.Hover:
    # without a declared format, a string is a MarkedString: Markdown
    contents = markup(found.markdown, client.hover_formats) or found.markdown
    return lsp.Hover(contents=contents, range=to_range(lines, found.start, found.end))


def completion_item_kind(kind: ItemKind) -> lsp.CompletionItemKind:
    from nexa_lsp.ide.completion import ItemKind  # lazy: start-up (the ide layer)

    match kind:
        case ItemKind.KEYWORD:
            return lsp.CompletionItemKind.Keyword
        case ItemKind.SNIPPET:
            return lsp.CompletionItemKind.Snippet
        case ItemKind.PROPERTY:
            return lsp.CompletionItemKind.Property
        case ItemKind.FIELD:
            return lsp.CompletionItemKind.Field
        case ItemKind.METHOD:
            return lsp.CompletionItemKind.Method
        case ItemKind.FUNCTION:
            return lsp.CompletionItemKind.Function
        case ItemKind.CLASS:
            return lsp.CompletionItemKind.Class
        case ItemKind.INTERFACE:
            return lsp.CompletionItemKind.Interface
        case ItemKind.VARIABLE:
            return lsp.CompletionItemKind.Variable
        case ItemKind.VALUE:
            return lsp.CompletionItemKind.Value
        case ItemKind.MODULE:
            return lsp.CompletionItemKind.Module
        case ItemKind.STRUCT:
            return lsp.CompletionItemKind.Struct
        case ItemKind.ENUM:
            return lsp.CompletionItemKind.Enum
        case ItemKind.TYPE:
            return lsp.CompletionItemKind.TypeParameter
        case _:
            assert_never(kind)


def completion_list(
    lines: LineIndex,
    items: Iterable[tuple[CompletionData, str]],
    replace_start: int,
    cursor: int,
    incomplete: bool,
    client: ClientFacts,
    resolve_data: dict[str, str] | None,
) -> lsp.CompletionList:
    """Items with their Markdown documentation ("" when left to ``completionItem/resolve``, which
    happens when ``resolve_data`` is given); one shared edit range when the client takes defaults."""
    rng = to_range(lines, replace_start, cursor)
    shared = client.completion_edit_range_default
    out = [_completion_item(item, docs, None if shared else rng, client, resolve_data) for item, docs in items]
    defaults = lsp.CompletionItemDefaults(edit_range=rng) if shared else None
    return lsp.CompletionList(is_incomplete=incomplete, items=out, item_defaults=defaults)


def _completion_item(
    item: CompletionData,
    docs: str,
    rng: lsp.Range | None,
    client: ClientFacts,
    resolve_data: dict[str, str] | None,
) -> lsp.CompletionItem:
    use_snippet = client.snippets and item.snippet is not None
    text = item.snippet if use_snippet else (item.insert_text or item.label)
    assert text is not None
    lazy = item.symbol is not None and resolve_data is not None
    return lsp.CompletionItem(
        label=item.label,
        kind=completion_item_kind(item.kind),
        detail=item.detail or None,
        documentation=completion_documentation(docs, client) if docs and not lazy else None,
        sort_text=f"{item.group}{item.label}",
        text_edit=lsp.TextEdit(range=rng, new_text=text) if rng is not None else None,
        text_edit_text=text if rng is None and text != item.label else None,
        insert_text_format=lsp.InsertTextFormat.Snippet if use_snippet else lsp.InsertTextFormat.PlainText,
        data={**resolve_data, "name": item.label} if lazy and resolve_data is not None else None,
    )


def completion_documentation(markdown: str, client: ClientFacts) -> lsp.MarkupContent | str:
    # without a declared format, a documentation string is plain text
    return markup(markdown, client.completion_documentation_formats) or markdown_to_plain(markdown)


# ---------------------------------------------------------------------- navigation


def highlight(lines: LineIndex, found: Highlight) -> lsp.DocumentHighlight:
    kind = lsp.DocumentHighlightKind.Write if found.write else lsp.DocumentHighlightKind.Read
    return lsp.DocumentHighlight(range=to_range(lines, found.start, found.end), kind=kind)


def rename_placeholder(lines: LineIndex, start: int, end: int, text: str) -> lsp.PrepareRenamePlaceholder:
    return lsp.PrepareRenamePlaceholder(range=to_range(lines, start, end), placeholder=text)


def rename_edit(changes: Iterable[tuple[str, LineIndex, int, int, str]]) -> lsp.WorkspaceEdit:
    """``(uri, lines, start, end, new_text)`` edits, grouped per document."""
    by_uri: dict[str, list[lsp.TextEdit]] = {}
    for uri, lines, start, end, new_text in changes:
        by_uri.setdefault(uri, []).append(lsp.TextEdit(range=to_range(lines, start, end), new_text=new_text))
    return lsp.WorkspaceEdit(changes=by_uri)


# ---------------------------------------------------------------------- semantic tokens


def encode_tokens(lines: LineIndex, tokens: Iterable[Token]) -> list[int]:
    """The LSP relative encoding (tokens that would span lines are left out)."""
    data: list[int] = []
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


def semantic_tokens(data: list[int], result_id: str | None = None) -> lsp.SemanticTokens:
    return lsp.SemanticTokens(data=data, result_id=result_id)


def semantic_tokens_delta(old: list[int], new: list[int], result_id: str) -> lsp.SemanticTokensDelta:
    """One edit replacing what lies between the common prefix and suffix (none when equal)."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    edits = []
    if not prefix == len(old) == len(new):
        edits.append(
            lsp.SemanticTokensEdit(
                start=prefix, delete_count=len(old) - prefix - suffix, data=new[prefix : len(new) - suffix]
            )
        )
    return lsp.SemanticTokensDelta(edits=edits, result_id=result_id)


def semantic_token_edits(edits: Iterable[TokenEdit], result_id: str) -> lsp.SemanticTokensDelta:
    """A delta from :func:`nexa_lsp.ide.token_edits.token_edits` (positions in the old array)."""
    return lsp.SemanticTokensDelta(
        edits=[lsp.SemanticTokensEdit(start=e.start, delete_count=e.delete_count, data=e.data) for e in edits],
        result_id=result_id,
    )


# ---------------------------------------------------------------------- structure


def folding_range(fold: Fold) -> lsp.FoldingRange:
    kind = None
    if fold.kind == "comment":
        kind = lsp.FoldingRangeKind.Comment
    elif fold.kind == "imports":
        kind = lsp.FoldingRangeKind.Imports
    return lsp.FoldingRange(start_line=fold.start_line, end_line=fold.end_line, kind=kind)


def selection_range(lines: LineIndex, spans: Sequence[tuple[int, int]]) -> lsp.SelectionRange:
    """The chain of ranges, innermost first in ``spans``, as nested parents."""
    parent: lsp.SelectionRange | None = None
    for start, end in reversed(spans):
        parent = lsp.SelectionRange(range=to_range(lines, start, end), parent=parent)
    assert parent is not None, "selection_ranges always includes the whole document"
    return parent


# ---------------------------------------------------------------------- edits and actions


def text_edits(lines: LineIndex, edits: Iterable[Edit]) -> list[lsp.TextEdit]:
    return [lsp.TextEdit(range=to_range(lines, e.start, e.end), new_text=e.new_text) for e in edits]


def replace_all(lines: LineIndex, old_text: str, new_text: str) -> list[lsp.TextEdit]:
    """One edit replacing the whole document (none when the text is unchanged)."""
    if new_text == old_text:
        return []
    return [lsp.TextEdit(range=to_range(lines, 0, len(old_text)), new_text=new_text)]


def workspace_edit(
    uri: str, version: int | None, lines: LineIndex, edits: Iterable[Edit], client: ClientFacts
) -> lsp.WorkspaceEdit:
    """Edits of one document; versioned when the client can refuse an edit of a changed document."""
    changes = text_edits(lines, edits)
    if client.versioned_edits:
        identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=identifier, edits=list(changes))])
    return lsp.WorkspaceEdit(changes={uri: changes})


def code_action(
    uri: str,
    version: int | None,
    lines: LineIndex,
    action: ActionData,
    by_key: dict[tuple[str, int, int], lsp.Diagnostic],
    client: ClientFacts,
) -> lsp.CodeAction:
    """An edit action, attached to the client's copies of the diagnostics it fixes."""
    attached = []
    for d in action.diagnostics:
        start = position(lines, d.span.start)
        found = by_key.get((d.code, start.line, start.character))
        if found is not None:
            attached.append(found)
    return lsp.CodeAction(
        title=action.title,
        kind=action.kind,
        diagnostics=attached or None,
        is_preferred=action.preferred or None,
        edit=workspace_edit(uri, version, lines, action.edits, client),
    )


def diagnostic_key(d: lsp.Diagnostic) -> tuple[str, int, int]:
    """What ties a diagnostic to a fix: its code and start."""
    return (str(d.code), d.range.start.line, d.range.start.character)


# ---------------------------------------------------------------------- nexa/documentInfo


def document_info(uri: str, lines: LineIndex, info: DocumentInfo) -> dict[str, Any]:
    """The ``nexa/documentInfo`` answer (camelCase JSON, UTF-16 ranges; see protocol in docs/editors.md)."""
    declaration = None
    if info.declaration is not None:
        decl = info.declaration
        declaration = {
            "text": decl.version,
            "range": to_range(lines, decl.start, decl.end),
            "supported": decl.problem is None,
        }
    agents = [
        {
            "name": a.name,
            "range": to_range(lines, a.start, a.end),
            "selectionRange": to_range(lines, a.name_start, a.name_end),
            "taskLiterals": {"execute": list(a.execute), "continue": list(a.continue_)},
        }
        for a in info.agents
    ]
    blockers = [
        {"code": d.code, "range": to_range(lines, d.span.start, d.span.end), "message": d.message}
        for d in info.blockers
    ]
    return {
        "uri": uri,
        "path": str(info.path) if info.path is not None else None,
        "languagePath": info.language_path,
        "versionDeclaration": declaration,
        "agents": agents,
        "migration": {"state": info.migration_state, "blockers": blockers},
    }


# ---------------------------------------------------------------------- nexa/migrationStatus, nexa.migrateWorkspace

MIGRATION_ANNOTATION_LABEL = "Migrate to Nexa 3.0"


def migration_status(status: WorkspaceStatus, uri_of: Callable[[Path], str]) -> dict[str, Any]:
    """The ``nexa/migrationStatus`` answer: the workspace status's JSON form (as
    ``nexa-lsp check --migrate --dry-run --format json`` prints it) with each file's URI."""
    out = status.as_json()
    for entry, file in zip(out["files"], status.files, strict=True):
        entry["uri"] = uri_of(file.path)
    return out


def migration_workspace_edit(
    files: Sequence[tuple[str, int | None, FileStatus]], client: ClientFacts, annotations: bool
) -> lsp.WorkspaceEdit:
    """One edit migrating every ``(uri, version, ready file)``. With ``annotations`` (the
    client supports change annotations and document changes) each file's edits carry an
    annotation that needs confirmation, so the editor previews the refactoring first."""
    if not (client.versioned_edits and annotations):
        return lsp.WorkspaceEdit(
            changes={
                uri: [lsp.TextEdit(range=_status_range(e.start, e.end), new_text=e.new_text) for e in f.edits]
                for uri, _version, f in files
            }
        )
    changes: list[lsp.TextDocumentEdit | lsp.CreateFile | lsp.RenameFile | lsp.DeleteFile] = []
    notes: dict[str, lsp.ChangeAnnotation] = {}
    for index, (uri, version, f) in enumerate(files):
        key = f"nexa.migrate.{index}"
        rewrites = f"{f.rewrites} rewrite{'s' if f.rewrites != 1 else ''} and the version declaration"
        notes[key] = lsp.ChangeAnnotation(
            label=MIGRATION_ANNOTATION_LABEL, needs_confirmation=True, description=f"{f.path.name}: {rewrites}"
        )
        edits: list[lsp.TextEdit | lsp.AnnotatedTextEdit | lsp.SnippetTextEdit] = [
            lsp.AnnotatedTextEdit(range=_status_range(e.start, e.end), new_text=e.new_text, annotation_id=key)
            for e in f.edits
        ]
        identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        changes.append(lsp.TextDocumentEdit(text_document=identifier, edits=edits))
    return lsp.WorkspaceEdit(document_changes=changes, change_annotations=notes)


def _status_range(start: StatusPosition, end: StatusPosition) -> lsp.Range:
    """A range of the workspace status (zero-based lines, UTF-16 characters already)."""
    return lsp.Range(
        start=lsp.Position(line=start.line, character=start.character),
        end=lsp.Position(line=end.line, character=end.character),
    )
