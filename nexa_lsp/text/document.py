"""The text of an open document, kept in step with the editor by LSP content changes.

:class:`DocumentText` is what a language server holds for each open file: pure
Python, no protocol library. The server converts each ``didChange`` content
change to a :class:`ContentChange` and calls :meth:`DocumentText.apply`::

    doc = DocumentText(opened_text, encoding="utf-16")   # the negotiated positionEncoding
    changed = doc.apply([ContentChange('{', ((1, 0), (1, 0)))])
    doc.text            # the editor's text, exactly
    changed             # [TextChange(start, old_end, new_end)] in code points, one per change
    covering(changed)   # one TextChange covering them all, for re-parsing around it

The LSP rules, all of them:

* a change without a range replaces the whole text;
* positions are ``(line, character)``, zero-based, ``character`` counted in the
  negotiated encoding: UTF-16 code units (the default), UTF-8 bytes or UTF-32
  (code points);
* only ``\\n``, ``\\r\\n`` and ``\\r`` break lines (not ``\\x0b``, ``\\x0c``,
  ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029, which ``str.splitlines`` breaks at);
* a character past the end of its line means the line's end, before its break;
  a line past the last line means the end of the text; a position inside a
  surrogate pair or a UTF-8 sequence takes the whole character;
* the changes of one notification apply in order, each to the text the previous
  one left.

Cost: the Python-level work of a change is proportional to the lines it
touches (the line table is updated in place, see :mod:`.line_table`); building
the new string copies it once, at C speed (``text[:start] + new + text[end:]``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nexa_lsp.text.line_table import LineTable
from nexa_lsp.text.positions import (
    Encoding,
    LineIndex,
    Position,
    line_bounds_in,
    offset_at_position,
    units_of,
)

#: ``((start line, start character), (end line, end character))`` of an LSP range.
Range = tuple[tuple[int, int], tuple[int, int]]


@dataclass(frozen=True, slots=True)
class ContentChange:
    """One LSP ``TextDocumentContentChangeEvent``: ``text`` replaces ``range``, or everything when it is None."""

    text: str
    range: Range | None = None


@dataclass(frozen=True, slots=True)
class TextChange:
    """What an applied change did, in code points: ``[start, old_end)`` of the text before it
    became ``[start, new_end)`` of the text after it."""

    start: int
    old_end: int
    new_end: int


def covering(changes: Iterable[TextChange]) -> TextChange | None:
    """One change covering a sequence of changes applied in order (None for no change):
    ``[start, old_end)`` of the text before the first became ``[start, new_end)`` of the
    text after the last, and everything outside is unchanged."""
    result: TextChange | None = None
    shift = 0  # length after the changes minus length before, for text after the covered range
    for change in changes:
        if result is None:
            result = change
            shift = change.new_end - change.old_end
            continue
        end_before = max(result.new_end, change.old_end)  # in the text before this change
        old_end = end_before - shift if end_before > result.new_end else result.old_end
        delta = change.new_end - change.old_end
        result = TextChange(min(result.start, change.start), old_end, end_before + delta)
        shift += delta
    return result


class DocumentText:
    """A document's text with its lines, changed by LSP content changes."""

    __slots__ = ("_lines", "_text", "encoding")

    def __init__(self, text: str, encoding: Encoding = "utf-16") -> None:
        self._text = text
        self._lines = LineTable(text)
        self.encoding: Encoding = encoding

    @property
    def text(self) -> str:
        return self._text

    @property
    def line_count(self) -> int:
        return self._lines.line_count

    @property
    def lines(self) -> LineTable:
        """The line table of the current text (``line_of``, ``line_start``; code points)."""
        return self._lines

    def apply(self, changes: Iterable[ContentChange]) -> list[TextChange]:
        """Apply the changes of one notification in order; what each did, in code points."""
        done: list[TextChange] = []
        for change in changes:
            if change.range is None:
                done.append(TextChange(0, len(self._text), len(change.text)))
                self._text = change.text
                self._lines = LineTable(change.text)
                continue
            (start_line, start_char), (end_line, end_char) = change.range
            start = self.offset_at(start_line, start_char)
            end = self.offset_at(end_line, end_char)
            start, end = min(start, end), max(start, end)
            text = self._text
            self._text = "".join((text[:start], change.text, text[end:]))
            new_end = start + len(change.text)
            self._lines.replace(self._text, start, end, new_end)
            done.append(TextChange(start, end, new_end))
        return done

    # -- positions in the negotiated encoding --------------------------------------------

    def line_bounds(self, line: int) -> tuple[int, int] | None:
        """Start and end offsets of a line without its break; None past the last line."""
        return line_bounds_in(self._text, line, self._lines.line_count, self._lines.line_start)

    def offset_at(self, line: int, character: int) -> int:
        """Code-point offset of an LSP position, clamped as LSP says (see the module docs)."""
        return offset_at_position(self._text, line, self.line_bounds(line), character, self.encoding)

    def position(self, offset: int) -> Position:
        """The LSP position of a code-point offset (clamped to the text)."""
        offset = max(0, min(offset, len(self._text)))
        line = self._lines.line_of(offset)
        start = self._lines.line_start(line)
        return Position(line, units_of(self._text[start:offset], self.encoding))

    def line_index(self) -> LineIndex:
        """A :class:`LineIndex` of the current text, made from a copy of the line table
        (``O(blocks)``; later changes leave it as it is)."""
        return LineIndex(self._text, blocks=self._lines.snapshot())
