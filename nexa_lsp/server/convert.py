"""Offsets (code points) <-> LSP positions (UTF-16), through :class:`nexa_lsp.text.LineIndex` only."""

from __future__ import annotations

from lsprotocol import types as lsp

from nexa_lsp.text import LineIndex


def position(lines: LineIndex, offset: int) -> lsp.Position:
    pos = lines.utf16_position(offset)
    return lsp.Position(line=pos.line, character=pos.character)


def to_range(lines: LineIndex, start: int, end: int) -> lsp.Range:
    return lsp.Range(start=position(lines, start), end=position(lines, max(start, end)))


def offset(lines: LineIndex, pos: lsp.Position) -> int:
    return lines.offset_of_utf16(pos.line, pos.character)


def offsets(lines: LineIndex, rng: lsp.Range) -> tuple[int, int]:
    return offset(lines, rng.start), offset(lines, rng.end)
