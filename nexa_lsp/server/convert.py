"""Position conversions for ``server/runs.py`` until its conversions move into :mod:`to_lsp`.

Only a re-export: the functions live in :mod:`nexa_lsp.server.to_lsp` and
:mod:`nexa_lsp.server.from_lsp`. Delete this module once ``server/runs`` imports them there.
"""

from nexa_lsp.server.from_lsp import offset, offsets
from nexa_lsp.server.to_lsp import position, to_range

__all__ = ["offset", "offsets", "position", "to_range"]
