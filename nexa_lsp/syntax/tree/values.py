"""Literal values of properties (agent, tool, context, config) and the properties themselves."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from nexa_lsp.syntax.tree.spans import Node, Span


class ValueKind(enum.Enum):
    """What kind of value a property (agent, tool, context, config) has."""

    STRING = "string"
    MULTILINE_STRING = "multiline string"
    NAME = "name"
    INT = "integer"
    FLOAT = "float"
    BOOL = "boolean"
    NEGATIVE = "negative number"
    LIST = "list"
    OBJECT = "object"


@dataclass(slots=True, eq=False)
class Value(Node):
    """A literal property value.

    ``value`` is the Python value: ``str`` for strings and names, ``int``,
    ``float``, ``bool``; for lists ``items`` holds the elements (a model list's
    fallback entries have ``is_fallback``), for objects ``pairs``.
    """

    kind: ValueKind
    value: str | int | float | bool | None = None
    items: list[Value] = field(default_factory=list)
    pairs: list[tuple[str, Span, Value]] = field(default_factory=list)
    is_fallback: bool = False

    @property
    def is_string(self) -> bool:
        return self.kind in (ValueKind.STRING, ValueKind.MULTILINE_STRING)

    @property
    def text(self) -> str | None:
        """The string or name this value holds, else None."""
        return self.value if isinstance(self.value, str) else None


@dataclass(slots=True, eq=False)
class Property(Node):
    """``key: value`` in an agent, tool, context block, protocol or config."""

    key: str
    key_span: Span
    value: Value
