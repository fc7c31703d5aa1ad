"""Positions in source text.

Inside nexa-lsp every position is a code-point offset into the document text
(Python ``str`` indexing). The LSP wire uses zero-based lines and, by default,
UTF-16 code units (UTF-8 bytes or code points when the client negotiates
``positionEncoding``); the CLI prints one-based lines and columns counted in
code points. :class:`LineIndex` converts between them.

Lines break where LSP breaks them: at ``\\n``, ``\\r\\n`` and ``\\r`` only - never at
``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 or U+2029, where
``str.splitlines`` would.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from nexa_lsp.text.line_table import LineBlocks

#: How a client counts characters in a line (LSP ``PositionEncodingKind``).
Encoding = Literal["utf-16", "utf-8", "utf-32"]

#: One line with its break; the last line of a text (which has none) is not matched.
LINE_WITH_BREAK = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")
#: Any LSP line break.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Position:
    """A zero-based line and character (unit depends on the caller: UTF-16 or code points)."""

    line: int
    character: int


def utf16_length(text: str) -> int:
    """Number of UTF-16 code units needed to encode ``text``."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def units_of(text: str, encoding: Encoding) -> int:
    """Length of ``text`` in the code units of ``encoding``."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-16":
        return utf16_length(text)
    return len(text.encode("utf-8", "surrogatepass"))


def code_points_within(line: str, units: int, encoding: Encoding) -> int:
    """How many code points of ``line`` fit in its first ``units`` code units.

    A count that ends inside a character (half a surrogate pair, part of a
    UTF-8 sequence) includes that character; more units than the line has give
    the whole line.
    """
    if units <= 0:
        return 0
    if encoding == "utf-32" or line.isascii():
        return min(units, len(line))
    if encoding == "utf-16" and max(line) <= "\uffff":
        return min(units, len(line))
    width = 2 if encoding == "utf-16" else 0
    count = 0
    for ch in line:
        if units <= 0:
            break
        code = ord(ch)
        if width:
            units -= 2 if code > 0xFFFF else 1
        else:
            units -= 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
        count += 1
    return count


def line_starts_of(text: str) -> list[int]:
    """Offsets where each line of ``text`` starts (LSP line breaks)."""
    if "\r" not in text:
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        return starts
    return list(accumulate(map(len, LINE_WITH_BREAK.findall(text)), initial=0))


def break_length(text: str, line_end: int) -> int:
    """Length of the line break that ends right before offset ``line_end`` (0 when none)."""
    if line_end <= 0:
        return 0
    last = text[line_end - 1]
    if last == "\n":
        return 2 if line_end >= 2 and text[line_end - 2] == "\r" else 1
    return 1 if last == "\r" else 0


def line_bounds_in(text: str, line: int, line_count: int, line_start: Callable[[int], int]) -> tuple[int, int] | None:
    """Start and end offsets of ``line`` of ``text`` without its break; None when there is no such line."""
    if line < 0 or line >= line_count:
        return None
    start = line_start(line)
    if line + 1 < line_count:
        following = line_start(line + 1)
        return start, following - break_length(text, following)
    return start, len(text)


def offset_at_position(text: str, line: int, bounds: tuple[int, int] | None, character: int, encoding: Encoding) -> int:
    """Code-point offset of the LSP position ``(line, character)``, ``bounds`` being that line's.

    Clamped as LSP says: a line before the first gives 0, a line past the last the
    end of the text, a character past the end of its line the line's end (before
    its break).
    """
    if line < 0:
        return 0
    if bounds is None:
        return len(text)
    start, end = bounds
    if character <= 0:
        return start
    if encoding == "utf-32":
        return min(start + character, end)
    return start + code_points_within(text[start:end], character, encoding)


class LineIndex:
    """Line starts of one text, for offset <-> (line, column) conversions.

    Made from a text (its line starts, ``O(lines)``) or from ``blocks``, a
    :class:`~nexa_lsp.text.line_table.LineBlocks` copy of a document's line table
    (``O(blocks)``), which answers the lookups itself; ``line_starts``, the flat
    list, is then made when first asked for.
    """

    __slots__ = ("_ascii", "_blocks", "_starts", "text")

    def __init__(self, text: str, line_starts: list[int] | None = None, blocks: LineBlocks | None = None) -> None:
        self.text = text
        self._blocks = blocks if line_starts is None else None
        self._starts = line_starts if line_starts is not None or blocks is not None else line_starts_of(text)
        self._ascii = text.isascii()

    @property
    def line_starts(self) -> list[int]:
        """Every line start, in order."""
        if self._starts is None:
            assert self._blocks is not None
            self._starts = self._blocks.starts()
        return self._starts

    @property
    def line_count(self) -> int:
        if self._starts is None:
            assert self._blocks is not None
            return self._blocks.line_count
        return len(self._starts)

    def line_start(self, line: int) -> int:
        """Offset where zero-based ``line`` starts."""
        if self._starts is None:
            assert self._blocks is not None
            return self._blocks.line_start(line)
        return self._starts[line]

    def line_of(self, offset: int) -> int:
        """Zero-based line containing ``offset`` (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        if self._starts is None:
            assert self._blocks is not None
            return self._blocks.line_of(offset)
        return bisect.bisect_right(self._starts, offset) - 1

    def line_bounds(self, line: int) -> tuple[int, int] | None:
        """Start and end offsets of a line without its break; None past the last line."""
        return line_bounds_in(self.text, line, self.line_count, self.line_start)

    def _line_at(self, offset: int) -> tuple[int, int, int]:
        """``(line, line start, clamped offset)``; an offset inside a ``\\r\\n`` counts as the line's end."""
        offset = max(0, min(offset, len(self.text)))
        if self._starts is None:
            assert self._blocks is not None
            line = self._blocks.line_of(offset)
            return line, self._blocks.line_start(line), offset
        line = bisect.bisect_right(self._starts, offset) - 1
        return line, self._starts[line], offset

    # -- code points (CLI, internal) -------------------------------------------------

    def position(self, offset: int) -> Position:
        """Zero-based line and code-point column of ``offset``."""
        line, start, offset = self._line_at(offset)
        return Position(line, offset - start)

    def offset_of(self, line: int, column: int) -> int:
        """Code-point offset of a zero-based line and code-point column (clamped to the line)."""
        return self.offset_at(line, column, "utf-32")

    # -- LSP positions ----------------------------------------------------------------

    def lsp_position(self, offset: int, encoding: Encoding = "utf-16") -> Position:
        """Zero-based line and column of ``offset`` in the code units of ``encoding``."""
        line, start, offset = self._line_at(offset)
        if self._ascii or encoding == "utf-32":
            return Position(line, offset - start)
        return Position(line, units_of(self.text[start:offset], encoding))

    def offset_at(self, line: int, character: int, encoding: Encoding = "utf-16") -> int:
        """Code-point offset of an LSP position; out-of-range values are clamped.

        A line past the last one gives the end of the text; a character past the
        end of its line gives the line's end (before its line break).
        """
        return offset_at_position(
            self.text, line, self.line_bounds(line), character, "utf-32" if self._ascii else encoding
        )

    def utf16_position(self, offset: int) -> Position:
        """Zero-based line and UTF-16 column of ``offset`` (LSP position)."""
        return self.lsp_position(offset, "utf-16")

    def offset_of_utf16(self, line: int, character: int) -> int:
        """Code-point offset of an LSP (UTF-16) position; out-of-range values are clamped."""
        return self.offset_at(line, character, "utf-16")
