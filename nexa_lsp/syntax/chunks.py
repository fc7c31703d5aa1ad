"""Splitting a source into chunks of top-level items.

Each chunk is parsed on its own, which gives two things:

* an edit re-parses only the chunks it touched (the language server reuses the
  rest by text), and
* a syntax error cannot swallow the declarations after it: a declaration
  keyword at the start of a line (``agent``, ``flow``, ``tool`` ...) always
  starts a new chunk, so an unclosed ``{`` is reported where it was opened
  instead of eating the rest of the file.

The scan only needs strings, comments, brackets and the words that start a
top-level item; everything else is skipped inside the regex engine.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

# Words that start a top-level item.
ITEM_KEYWORDS = frozenset(
    {
        "nexa",
        "include",
        "use",
        "tool",
        "agent",
        "flow",
        "protocol",
        "test",
        "type",
        "job",
        "server",
        "db",
        "auth",
        "kv",
        "defer",
        "match",
        "struct",
        "enum",
        "trait",
        "impl",
        "spawn",
        "parallel",
        "race",
        "channel",
        "after",
        "schedule",
    }
)
# Words that, at the very start of a line inside unbalanced brackets, still
# start a new item (followed by a name): these never begin a statement.
RESYNC_KEYWORDS = frozenset(
    {
        "agent",
        "flow",
        "tool",
        "protocol",
        "struct",
        "enum",
        "trait",
        "impl",
        "job",
        "server",
        "test",
        "include",
    }
)
# After these words a keyword is a name being declared (`flow test`), not a new item.
_NAME_EXPECTING = frozenset(
    {
        "agent",
        "flow",
        "tool",
        "protocol",
        "type",
        "struct",
        "enum",
        "trait",
        "impl",
        "job",
        "server",
        "db",
        "auth",
        "kv",
        "fn",
        "config",
        "uses",
        "implements",
        "on",
        "for",
        "requires",
        "ensures",
        "defer",
        "match",
        "test",
        "include",
        "use",
        "nexa",
        "spawn",
        "pass",
        "to",
        "await",
        "return",
    }
)

_SCAN = re.compile(
    r"""
      (?P<comment>//[^\r\n]*|/\*.*?(?:\*/|\Z))
    | (?P<string>\"\"\".*?(?:\"\"\"|\Z)|"[^"]*(?:"|\Z))
    | (?P<open>[{(\[])
    | (?P<close>[})\]])
    | (?P<deco>@[A-Za-z_]\w*)
    | (?<![\w.])(?P<word>"""
    + "|".join(sorted(ITEM_KEYWORDS, key=len, reverse=True))
    + r""")(?!\w)
    """,
    re.S | re.X,
)
_WORD_BEFORE = re.compile(r"([A-Za-z_]\w*)\s*$")
_RESYNC_AFTER = re.compile(r"[ \t]+[A-Za-z_\"\d]")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A run of top-level items: ``text[start:end]`` of the document."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Comment:
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ChunkLayout:
    """The chunks and comments of one text (kept to split the next version faster)."""

    text: str
    chunks: list[Chunk]
    comments: list[Comment]


def layout_chunks(text: str, previous: ChunkLayout | None = None) -> ChunkLayout:
    """Split ``text``; with the layout of an earlier version, only the edited stretch is scanned.

    Scanning restarts at the last chunk boundary before the edit (the scan state
    is reset at every boundary) and stops at the first boundary after the edit
    that the old layout also had, shifted by the edit's length change.
    """
    if previous is None or not previous.chunks:
        boundaries, comments, _ = scan_chunks(text, 0)
        return _layout(text, boundaries, comments)
    old = previous.text
    prefix = common_prefix(old, text)
    if prefix == len(old) == len(text):
        return ChunkLayout(text, previous.chunks, previous.comments)
    suffix = common_suffix(old, text, prefix)
    delta = len(text) - len(old)
    old_starts = [c.start for c in previous.chunks]
    first = restart_index(bisect.bisect_right(old_starts, max(0, prefix - 1)))
    restart = old_starts[first]
    edit_end_new = len(text) - suffix
    old_after = {b + delta for b in old_starts if b + delta > edit_end_new and b >= len(old) - suffix}
    boundaries, comments, synced_at = scan_chunks(text, restart, old_after.__contains__)
    head = old_starts[:first]
    comments_before = [c for c in previous.comments if c.end <= restart]
    if synced_at is None:
        return _layout(text, head + boundaries, comments_before + comments)
    tail = [b + delta for b in old_starts if b + delta >= synced_at]
    old_sync = synced_at - delta
    comments_after = [Comment(c.start + delta, c.end + delta) for c in previous.comments if c.start >= old_sync]
    return _layout(text, head + boundaries + tail, comments_before + comments + comments_after)


def _layout(text: str, boundaries: list[int], comments: list[Comment]) -> ChunkLayout:
    if not boundaries or boundaries[0] != 0:
        boundaries = [0, *boundaries]
    ends = [*boundaries[1:], len(text)]
    chunks = [Chunk(a, b) for a, b in zip(boundaries, ends, strict=True) if b > a]
    if not chunks:
        chunks = [Chunk(0, len(text))]
    return ChunkLayout(text, chunks, comments)


def restart_index(chunks_before: int) -> int:
    """Index of the chunk to scan again from, given how many chunks start at or before the
    character before an edit: the chunk before the edited one, so that the keyword starting
    the edited chunk is itself scanned again (whether it starts a chunk can depend on the
    text before it: ``flow test``)."""
    return max(0, chunks_before - 2)


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix (binary search over C-speed compares; each step copies
    only a slice of ``a``: ``b`` is compared in place by ``startswith``)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.startswith(a[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: str, b: str, prefix: int) -> int:
    """Length of the common suffix that does not overlap the common prefix (as
    :func:`common_prefix`, with ``endswith``)."""
    lo, hi = 0, min(len(a), len(b)) - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.endswith(a[len(a) - mid : len(a) - lo], 0, len(b) - lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def scan_chunks(
    text: str, start: int, synced: Callable[[int], bool] | None = None
) -> tuple[list[int], list[Comment], int | None]:
    """Chunk boundaries and comments from ``start`` (a boundary); stops at the first new
    boundary for which ``synced`` is true, and returns it third (None: scanned to the end)."""
    boundaries = [start]
    comments: list[Comment] = []
    depth = 0
    in_decorated = False  # a chunk that began with decorators, before its `{`
    for match in _SCAN.finditer(text, start):
        kind = match.lastgroup
        if kind == "comment":
            comments.append(Comment(match.start(), match.end()))
            continue
        if kind == "string":
            continue
        if kind == "open":
            depth += 1
            if match.group() == "{":
                in_decorated = False
            continue
        if kind == "close":
            depth = max(0, depth - 1)
            continue
        before = len(boundaries)
        pos = match.start()
        if kind == "deco":
            if match.group() == "@tool" or _at_line_start(text, pos):
                if depth == 0 and not in_decorated:
                    _add_boundary(boundaries, pos)
                elif depth > 0 and _at_line_start(text, pos) and _column(text, pos) == 0:
                    depth = 0
                    _add_boundary(boundaries, pos)
                in_decorated = True
        else:
            word = match.group()
            if depth == 0:
                if (in_decorated and word == "agent") or _continues_previous(text, pos):
                    continue
                in_decorated = False
                _add_boundary(boundaries, pos)
            elif word in RESYNC_KEYWORDS and _column(text, pos) == 0 and _RESYNC_AFTER.match(text, match.end()):
                depth = 0
                in_decorated = False
                _add_boundary(boundaries, pos)
        if synced is not None and len(boundaries) > before and synced(boundaries[-1]):
            return boundaries, comments, boundaries.pop()
    return boundaries, comments, None


def _add_boundary(boundaries: list[int], offset: int) -> None:
    if offset > boundaries[-1]:
        boundaries.append(offset)


def _line_start(text: str, offset: int) -> int:
    """Start of the line holding ``offset`` (LSP line breaks: ``\n``, ``\r\n``, ``\r``)."""
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


def _column(text: str, offset: int) -> int:
    return offset - _line_start(text, offset)


def _at_line_start(text: str, offset: int) -> bool:
    line_start = _line_start(text, offset)
    return text[line_start:offset].strip() == ""


def _continues_previous(text: str, offset: int) -> bool:
    """True when the keyword at ``offset`` is part of the item before it
    (a declared name such as `flow test`, or an operand after `=`, `:`, `->` ...)."""
    pos = offset - 1
    while pos >= 0 and text[pos] in " \t\r\n\f":
        pos -= 1
    if pos < 0:
        return False
    previous = text[pos]
    if previous in "=:,.>|<@&?+-*/%!":
        return True
    if previous.isalnum() or previous == "_":
        word = _WORD_BEFORE.search(text, max(0, pos - 64), pos + 1)
        return bool(word and word.group(1) in _NAME_EXPECTING)
    return False
