"""Markdown to plain text, for clients that take only plain text (e.g. eglot without markdown-mode).

Covers what the ide layer writes: fenced code blocks (the fences go, the code stays as
written), block quotes, headings, bullets, ``**strong**`` and ``*emphasis*``, code spans,
links, backslash escapes and hard line breaks. Code is never changed.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_QUOTE = re.compile(r"^\s{0,3}(?:> ?)+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_BULLET = re.compile(r"^(\s*)[*+-]\s+")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>|~])")


def markdown_to_plain(markdown: str) -> str:
    """The text of ``markdown`` without its markup."""
    out: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        opening = _FENCE.match(line)
        if fence is not None:
            if opening is not None and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            else:
                out.append(line)
            continue
        if opening is not None:
            fence = opening.group(1)
            continue
        out.append(_block(line))
    return "\n".join(out)


def _block(line: str) -> str:
    line = _QUOTE.sub("", line)
    line = _HEADING.sub("", line)
    line = _BULLET.sub(r"\1- ", line)
    return _inline(line).rstrip()


def _inline(text: str) -> str:
    """Inline markup removed; code spans keep their content exactly."""
    parts: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(_prose(text[last : span.start()]))
        code = span.group(2)
        if len(code) > 1 and code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]
        parts.append(code)
        last = span.end()
    parts.append(_prose(text[last:]))
    return "".join(parts)


def _prose(text: str) -> str:
    text = _LINK.sub(r"\1 (\2)", text)
    text = _STRONG.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    return _ESCAPE.sub(r"\1", text)
