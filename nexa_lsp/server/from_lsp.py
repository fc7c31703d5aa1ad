"""What the client sends, read into plain values: positions to offsets, capabilities to facts.

Positions arrive as UTF-16 (the only encoding the server negotiates) and become
code-point offsets through :class:`nexa_lsp.text.LineIndex`; the client's
capabilities are read once, at ``initialize``, into :class:`ClientFacts`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from nexa_lsp.text import ContentChange, LineIndex

# ---------------------------------------------------------------------- positions


def offset(lines: LineIndex, pos: lsp.Position) -> int:
    """The code-point offset of an LSP position (clamped to the text)."""
    return lines.offset_of_utf16(pos.line, pos.character)


def offsets(lines: LineIndex, rng: lsp.Range) -> tuple[int, int]:
    """The code-point offsets of an LSP range."""
    return offset(lines, rng.start), offset(lines, rng.end)


def content_changes(changes: Any) -> list[ContentChange]:
    """The content changes of a ``didChange``, in order (a change without a range replaces the text)."""
    out = []
    for change in changes:
        rng = getattr(change, "range", None)
        if rng is None:
            out.append(ContentChange(change.text))
        else:
            start, end = rng.start, rng.end
            out.append(ContentChange(change.text, ((start.line, start.character), (end.line, end.character))))
    return out


def _member(value: Any, name: str) -> Any:
    """A member of a JSON object lsprotocol has no type for (pygls hands those over as named
    tuples; a dict is read the same way)."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None) if isinstance(value, tuple) else None


def text_document_uri(params: Any, method: str) -> str:
    """``params.textDocument.uri`` of a request lsprotocol has no type for."""
    uri = _member(_member(params, "textDocument"), "uri")
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams(message=f'{method} takes {{"textDocument": {{"uri": "..."}}}}')
    return uri


# ---------------------------------------------------------------------- client capabilities

MARKDOWN = "markdown"
PLAINTEXT = "plaintext"


@dataclass(frozen=True, slots=True)
class ClientFacts:
    """What the client declared it can do (``initialize``), as plain values."""

    pulls_diagnostics: bool = False
    diagnostic_refresh: bool = False
    configuration: bool = False
    related_information: bool = False
    unnecessary_tag: bool = False
    hierarchical_symbols: bool = False
    snippets: bool = False
    completion_edit_range_default: bool = False
    lazy_completion_documentation: bool = False
    hover_formats: tuple[str, ...] = ()
    completion_documentation_formats: tuple[str, ...] = ()
    versioned_edits: bool = False
    folding_range_limit: int | None = None
    #: ``experimental.nexa.runPrompts``: the client asks the user for a run's task or input
    #: itself (a lens may leave them out) and shows message requests without blocking.
    run_prompts: bool = False
    #: ``experimental.nexa.providerSecrets``: the client answers ``nexa/providerSecret`` with
    #: a key from its secret storage (the VS Code extension).
    provider_secrets: bool = False
    signature_documentation_formats: tuple[str, ...] = ()
    signature_label_offsets: bool = False
    inlay_hint_resolves_tooltip: bool = False
    link_tooltips: bool = False


def _at(value: Any, *names: str) -> Any:
    """``value.a.b.c`` for ``names`` a, b, c; None as soon as one part is missing."""
    for name in names:
        value = getattr(value, name, None)
        if value is None:
            return None
    return value


def _strings(value: Any) -> tuple[str, ...]:
    """A list of strings or string enums (``MarkupKind``) as plain strings."""
    return tuple(v.value if isinstance(v, enum.Enum) else str(v) for v in value) if value else ()


def client_facts(caps: lsp.ClientCapabilities | None) -> ClientFacts:
    """Read the capabilities the server acts on."""
    doc = _at(caps, "text_document")
    item = _at(doc, "completion", "completion_item")
    tags = _at(doc, "publish_diagnostics", "tag_support", "value_set") or ()
    return ClientFacts(
        pulls_diagnostics=_at(doc, "diagnostic") is not None,
        diagnostic_refresh=bool(_at(caps, "workspace", "diagnostics", "refresh_support")),
        configuration=bool(_at(caps, "workspace", "configuration")),
        related_information=bool(_at(doc, "publish_diagnostics", "related_information")),
        unnecessary_tag=lsp.DiagnosticTag.Unnecessary in tags,
        hierarchical_symbols=bool(_at(doc, "document_symbol", "hierarchical_document_symbol_support")),
        snippets=bool(_at(item, "snippet_support")),
        completion_edit_range_default="editRange"
        in _strings(_at(doc, "completion", "completion_list", "item_defaults")),
        lazy_completion_documentation="documentation" in _strings(_at(item, "resolve_support", "properties")),
        hover_formats=_strings(_at(doc, "hover", "content_format")),
        completion_documentation_formats=_strings(_at(item, "documentation_format")),
        versioned_edits=bool(_at(caps, "workspace", "workspace_edit", "document_changes")),
        folding_range_limit=_at(doc, "folding_range", "range_limit") or None,
        run_prompts=_nexa_flag(_at(caps, "experimental"), "runPrompts"),
        provider_secrets=_nexa_flag(_at(caps, "experimental"), "providerSecrets"),
        signature_documentation_formats=_strings(
            _at(doc, "signature_help", "signature_information", "documentation_format")
        ),
        signature_label_offsets=bool(
            _at(doc, "signature_help", "signature_information", "parameter_information", "label_offset_support")
        ),
        link_tooltips=bool(_at(doc, "document_link", "tooltip_support")),
        inlay_hint_resolves_tooltip="tooltip" in _strings(_at(doc, "inlay_hint", "resolve_support", "properties")),
    )


def _nexa_flag(experimental: Any, name: str) -> bool:
    """``experimental.nexa.<name>`` is ``true``."""
    nexa = experimental.get("nexa") if isinstance(experimental, Mapping) else None
    return isinstance(nexa, Mapping) and nexa.get(name) is True


# ---------------------------------------------------------------------- answers and custom requests


def chosen_action(answer: object) -> str | None:
    """The title of the action a ``window/showMessageRequest`` was answered with."""
    return answer.title if isinstance(answer, lsp.MessageActionItem) else None


def custom_params(params: object) -> Mapping[str, Any]:
    """The params of a ``nexa/...`` request as a mapping (pygls hands them over as namedtuples)."""
    if params is None:
        return {}
    if isinstance(params, Mapping):
        return params
    as_dict = getattr(params, "_asdict", None)
    if as_dict is None:
        raise TypeError("the params must be an object")
    return {key: _plain(value) for key, value in as_dict().items()}


def _plain(value: object) -> object:
    as_dict = getattr(value, "_asdict", None)
    if as_dict is not None:
        return {key: _plain(item) for key, item in as_dict().items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
