"""Folding ranges and selection ranges (both follow the syntax tree)."""

from __future__ import annotations

from dataclasses import dataclass

from nexa_lsp.ide.context import item_at, node_path, word_at
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import SourceFile


@dataclass(frozen=True, slots=True)
class Fold:
    start_line: int
    end_line: int
    kind: str | None = None  # "comment" | "imports" | None (region)


def _fold_lines(source: SourceFile, start: int, end: int) -> tuple[int, int] | None:
    lines = source.lines
    first = lines.line_of(start)
    last = lines.line_of(max(start, end - 1))
    # keep a closing bracket that starts its line visible
    closing_line_start = lines.line_starts[last]
    if source.text[closing_line_start:end].strip() in ("}", "]", ")", '"""', "};"):
        last -= 1
    return (first, last) if last > first else None


def folding_ranges(source: SourceFile) -> list[Fold]:
    """Blocks, multi-line strings and lists, comment runs and include groups (whole lines)."""
    folds: list[Fold] = []
    seen: set[tuple[int, int]] = set()

    def add(start: int, end: int, kind: str | None = None) -> None:
        lines = _fold_lines(source, start, end)
        if lines is not None and lines not in seen:
            seen.add(lines)
            folds.append(Fold(lines[0], lines[1], kind))

    includes: list[t.Include] = []
    for item in source.items:
        if isinstance(item, t.Include):
            includes.append(item)
            continue
        if len(includes) > 1:
            add(includes[0].span.start, includes[-1].span.end + 1, "imports")
        includes = []
        if isinstance(item, t.VersionDecl | t.UseConfig):
            continue
        add(item.span.start, item.span.end)
        for node in t.walk(item):
            if _foldable(node):
                add(node.span.start, node.span.end)
    if len(includes) > 1:
        add(includes[0].span.start, includes[-1].span.end + 1, "imports")
    # comment runs: a block comment over several lines, or consecutive line comments
    run_start: int | None = None
    run_end = 0
    last_line = -2
    lines = source.lines
    for comment in source.comments:
        first, last = lines.line_of(comment.start), lines.line_of(max(comment.start, comment.end - 1))
        if last > first:
            folds.append(Fold(first, last, "comment"))
            continue
        if run_start is not None and first == last_line + 1 and source.text[comment.start : comment.start + 2] == "//":
            run_end = comment.end
        else:
            if run_start is not None:
                _add_comment_run(source, run_start, run_end, folds)
            run_start, run_end = comment.start, comment.end
        last_line = last
    if run_start is not None:
        _add_comment_run(source, run_start, run_end, folds)
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


def _add_comment_run(source: SourceFile, start: int, end: int, folds: list[Fold]) -> None:
    first, last = source.lines.line_of(start), source.lines.line_of(end)
    if last > first:
        folds.append(Fold(first, last, "comment"))


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
