"""Generic traversal of syntax nodes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from nexa_lsp.syntax.tree.spans import Node

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("span", "name_span"))
        _CHILD_FIELDS[cls] = names
    return names


def iter_children(node: Any) -> Iterator[Any]:
    """Direct child nodes of ``node`` (nodes inside lists and tuples included)."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Node):
                    yield item
                elif isinstance(item, tuple):
                    for part in item:
                        if isinstance(part, Node):
                            yield part


def walk(node: Any) -> Iterator[Any]:
    """``node`` and all its descendants, depth first in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = list(iter_children(current))
        children.reverse()
        stack.extend(children)
