"""Positions in source text.

Inside nexa-lsp every position is a code-point offset into the document text
(Python ``str`` indexing). The LSP wire uses zero-based lines and UTF-16 code
units; the CLI prints one-based lines and columns counted in code points.
:class:`LineIndex` is the one place that converts between them.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Position:
    """A zero-based line and character (unit depends on the caller: UTF-16 or code points)."""

    line: int
    character: int


def utf16_length(text: str) -> int:
    """Number of UTF-16 code units needed to encode ``text``."""
    # Characters outside the BMP take two units; everything else one.
    extra = 0
    for ch in text:
        if ord(ch) > 0xFFFF:
            extra += 1
    return len(text) + extra


class LineIndex:
    """Line starts of one text, for offset <-> (line, column) conversions."""

    __slots__ = ("_ascii", "line_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.line_starts = starts
        self._ascii = text.isascii()

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    def line_of(self, offset: int) -> int:
        """Zero-based line containing ``offset`` (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        return bisect.bisect_right(self.line_starts, offset) - 1

    # -- code points (CLI, internal) -------------------------------------------------

    def position(self, offset: int) -> Position:
        """Zero-based line and code-point column of ``offset``."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return Position(line, offset - self.line_starts[line])

    # -- UTF-16 (LSP wire) -----------------------------------------------------------

    def utf16_position(self, offset: int) -> Position:
        """Zero-based line and UTF-16 column of ``offset`` (LSP position)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        start = self.line_starts[line]
        if self._ascii:
            return Position(line, offset - start)
        return Position(line, utf16_length(self.text[start:offset]))

    def _line_bounds(self, line: int) -> tuple[int, int] | None:
        """Start and end offsets of a line without its break; None past the last line."""
        if line >= len(self.line_starts):
            return None
        start = self.line_starts[line]
        end = self.line_starts[line + 1] - 1 if line + 1 < len(self.line_starts) else len(self.text)
        return start, end

    def offset_of_utf16(self, line: int, character: int) -> int:
        """Code-point offset of an LSP position; out-of-range values are clamped."""
        if line < 0:
            return 0
        bounds = self._line_bounds(line)
        if bounds is None:
            return len(self.text)
        start, end = bounds
        if character <= 0:
            return start
        if self._ascii:
            return min(start + character, end)
        units = 0
        offset = start
        while offset < end and units < character:
            units += 2 if ord(self.text[offset]) > 0xFFFF else 1
            offset += 1
        return offset

    def offset_of(self, line: int, column: int) -> int:
        """Code-point offset of a zero-based line and code-point column (clamped)."""
        if line < 0:
            return 0
        bounds = self._line_bounds(line)
        if bounds is None:
            return len(self.text)
        start, end = bounds
        return max(start, min(start + column, end))
