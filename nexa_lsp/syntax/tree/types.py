"""Type expressions: ``str``, ``list[str]``, ``dict[str, int]``, ``Option<T>``, ``int | str``, ``T?``.

Each named type is a node with the span of its name, so a reference to a
declared type is found from the tree, never by searching the source text.
``text`` renders a type the way hovers and the outline show it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from nexa_lsp.syntax.tree.spans import Node, Span


@dataclass(slots=True, eq=False)
class TypeName(Node):
    """One named type and its generic arguments (``list[str]``; ``List<Report>`` has ``angle``)."""

    name: str
    name_span: Span
    args: list[TypeExpr] = field(default_factory=list)
    angle: bool = False  # arguments written `<T>` rather than `[T]`
    optional: bool = False  # a trailing `?`

    @property
    def text(self) -> str:
        text = self.name
        if self.args:
            inner = ", ".join(arg.text for arg in self.args)
            text += f"<{inner}>" if self.angle else f"[{inner}]"
        return text + "?" if self.optional else text


@dataclass(slots=True, eq=False)
class TypeExpr(Node):
    """A type: one or more :class:`TypeName` options joined by ``|``."""

    options: list[TypeName]

    @property
    def text(self) -> str:
        return " | ".join(option.text for option in self.options)

    def names(self) -> Iterator[TypeName]:
        """Every named type inside, generic arguments included, in source order."""
        stack = list(reversed(self.options))
        while stack:
            current = stack.pop()
            yield current
            for arg in reversed(current.args):
                stack.extend(reversed(arg.options))
