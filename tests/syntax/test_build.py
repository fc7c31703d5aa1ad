"""The tree builder: items it cannot read are reported, deep nesting is safe in threads."""

from __future__ import annotations

import sys
import threading

from lark import Tree

from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder import build_chunk
from nexa_lsp.syntax.grammar import parser_for
from nexa_lsp.syntax.tree import Anchor
from nexa_lsp.syntax.version import VersionPath

TWO_ITEMS = (
    'tool Search {\n    description: "web",\n    parameters: {"q": "string"}\n}\nagent A {\n    prompt: "x"\n}\n'
)


def _rule(tree: Tree, name: str) -> Tree:  # type: ignore[type-arg]
    return next(sub for sub in tree.iter_subtrees() if str(sub.data).endswith(name))


def test_an_item_the_builder_cannot_read_is_reported_and_the_rest_is_kept() -> None:
    parsed = parser_for(VersionPath.COMPAT_24).lark.parse(TWO_ITEMS)
    # a property without its value: a shape no grammar rule makes, as a recovery bug might
    prop = _rule(parsed, "tool_prop")
    del prop.children[1:]
    items, diagnostics = build_chunk(parsed, TWO_ITEMS, Anchor(0), VersionPath.COMPAT_24)
    assert [type(item) for item in items] == [t.AgentDecl]
    [problem] = [d for d in diagnostics if d.code == "NX007"]
    assert TWO_ITEMS[problem.span.start : problem.span.end].startswith("tool Search {")
    assert "tool declaration" in problem.message and "left out of the outline" in problem.message


def test_a_clean_source_reports_no_unreadable_item() -> None:
    source = parse_source(TWO_ITEMS)
    assert [d.code for d in source.diagnostics] == []
    assert [type(item) for item in source.items] == [t.ToolDecl, t.AgentDecl]


def _long_chain(terms: int) -> str:
    return "flow main {\n    x = " + " + ".join(["a"] * terms) + ";\n}\n"


def test_deep_nesting_builds_in_several_threads_at_once_and_the_limit_never_drops() -> None:
    # 1,500 chained operators need more frames than Python's default limit while they are built
    text = _long_chain(1500)
    limits: set[int] = set()
    results: list[list[str]] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            limits.add(sys.getrecursionlimit())

    def parse_many() -> None:
        for _ in range(4):
            source = parse_source(text)
            results.append([d.code for d in source.diagnostics] + [type(i).__name__ for i in source.items])

    watcher = threading.Thread(target=watch)
    watcher.start()
    workers = [threading.Thread(target=parse_many) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stop.set()
    watcher.join()
    assert results == [["FlowDecl"]] * 16
    assert len(limits) == 1


def test_nesting_beyond_the_limit_is_reported_not_raised() -> None:
    source = parse_source(_long_chain(8000) + 'agent A {\n    prompt: "x"\n}\n')
    assert [d.code for d in source.diagnostics] == ["NX006"]
    assert [type(item) for item in source.items] == [t.AgentDecl]
