"""The text layer: offsets, lines and LSP positions of a text (:mod:`.positions`), and the
text of an open document kept in step with the editor (:mod:`.document`, :mod:`.line_table`)."""

from nexa_lsp.text.document import ContentChange, DocumentText, Range, TextChange, covering
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
    "ContentChange",
    "DocumentText",
    "Encoding",
    "LineIndex",
    "Position",
    "Range",
    "TextChange",
    "break_length",
    "code_points_within",
    "covering",
    "line_starts_of",
    "units_of",
    "utf16_length",
]
