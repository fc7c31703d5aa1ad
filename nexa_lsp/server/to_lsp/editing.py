"""Protocol objects of the editing features: signature help, inlay hints, document links,
the call hierarchy and range formatting (built from the plain data of ``nexa_lsp.ide``).

Documentation goes out in the first format the client lists for it (Markdown as it is,
plain text rendered without markup); positions and parameter label offsets are UTF-16.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, assert_never

from lsprotocol import types as lsp

from nexa_lsp.server.from_lsp import ClientFacts
from nexa_lsp.server.plain_text import markdown_to_plain
from nexa_lsp.server.to_lsp import markup, position, to_range
from nexa_lsp.text import LineIndex, utf16_length

if TYPE_CHECKING:
    from nexa_lsp.analysis.names import DeclKind
    from nexa_lsp.ide.calls import CallItem
    from nexa_lsp.ide.hints import HintData
    from nexa_lsp.ide.links import LinkData
    from nexa_lsp.ide.signatures import ParameterInfo, SignatureHelpData
    from nexa_lsp.syntax.formatting import RangeEdit

# ---------------------------------------------------------------------- registration options

SIGNATURE_HELP_OPTIONS = lsp.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[","])
INLAY_HINT_OPTIONS = lsp.InlayHintOptions(resolve_provider=True)
DOCUMENT_LINK_OPTIONS = lsp.DocumentLinkOptions(resolve_provider=False)


def documentation(markdown: str, formats: Sequence[str]) -> lsp.MarkupContent | str | None:
    """Markdown in the client's format; a plain string when it lists none (None for no text)."""
    if not markdown:
        return None
    return markup(markdown, formats) or markdown_to_plain(markdown)


# ---------------------------------------------------------------------- signature help


def _parameter(label: str, param: ParameterInfo, client: ClientFacts) -> lsp.ParameterInformation:
    offsets: str | tuple[int, int] = param.label
    if client.signature_label_offsets:
        start = utf16_length(label[: param.start])
        offsets = (start, start + utf16_length(label[param.start : param.end]))
    docs = documentation(param.documentation, client.signature_documentation_formats)
    return lsp.ParameterInformation(label=offsets, documentation=docs)


def signature_help(found: SignatureHelpData, client: ClientFacts) -> lsp.SignatureHelp:
    signatures = [
        lsp.SignatureInformation(
            label=sig.label,
            documentation=documentation(sig.documentation, client.signature_documentation_formats),
            parameters=[_parameter(sig.label, p, client) for p in sig.parameters],
            active_parameter=sig.active_parameter,
        )
        for sig in found.signatures
    ]
    active = found.signatures[found.active_signature].active_parameter if found.signatures else None
    return lsp.SignatureHelp(signatures=signatures, active_signature=found.active_signature, active_parameter=active)


# ---------------------------------------------------------------------- inlay hints


def hint_tooltip(markdown: str, client: ClientFacts) -> lsp.MarkupContent | str | None:
    """A tooltip in the format the client reads hovers in (inlay hints declare none of their own)."""
    return documentation(markdown, client.hover_formats)


def inlay_hint(
    lines: LineIndex, hint: HintData, data: dict[str, Any], tooltip: str | None, client: ClientFacts
) -> lsp.InlayHint:
    """A hint; with ``tooltip`` Markdown when it is sent now, else ``data`` to resolve it later."""
    return lsp.InlayHint(
        position=position(lines, hint.offset),
        label=f": {hint.label}" if hint.kind == "agent" else hint.label,
        kind=lsp.InlayHintKind.Type if hint.kind == "agent" else None,
        padding_left=hint.kind != "agent",
        tooltip=None if tooltip is None else hint_tooltip(tooltip, client),
        data=None if tooltip is not None else data,
    )


# ---------------------------------------------------------------------- document links


def document_link(lines: LineIndex, link: LinkData, target_uri: str, client: ClientFacts) -> lsp.DocumentLink:
    tooltip = link.tooltip if client.link_tooltips else None
    return lsp.DocumentLink(range=to_range(lines, link.start, link.end), target=target_uri, tooltip=tooltip)


# ---------------------------------------------------------------------- call hierarchy


def call_symbol_kind(kind: DeclKind) -> lsp.SymbolKind:
    from nexa_lsp.analysis.names import DeclKind  # lazy: start-up (the analysis layer)

    match kind:
        case DeclKind.AGENT:
            return lsp.SymbolKind.Class
        case DeclKind.TOOL:
            return lsp.SymbolKind.Function
        case DeclKind.FLOW:
            return lsp.SymbolKind.Method
        case (
            DeclKind.PROTOCOL
            | DeclKind.TYPE
            | DeclKind.STRUCT
            | DeclKind.ENUM
            | DeclKind.TRAIT
            | DeclKind.JOB
            | DeclKind.RESOURCE
        ):
            return lsp.SymbolKind.Object  # not in the hierarchy (ide.calls.CALLABLE)
        case _:
            assert_never(kind)


def call_item(uri: str, item: CallItem, data: dict[str, Any]) -> lsp.CallHierarchyItem:
    lines = item.source.lines
    return lsp.CallHierarchyItem(
        name=item.name,
        kind=call_symbol_kind(item.kind),
        uri=uri,
        range=to_range(lines, item.start, item.end),
        selection_range=to_range(lines, item.selection_start, item.selection_end),
        detail=item.detail or None,
        data=data,
    )


def incoming_call(
    item: lsp.CallHierarchyItem, lines: LineIndex, ranges: list[tuple[int, int]]
) -> lsp.CallHierarchyIncomingCall:
    return lsp.CallHierarchyIncomingCall(from_=item, from_ranges=[to_range(lines, s, e) for s, e in ranges])


def outgoing_call(
    item: lsp.CallHierarchyItem, lines: LineIndex, ranges: list[tuple[int, int]]
) -> lsp.CallHierarchyOutgoingCall:
    return lsp.CallHierarchyOutgoingCall(to=item, from_ranges=[to_range(lines, s, e) for s, e in ranges])


# ---------------------------------------------------------------------- range formatting


def range_edit(lines: LineIndex, edit: RangeEdit | None) -> list[lsp.TextEdit]:
    """The edit of :func:`nexa_lsp.syntax.formatting.format_range` (none when formatted)."""
    if edit is None:
        return []
    return [lsp.TextEdit(range=to_range(lines, edit.start, edit.end), new_text=edit.new_text)]
