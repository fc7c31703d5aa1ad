"""The conversion layer on its own: kinds, positions with non-ASCII text, client facts."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from pytest_lsp import client_capabilities

from nexa_lsp.ide.completion import ItemKind
from nexa_lsp.ide.outline import OutlineKind
from nexa_lsp.server import to_lsp
from nexa_lsp.server.from_lsp import ClientFacts, client_facts, offset, offsets
from nexa_lsp.syntax.diagnostics import Severity
from nexa_lsp.text import LineIndex


@pytest.mark.parametrize("kind", list(OutlineKind))
def test_every_outline_kind_maps_to_the_lsp_kind_of_its_name(kind: OutlineKind) -> None:
    assert to_lsp.symbol_kind(kind) is lsp.SymbolKind[kind.value]


@pytest.mark.parametrize("kind", list(ItemKind))
def test_every_completion_kind_maps_to_the_lsp_kind_of_its_name(kind: ItemKind) -> None:
    assert to_lsp.completion_item_kind(kind) is lsp.CompletionItemKind[kind.value]


@pytest.mark.parametrize("severity", list(Severity))
def test_severities_keep_their_lsp_number(severity: Severity) -> None:
    assert int(to_lsp.severity(severity)) == int(severity)


def test_positions_count_utf16_units_after_chinese_and_emoji() -> None:
    text = 'agent 助手 {\n    prompt: "你好🙂" }\nflow f {}\n'
    lines = LineIndex(text)
    start = text.index("}")
    rng = to_lsp.to_range(lines, start, start + 1)
    # `    prompt: "` is 13 units, 你 好 one each, 🙂 two, `"` one, space one
    assert rng == lsp.Range(lsp.Position(1, 19), lsp.Position(1, 20))
    assert offsets(lines, rng) == (start, start + 1)
    name = text.index("助手")
    assert to_lsp.position(lines, name + 2) == lsp.Position(0, 8)
    assert offset(lines, lsp.Position(0, 8)) == name + 2


def test_an_inverted_span_is_an_empty_range() -> None:
    lines = LineIndex("abc")
    assert to_lsp.to_range(lines, 2, 1) == lsp.Range(lsp.Position(0, 2), lsp.Position(0, 2))


def test_client_facts_of_the_tested_profiles() -> None:
    vscode = client_facts(client_capabilities("visual_studio_code"))
    neovim = client_facts(client_capabilities("neovim@v0.10.0"))
    assert not vscode.pulls_diagnostics and neovim.pulls_diagnostics
    assert vscode.snippets and not neovim.snippets
    assert vscode.hover_formats[0] == "markdown" and vscode.configuration
    assert client_facts(None) == ClientFacts()


def test_markup_follows_the_clients_order_of_formats() -> None:
    assert to_lsp.markup("**x**", ("markdown", "plaintext")) == lsp.MarkupContent(lsp.MarkupKind.Markdown, "**x**")
    assert to_lsp.markup("**x**", ("plaintext", "markdown")) == lsp.MarkupContent(lsp.MarkupKind.PlainText, "x")
    assert to_lsp.markup("**x**", ()) is None
    assert to_lsp.completion_documentation("**x**", ClientFacts()) == "x"  # a string is plain text there


def test_semantic_token_delta_is_one_edit_between_common_ends() -> None:
    old = [0, 1, 2, 3, 4, 5]
    new = [0, 1, 9, 9, 4, 5]
    delta = to_lsp.semantic_tokens_delta(old, new, "r2")
    assert [(e.start, e.delete_count, list(e.data or [])) for e in delta.edits] == [(2, 2, [9, 9])]
    assert to_lsp.semantic_tokens_delta(old, list(old), "r3").edits == []
