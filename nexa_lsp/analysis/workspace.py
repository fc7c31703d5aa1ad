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
    """Where 2.x looks for an include: next to the including file, then in a ``stdlib/``
    folder (the 2.x CLI used the one of the folder it ran in; we look in the including
    file's folder and each folder above it, nearest first)."""
    base = including_file.parent if including_file is not None else Path.cwd()
    candidates = [base / include]
    stripped = include.removeprefix("stdlib/")
    for folder in [base, *list(base.parents)[:10]]:
        candidates.append(folder / "stdlib" / stripped)
        if stripped != include:
            candidates.append(folder / include)
    return candidates
