"""Where the cursor is, read from the text itself.

Completion runs while the user types, when the item around the cursor is often
incomplete, so the syntax tree cannot tell where the cursor is. This scan
reads the chunk around the cursor up to the cursor instead: open brackets, the
keyword that started the item, the key of the current ``key: value`` entry,
strings and comments.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from nexa_lsp.ide.chunked import chunk_index
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import SourceFile

_TOKEN = re.compile(
    r"""
      (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<string>(?:template[ \t\r\n]*)?\"\"\".*?(?:\"\"\"|\Z)|r?"[^"\n]*(?:"|\Z))
    | (?P<deco>@[A-Za-z_]\w*)
    | (?P<word>python!|[A-Za-z_][A-Za-z0-9_]*)
    | (?P<number>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)
    | (?P<op>->|=>|\|>>|&>>|>>|\|>|\?\?|::|\|\||&&)
    | (?P<nl>\n)
    | (?P<ws>[ \t\r\f]+)
    | (?P<punct>.)
    """,
    re.S | re.X,
)
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")


@dataclass(slots=True)
class Frame:
    """One open bracket before the cursor."""

    char: str
    offset: int
    word_before: str | None  # the word right before the bracket (`context`, `if`, an agent name ...)
    key: str | None = None  # the key of the current `key: value` entry inside `{ }`
    after_colon: bool = False
    value_seen: bool = False
    commas: int = 0  # commas directly inside the bracket before the cursor
    item_start: int = -1  # where the current comma-separated entry starts (after the bracket or last comma)


@dataclass(slots=True)
class CursorContext:
    offset: int
    prefix: str  # identifier characters right before the cursor
    prefix_start: int
    in_comment: bool = False
    in_string: bool = False
    string_start: int | None = None
    head: str | None = None  # keyword that started the top-level item around the cursor
    header: list[str] = field(default_factory=list)  # tokens of the item before its first bracket
    frames: list[Frame] = field(default_factory=list)
    previous: str | None = None  # the token right before the prefix
    statement_start: bool = True  # only whitespace since a line start, `{`, `}` or `;`
    receiver: list[str] = field(default_factory=list)  # `a.b.` right before the prefix -> ["a", "b"]

    @property
    def depth(self) -> int:
        return len(self.frames)

    @property
    def top(self) -> Frame | None:
        return self.frames[-1] if self.frames else None

    @property
    def at_top_level(self) -> bool:
        return not self.frames and self.head is None

    @property
    def at_key(self) -> bool:
        """Inside `{ }` where a `key:` is expected (not after the colon)."""
        top = self.top
        return top is not None and top.char == "{" and not top.after_colon


def chunk_start(source: SourceFile, offset: int) -> int:
    """Start offset of the chunk holding ``offset``."""
    return source.chunks[chunk_index(source, offset)].anchor.base if source.chunks else 0


def identifier_before(text: str, offset: int) -> int:
    start = offset
    while start > 0 and _IDENT_CHAR.match(text[start - 1]):
        start -= 1
    return start


def word_at(text: str, offset: int) -> tuple[int, int] | None:
    """The identifier touching ``offset`` (``python!`` included), as (start, end)."""
    start = identifier_before(text, offset)
    end = offset
    while end < len(text) and _IDENT_CHAR.match(text[end]):
        end += 1
    if end < len(text) and text[end] == "!" and text[start:end] == "python":
        end += 1
    if start == end:
        return None
    if text[start].isdigit():
        return None
    return start, end


def cursor_context(source: SourceFile, offset: int) -> CursorContext:
    text = source.text
    offset = max(0, min(offset, len(text)))
    prefix_start = identifier_before(text, offset)
    if prefix_start < offset and text[prefix_start].isdigit():
        prefix_start = offset
    ctx = CursorContext(offset, text[prefix_start:offset], prefix_start)
    start = chunk_start(source, prefix_start)
    declaration = source.version.declaration
    if declaration is not None and declaration.start <= prefix_start <= declaration.end:
        ctx.head = "nexa"
    _scan(text, start, prefix_start, ctx)
    ctx.receiver = receiver_chain(text, prefix_start)
    return ctx


def _scan(text: str, start: int, end: int, ctx: CursorContext) -> None:
    item_done = True
    last_word: str | None = None
    for match in _TOKEN.finditer(text, start, end):
        kind = match.lastgroup
        value = match.group()
        if kind == "comment":
            if match.end() == end and (value.startswith("//") or not (len(value) >= 4 and value.endswith("*/"))):
                ctx.in_comment = True
            continue
        if kind == "string" and match.end() == end and not _string_closed(value):
            ctx.in_string = True
            ctx.string_start = match.start()
            return
        if kind == "ws":
            continue
        if kind == "nl":
            ctx.statement_start = True
            top = ctx.top
            if top is not None and top.char == "{" and top.after_colon and top.value_seen:
                top.after_colon = False
                top.key = None
                top.value_seen = False
            continue
        ctx.statement_start = False
        top = ctx.top
        if kind == "punct" and value == "," and top is not None:
            top.commas += 1
            top.item_start = match.end()
        if kind in ("word", "deco"):
            if not ctx.frames and item_done:
                if kind == "deco" and value != "@tool":
                    last_word = value
                    ctx.previous = value
                    continue
                ctx.head = value
                ctx.header = []
                item_done = False
            elif not ctx.frames:
                ctx.header.append(value)
            last_word = value
            if top is not None and top.char == "{":
                if top.after_colon:
                    top.value_seen = True
                else:
                    top.key = value
        elif kind == "punct" and value in "{([":
            ctx.frames.append(Frame(value, match.start(), last_word, item_start=match.end()))
            if value == "{":
                ctx.statement_start = True
        elif kind == "punct" and value in "})]":
            if ctx.frames:
                ctx.frames.pop()
            if value == "}":
                ctx.statement_start = True
                if not ctx.frames:
                    item_done = True
                    ctx.head = None
            if ctx.top is not None and ctx.top.after_colon:
                ctx.top.value_seen = True
        elif kind == "punct" and value == ";":
            ctx.statement_start = True
            if not ctx.frames:
                item_done = True
                ctx.head = None
        elif kind == "punct" and value == ":" and top is not None and top.char == "{":
            top.after_colon = True
            top.value_seen = False
        elif kind == "punct" and value == "," and top is not None and top.char == "{":
            top.after_colon = False
            top.key = None
            top.value_seen = False
        elif top is not None and top.char == "{" and top.after_colon:
            top.value_seen = True
        if not ctx.frames and kind not in ("word", "deco") and not item_done:
            ctx.header.append(value)
        ctx.previous = value
    if item_done and not ctx.frames:
        ctx.head = None if ctx.head != "nexa" else ctx.head


def _string_closed(value: str) -> bool:
    body = value
    if body.startswith("template"):
        body = body[len("template") :].lstrip()
    if body.startswith('"""'):
        return len(body) >= 6 and body.endswith('"""')
    if body.startswith("r"):
        body = body[1:]
    return len(body) >= 2 and body.endswith('"')


def receiver_chain(text: str, prefix_start: int) -> list[str]:
    """The names of ``a.b.`` right before ``prefix_start`` (``["a", "b"]``)."""
    chain: list[str] = []
    pos = prefix_start
    while pos > 0 and text[pos - 1] == ".":
        end = pos - 1
        start = identifier_before(text, end)
        if start == end:
            break
        chain.append(text[start:end])
        pos = start
    chain.reverse()
    return chain


def _item_start(item: t.TopItem) -> int:
    return item.span.start


def comment_start(comment: t.Span) -> int:
    """Sort key of comments (for bisecting ``SourceFile.comments``)."""
    return comment.start


def item_at(source: SourceFile, offset: int) -> t.TopItem | None:
    """The top-level item whose span holds ``offset``."""
    items = source.items
    index = bisect.bisect_right(items, offset, key=_item_start) - 1
    while index >= 0:
        item = items[index]
        if item.span.start <= offset <= item.span.end:
            return item
        if item.span.end < offset:
            return None
        index -= 1
    return None


def node_path(node: object, offset: int) -> list[object]:
    """``node`` and its descendants that hold ``offset``, outermost first."""
    path: list[object] = []
    current: object | None = node
    while current is not None:
        path.append(current)
        inner: object | None = None
        for child in t.iter_children(current):
            span = getattr(child, "span", None)
            if span is not None and span.start <= offset <= span.end:
                inner = child
        current = inner
    return path


def in_comment(source: SourceFile, offset: int) -> bool:
    comments = source.comments
    index = bisect.bisect_right(comments, offset, key=comment_start) - 1
    return index >= 0 and comments[index].start <= offset < comments[index].end
