"""Where nodes are: chunk anchors, spans, and the base class of every node."""

from __future__ import annotations

from dataclasses import dataclass, field


class Anchor:
    """Where a chunk currently starts in its document (shared by the chunk's spans)."""

    __slots__ = ("base",)

    def __init__(self, base: int = 0) -> None:
        self.base = base

    def __repr__(self) -> str:
        return f"Anchor({self.base})"


_ROOT_ANCHOR = Anchor(0)


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range of code-point offsets ``[start, end)`` in a document."""

    rel_start: int
    rel_end: int
    anchor: Anchor = field(default=_ROOT_ANCHOR, compare=False, repr=False)

    @property
    def start(self) -> int:
        return self.anchor.base + self.rel_start

    @property
    def end(self) -> int:
        return self.anchor.base + self.rel_end

    def contains(self, offset: int) -> bool:
        """True when ``offset`` is inside the span or right at its end."""
        return self.start <= offset <= self.end

    def __repr__(self) -> str:
        return f"Span({self.start}, {self.end})"


def absolute_span(start: int, end: int) -> Span:
    """A span that does not belong to any chunk (document-level facts)."""
    return Span(start, end)


@dataclass(slots=True, eq=False)
class Node:
    """Base class of all syntax nodes."""

    span: Span
