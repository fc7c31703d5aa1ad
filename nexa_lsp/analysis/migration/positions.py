"""Line numbers in cached messages.

Findings are kept per flow while an edit leaves the flow alone, but their messages name
lines ("earlier run of Writer (line 12)") and the lines move when an edit above adds or
removes a line break. So a message holds a *marker* for each line it names - the chunk
the position is in and the offset inside it - and the line number is written in when the
message becomes a diagnostic (:meth:`LineNumbers.render`).
"""

from __future__ import annotations

import itertools
import re

from nexa_lsp.analysis.symbols import ChunkCache
from nexa_lsp.syntax.source import ParsedChunk, SourceFile
from nexa_lsp.syntax.tree import Anchor

_COUNTER = itertools.count(1)
#: A number for every parsed chunk, kept while the chunk is reused.
_SERIALS: ChunkCache[int] = ChunkCache(lambda _chunk: next(_COUNTER))
#: Every line marker starts with this character.
MARK = "\x00"
#: Not Nexa syntax: the line markers this module writes into messages itself.
_MARKER = re.compile("\x00(\\d+):(\\d+)\x00")


def last_line(source: SourceFile) -> int:
    """The line of the end of the text: the number of line breaks as line numbers count them
    (LSP breaks: ``\\r\\n``, ``\\r``, ``\\n``), without building the line table."""
    text = source.text
    if "\r" not in text:
        return text.count("\n")
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def chunk_serial(chunk: ParsedChunk) -> int:
    return _SERIALS.get(chunk)


def line_marker(serial: int, rel_offset: int) -> str:
    """Stands for the line of ``rel_offset`` inside chunk ``serial`` until rendered."""
    return f"\x00{serial}:{rel_offset}\x00"


class LineNumbers:
    """Writes the line numbers of one source version into messages."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self._anchors: dict[int, Anchor] | None = None

    def render(self, text: str) -> str:
        if MARK not in text:
            return text
        if self._anchors is None:
            self._anchors = {chunk_serial(chunk): chunk.anchor for chunk in self.source.chunks}
        anchors = self._anchors
        lines = self.source.lines

        def line(match: re.Match[str]) -> str:
            anchor = anchors[int(match.group(1))]
            return str(lines.line_of(anchor.base + int(match.group(2))) + 1)

        return _MARKER.sub(line, text)
