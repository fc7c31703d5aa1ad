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

import itertools
import re
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
      (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<string>(?:template[ \t\r\n]*)?\"\"\".*?(?:\"\"\"|\Z)|r?"[^"]*(?:"|\Z))
    | (?P<open>[{(\[])
    | (?P<close>[})\]])
    | (?P<deco>@[A-Za-z_]\w*)
    | (?<![\w.])(?P<word>[A-Za-z_]\w*)
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


def split_chunks(text: str) -> tuple[list[Chunk], list[Comment]]:
    """Chunks covering all of ``text`` in order, and the comments found."""
    boundaries = [0]
    comments: list[Comment] = []
    depth = 0
    in_decorated = False  # a chunk that began with decorators, before its `{`
    for match in _SCAN.finditer(text):
        kind = match.lastgroup
        if kind == "comment":
            comments.append(Comment(match.start(), match.end()))
        elif kind == "string":
            continue
        elif kind == "open":
            depth += 1
            if match.group() == "{":
                in_decorated = False
        elif kind == "close":
            depth = max(0, depth - 1)
        elif kind == "deco":
            start = match.start()
            if match.group() == "@tool" or _at_line_start(text, start):
                if depth == 0 and not in_decorated:
                    _add_boundary(boundaries, start)
                elif depth > 0 and _at_line_start(text, start) and _column(text, start) == 0:
                    depth = 0
                    _add_boundary(boundaries, start)
                in_decorated = True
        else:
            word = match.group()
            if word not in ITEM_KEYWORDS:
                continue
            start = match.start()
            if depth == 0:
                if in_decorated and word == "agent":
                    continue
                if _continues_previous(text, start):
                    continue
                in_decorated = False
                _add_boundary(boundaries, start)
            elif word in RESYNC_KEYWORDS and _column(text, start) == 0 and _RESYNC_AFTER.match(text, match.end()):
                depth = 0
                in_decorated = False
                _add_boundary(boundaries, start)
    boundaries.append(len(text))
    chunks = [Chunk(a, b) for a, b in itertools.pairwise(boundaries) if b > a or len(text) == 0]
    if not chunks:
        chunks = [Chunk(0, len(text))]
    return chunks, comments


def _add_boundary(boundaries: list[int], offset: int) -> None:
    if offset > boundaries[-1]:
        boundaries.append(offset)


def _column(text: str, offset: int) -> int:
    return offset - (text.rfind("\n", 0, offset) + 1)


def _at_line_start(text: str, offset: int) -> bool:
    line_start = text.rfind("\n", 0, offset) + 1
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
