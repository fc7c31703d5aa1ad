"""Line starts of a text that changes, updated in time proportional to each edit.

:class:`LineTable` keeps the lines in blocks of about :data:`BLOCK_LINES` lines,
each holding its lines' starts relative to the block, plus two Fenwick trees
(binary indexed trees) over the blocks: their lengths in code points and their
line counts. An edit re-reads only the lines it touches (and the rest of their
block), and updates the trees in ``O(log blocks)``; finding a line's start or an
offset's line is ``O(log blocks + log BLOCK_LINES)``. When an edit changes the
number of blocks (about once every :data:`BLOCK_LINES` inserted lines) the
trees are rebuilt, a few hundred additions for a 50,000-line file.
"""

from __future__ import annotations

import bisect
from itertools import accumulate

from nexa_lsp.text.positions import line_starts_of

BLOCK_LINES = 64


class _Fenwick:
    """Prefix sums over a list of non-negative integers, with point updates."""

    __slots__ = ("_size", "_tree")

    def __init__(self, values: list[int]) -> None:
        size = len(values)
        tree = [0, *values]
        for i in range(1, size + 1):
            parent = i + (i & -i)
            if parent <= size:
                tree[parent] += tree[i]
        self._size = size
        self._tree = tree

    def add(self, index: int, delta: int) -> None:
        """Add ``delta`` to value ``index`` (0-based)."""
        i = index + 1
        tree, size = self._tree, self._size
        while i <= size:
            tree[i] += delta
            i += i & -i

    def prefix(self, count: int) -> int:
        """Sum of the first ``count`` values."""
        total = 0
        tree = self._tree
        while count > 0:
            total += tree[count]
            count -= count & -count
        return total

    def locate(self, value: int) -> tuple[int, int]:
        """``(index, prefix before it)`` of the last value whose prefix sum is ``<= value``."""
        index = 0
        before = 0
        tree = self._tree
        step = 1 << self._size.bit_length()
        while step:
            probe = index + step
            if probe <= self._size and before + tree[probe] <= value:
                index = probe
                before += tree[probe]
            step >>= 1
        return index, before


class LineTable:
    """The line starts of a text (LSP line breaks), kept in step with edits to it."""

    __slots__ = ("_block_lengths", "_blocks", "_counts", "_lengths", "_snapshot", "_total")

    def __init__(self, text: str) -> None:
        self._total = len(text)
        self._snapshot: LineBlocks | None = None
        self._set_blocks(_blocks_of(line_starts_of(text), len(text)))

    # -- queries -----------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return self._counts.prefix(len(self._blocks))

    def line_start(self, line: int) -> int:
        """Offset where ``line`` starts (0 <= line < line_count)."""
        block, lines_before = self._counts.locate(line)
        if block == len(self._blocks):  # only when line == line_count: not a line
            raise IndexError(line)
        return self._lengths.prefix(block) + self._blocks[block][line - lines_before]

    def line_of(self, offset: int) -> int:
        """The line holding ``offset`` (clamped to the text)."""
        offset = max(0, min(offset, self._total))
        block, start = self._lengths.locate(offset)
        if block == len(self._blocks):  # the end of the text: the last block
            block -= 1
            start = self._lengths.prefix(block)
        inner = bisect.bisect_right(self._blocks[block], offset - start) - 1
        return self._counts.prefix(block) + inner

    def starts(self) -> list[int]:
        """Every line start, in order (a full copy: ``O(lines)``)."""
        out: list[int] = []
        base = 0
        for index, block in enumerate(self._blocks):
            out.extend([base + rel for rel in block])
            base += self._block_length(index)
        return out

    def snapshot(self) -> LineBlocks:
        """The line starts as they are now, unaffected by later edits (``O(blocks)``, at C speed:
        the blocks' lists are shared, never changed in place)."""
        if self._snapshot is None:
            self._snapshot = LineBlocks(
                list(self._blocks),
                list(accumulate(self._block_lengths, initial=0)),
                list(accumulate(map(len, self._blocks), initial=0)),
            )
        return self._snapshot

    # -- edits --------------------------------------------------------------------------

    def replace(self, text: str, start: int, old_end: int, new_end: int) -> None:
        """Follow an edit: ``[start, old_end)`` of the previous text is ``[start, new_end)`` of ``text``.

        The lines read again run from the line holding the character before the
        edit (a ``\r`` ending it may now pair with a ``\n``) through the line
        holding ``old_end``; the characters just outside them are unchanged, so no
        line break outside them can change.
        """
        self._snapshot = None
        delta = new_end - old_end
        old_total = self._total
        first = self.line_of(start - 1) if start > 0 else 0
        last = self.line_of(old_end)
        first_block, first_before = self._counts.locate(first)
        last_block, last_before = self._counts.locate(last)
        first_base = self._lengths.prefix(first_block)
        last_base = self._lengths.prefix(last_block)
        blocks_end = self._lengths.prefix(last_block + 1)  # old offset where the last block ends
        region_start = first_base + self._blocks[first_block][first - first_before]
        last_rel = self._blocks[last_block]
        if last - last_before + 1 < len(last_rel):
            region_end_old = last_base + last_rel[last - last_before + 1]
        else:
            region_end_old = blocks_end
        if region_end_old >= old_total:  # the region runs to the end: take the last (maybe empty) block too
            last_block = len(self._blocks) - 1
            blocks_end = old_total
        region_end = region_end_old + delta
        head = [first_base + rel for rel in self._blocks[first_block] if first_base + rel < region_start]
        middle = [region_start + rel for rel in line_starts_of(text[region_start:region_end])]
        if region_end < len(text):
            middle.pop()  # the start of the next line, which the lines after the region hold
            tail = [last_base + rel + delta for rel in last_rel if last_base + rel >= region_end_old]
        else:
            tail = []
        self._total = len(text)
        end = blocks_end + delta if blocks_end < old_total else len(text)
        self._splice(first_block, last_block + 1, _blocks_of(head + middle + tail, end))

    # -- internals ----------------------------------------------------------------------

    def _block_length(self, block: int) -> int:
        return self._block_lengths[block]

    def _set_blocks(self, blocks: list[tuple[list[int], int]]) -> None:
        self._blocks = [rel for rel, _length in blocks]
        self._block_lengths = [length for _rel, length in blocks]
        self._lengths = _Fenwick(self._block_lengths)
        self._counts = _Fenwick([len(rel) for rel, _length in blocks])

    def _splice(self, first: int, stop: int, new: list[tuple[list[int], int]]) -> None:
        """Put ``new`` blocks in place of blocks ``first:stop``."""
        if len(new) == stop - first:
            for offset, (rel, length) in enumerate(new):
                index = first + offset
                self._lengths.add(index, length - self._block_length(index))
                self._counts.add(index, len(rel) - len(self._blocks[index]))
                self._blocks[index] = rel
                self._block_lengths[index] = length
            return
        self._block_lengths[first:stop] = [length for _rel, length in new]
        self._blocks[first:stop] = [rel for rel, _length in new]
        self._lengths = _Fenwick(self._block_lengths)
        self._counts = _Fenwick([len(rel) for rel in self._blocks])


class LineBlocks:
    """An unchanging copy of a :class:`LineTable`: its blocks of relative line starts, where
    each block starts (``offsets``) and how many lines come before it (``lines_before``),
    each with the total appended. Queries are two bisections."""

    __slots__ = ("blocks", "lines_before", "offsets")

    def __init__(self, blocks: list[list[int]], offsets: list[int], lines_before: list[int]) -> None:
        self.blocks = blocks
        self.offsets = offsets
        self.lines_before = lines_before

    @property
    def line_count(self) -> int:
        return self.lines_before[-1]

    def line_start(self, line: int) -> int:
        """Offset where ``line`` starts (negative lines count from the end, as list indices do)."""
        if line < 0:
            line += self.lines_before[-1]
            if line < 0:
                raise IndexError(line)
        block = bisect.bisect_right(self.lines_before, line) - 1
        if block >= len(self.blocks):
            raise IndexError(line)
        return self.offsets[block] + self.blocks[block][line - self.lines_before[block]]

    def line_of(self, offset: int) -> int:
        """The line holding ``offset`` (``0 <= offset <= total``)."""
        block = min(bisect.bisect_right(self.offsets, offset) - 1, len(self.blocks) - 1)
        return self.lines_before[block] + bisect.bisect_right(self.blocks[block], offset - self.offsets[block]) - 1

    def starts(self) -> list[int]:
        """Every line start, in order (``O(lines)``)."""
        out: list[int] = []
        for base, block in zip(self.offsets, self.blocks, strict=False):
            out.extend([base + rel for rel in block])
        return out


def _blocks_of(starts: list[int], end: int) -> list[tuple[list[int], int]]:
    """Absolute line ``starts`` (ascending) cut into blocks ``(relative starts, length)``;
    the last block ends at offset ``end``."""
    if not starts:
        return []
    count = len(starts)
    pieces = max(1, -(-count // BLOCK_LINES)) if count > 2 * BLOCK_LINES else 1
    size = -(-count // pieces)
    out: list[tuple[list[int], int]] = []
    for first in range(0, count, size):
        chunk = starts[first : first + size]
        following = starts[first + size] if first + size < count else end
        origin = chunk[0]
        out.append(([s - origin for s in chunk], following - origin))
    return out
