"""How analysis reaches other files (``include``) without knowing where text lives.

The CLI reads from disk; the language server answers from open documents first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nexa_lsp.syntax.source import SourceFile

#: ``(include path as written, path of the including file or None) -> parsed file or None``
IncludeResolver = Callable[[str, Path | None], SourceFile | None]


def include_candidates(include: str, including_file: Path | None) -> list[Path]:
    """Where 2.x looks for an include: next to the including file, then ``stdlib/``."""
    base = including_file.parent if including_file is not None else Path.cwd()
    candidates = [base / include, base / "stdlib" / include]
    if include.startswith("stdlib/"):
        candidates.append(base / "stdlib" / include.removeprefix("stdlib/"))
    return candidates
