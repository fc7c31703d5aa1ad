"""Turning one chunk's Lark tree into typed syntax nodes (:mod:`nexa_lsp.syntax.tree`).

This package is the only code that reads Lark trees. It is split by grammar
area, each a module of functions taking the chunk's :class:`~.core.Builder`:

* :mod:`.core` - the builder state (anchor, text, diagnostics) and tree helpers;
* :mod:`.items` - the top-level dispatcher, header items, flows, tests, jobs, servers;
* :mod:`.agents` - agents, tools, ``@tool`` functions, parameter lists;
* :mod:`.adts` - protocols, type aliases, structs, enums, traits, impls;
* :mod:`.statements`, :mod:`.expressions`, :mod:`.patterns`;
* :mod:`.types` - type expressions; :mod:`.values` - literals and property values.

It also reports the forms the grammar accepts only to explain them (``flow main()``,
list literals, member assignment, ``print "text"`` ...), each with a message
naming the accepted form.
"""

from __future__ import annotations

import sys

from lark import Token, Tree

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder import items
from nexa_lsp.syntax.builder.core import Builder, rule_name
from nexa_lsp.syntax.diagnostics import Diagnostic
from nexa_lsp.syntax.tree import Anchor
from nexa_lsp.syntax.version import VersionPath

__all__ = ["build_chunk"]

#: Deeply nested sources (long operator chains, hundreds of nested blocks) need more
#: than Python's default 1,000 frames while their tree is built (Python 3.11+ frames
#: of Python functions do not use the C stack). The limit is raised once, here, and
#: never lowered: changing it per chunk raced between threads building at once.
BUILD_RECURSION_LIMIT = 12_000
if sys.getrecursionlimit() < BUILD_RECURSION_LIMIT:
    sys.setrecursionlimit(BUILD_RECURSION_LIMIT)

# Exceptions a tree shape the builder does not expect raises while it is read.
_UNEXPECTED_SHAPE = (AssertionError, AttributeError, IndexError, KeyError, StopIteration, TypeError, ValueError)


def build_chunk(
    tree: Tree[Token] | None, chunk_text: str, anchor: Anchor, path: VersionPath
) -> tuple[list[t.TopItem], list[Diagnostic]]:
    """Typed items and builder diagnostics of one parsed chunk (spans relative to ``anchor``)."""
    if tree is None:
        return [], []
    b = Builder(anchor, chunk_text, path)
    chunk = tree.children[0] if tree.children and isinstance(tree.children[0], Tree) else tree
    built: list[t.TopItem] = []
    for child in chunk.children:
        if not isinstance(child, Tree):
            continue
        try:
            item = items.top_item(b, child)
        except RecursionError:
            item = None
            b.error(
                "NX006",
                "this item nests too deeply to be analysed (hundreds of levels of blocks or operators); "
                "split it into smaller flows or assignments",
                b.span(child),
            )
        except _UNEXPECTED_SHAPE as error:
            item = None
            b.error(
                "NX007",
                f"this {_item_words(child)} could not be read into the syntax tree "
                f"({type(error).__name__}), so it is left out of the outline, navigation and checks; "
                "fix the syntax errors in it, and report the source to nexa-lsp if there are none",
                b.span(child),
            )
        if item is not None:
            built.append(item)
    _check_lists(b)
    return built, b.diagnostics


def _item_words(tree: Tree[Token]) -> str:
    """``agent_decl`` -> "agent declaration"."""
    name = rule_name(tree)
    return name.removesuffix("_decl").replace("_", " ") + (" declaration" if name.endswith("_decl") else "")


def _check_lists(b: Builder) -> None:
    """List literals are only the agent lists of DAG operators."""
    for node in b.bracket_lists:
        if id(node) not in b.dag_lists:
            b.error(
                "NX022",
                "list literals are not Nexa 2.x: brackets only list agents around "
                "|>>, ||, &>> and && (use python! or a tool for data lists)",
                node.span,
            )
