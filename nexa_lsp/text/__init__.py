"""The text layer: offsets, lines and LSP positions of a text (:mod:`.positions`)."""

from nexa_lsp.text.positions import (
    Encoding,
    LineIndex,
    Position,
    break_length,
    code_points_within,
    line_starts_of,
    units_of,
    utf16_length,
)

__all__ = [
    "Encoding",
    "LineIndex",
    "Position",
    "break_length",
    "code_points_within",
    "line_starts_of",
    "units_of",
    "utf16_length",
]
