"""Folding ranges and selection ranges (both follow the syntax tree)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import NamedTuple

from nexa_lsp.ide.chunked import chunk_lines, record, walk_chunks
from nexa_lsp.ide.context import comment_start, item_at, node_path, word_at
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import ParsedChunk, SourceFile
from nexa_lsp.text import LineIndex


class Fold(NamedTuple):
    """A folding range in whole lines; ``kind`` is "comment", "imports" or None (a region)."""

    start_line: int
    end_line: int
    kind: str | None = None


@dataclass(slots=True, eq=False)
class ChunkFolds:
    """The folds of one chunk, in chunk-relative lines (line 0 is the chunk's first line).

    ``items`` holds, per item of the chunk, the item's folds (None for an
    ``include``, which folds with its neighbours); ``comments`` the first and
    last line of each comment and whether it is a ``//`` comment.
    """

    items: list[list[tuple[int, int]] | None]
    comments: list[tuple[int, int, bool]]


def _fold_lines(lines: LineIndex, start: int, end: int) -> tuple[int, int] | None:
    first = lines.line_of(start)
    last = lines.line_of(max(start, end - 1))
    # keep a closing bracket that starts its line visible
    closing_line_start = lines.line_starts[last]
    if lines.text[closing_line_start:end].strip() in ("}", "]", ")", '"""', "};"):
        last -= 1
    return (first, last) if last > first else None


def _chunk_folds(source: SourceFile, chunk: ParsedChunk) -> ChunkFolds:
    rec = record(chunk)
    if rec.folds is None:
        lines = chunk_lines(chunk)
        base = chunk.anchor.base
        items: list[list[tuple[int, int]] | None] = []
        for item in chunk.items:
            if isinstance(item, t.Include):
                items.append(None)
                continue
            folds: list[tuple[int, int]] = []
            if not isinstance(item, t.VersionDecl | t.UseConfig):
                spans = [item.span] + [node.span for node in t.walk(item) if _foldable(node)]
                for span in spans:
                    found = _fold_lines(lines, span.start - base, span.end - base)
                    if found is not None:
                        folds.append(found)
            items.append(folds)
        comments = []
        first = bisect.bisect_left(source.comments, base, key=comment_start)
        last = bisect.bisect_left(source.comments, base + len(chunk.text), key=comment_start)
        for comment in source.comments[first:last]:
            rel_start, rel_end = comment.start - base, comment.end - base
            comments.append(
                (
                    lines.line_of(rel_start),
                    lines.line_of(max(rel_start, rel_end - 1)),
                    chunk.text.startswith("//", rel_start),
                )
            )
        rec.folds = ChunkFolds(items, comments)
    return rec.folds


def folding_ranges(source: SourceFile) -> list[Fold]:
    """Blocks, multi-line strings and lists, comment runs and include groups (whole lines).

    Each chunk's folds are computed once per chunk object and shifted to the
    chunk's current first line.
    """
    folds: list[Fold] = []
    seen: set[tuple[int, int]] = set()
    lines = source.lines

    def add(first: int, last: int, kind: str | None = None) -> None:
        if (first, last) not in seen:
            seen.add((first, last))
            folds.append(Fold(first, last, kind))

    def add_includes(includes: list[t.Include]) -> None:
        if len(includes) > 1:
            found = _fold_lines(lines, includes[0].span.start, includes[-1].span.end + 1)
            if found is not None:
                add(*found, "imports")

    includes: list[t.Include] = []
    comment_lines: list[tuple[int, int, bool]] = []
    for chunk, line, _column in walk_chunks(source):
        chunk_folds = _chunk_folds(source, chunk)
        for item, item_folds in zip(chunk.items, chunk_folds.items, strict=True):
            if item_folds is None:
                assert isinstance(item, t.Include)
                includes.append(item)
                continue
            add_includes(includes)
            includes = []
            for first, last in item_folds:
                add(line + first, line + last)
        comment_lines.extend((line + first, line + last, slashes) for first, last, slashes in chunk_folds.comments)
    add_includes(includes)
    # comment runs: a block comment over several lines, or consecutive line comments
    run: list[int] | None = None  # first and last line of the current run
    last_line = -2
    for first, last, slashes in comment_lines:
        if last > first:
            folds.append(Fold(first, last, "comment"))
            continue
        if run is not None and first == last_line + 1 and slashes:
            run[1] = last
        else:
            if run is not None and run[1] > run[0]:
                folds.append(Fold(run[0], run[1], "comment"))
            run = [first, last]
        last_line = last
    if run is not None and run[1] > run[0]:
        folds.append(Fold(run[0], run[1], "comment"))
    folds.sort(key=lambda f: (f.start_line, -f.end_line))
    return folds


def _foldable(node: object) -> bool:
    if isinstance(node, t.Block | t.ContextBlock | t.MatchExpr):
        return True
    if isinstance(node, t.StringLit):
        return node.multiline
    if isinstance(node, t.Value):
        return node.kind in (t.ValueKind.MULTILINE_STRING, t.ValueKind.LIST, t.ValueKind.OBJECT)
    return False


def selection_ranges(source: SourceFile, offset: int) -> list[tuple[int, int]]:
    """Ranges around ``offset`` from the innermost (the word) to the whole document."""
    ranges: list[tuple[int, int]] = [(0, len(source.text))]
    item = item_at(source, offset)
    if item is not None:
        for node in node_path(item, offset):
            span = getattr(node, "span", None)
            if span is None:
                continue
            rng = (span.start, span.end)
            outer = ranges[-1]
            if outer[0] <= rng[0] and rng[1] <= outer[1] and rng != outer:
                ranges.append(rng)
    word = word_at(source.text, offset)
    if word is not None:
        outer = ranges[-1]
        if outer[0] <= word[0] and word[1] <= outer[1] and word != outer:
            ranges.append(word)
    ranges.reverse()
    return ranges
