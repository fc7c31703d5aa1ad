"""Document links: `include "..."` and the file entries of `uses` (`uses "x.nxs"`,
`uses "skills/x.md"`), each to the file it names.

Targets are found the way includes are resolved
(:func:`nexa_lsp.analysis.workspace.include_candidates`: next to the including
file, then in the ``stdlib/`` folders above it); a path that names no existing
file gets no link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nexa_lsp.analysis.workspace import include_candidates
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import SourceFile


@dataclass(frozen=True, slots=True)
class LinkData:
    """A link over ``[start, end)`` (the path inside the quotes) to ``target``."""

    start: int
    end: int
    target: Path
    tooltip: str


def document_links(
    source: SourceFile, path: Path | None, exists: Callable[[Path], bool] = Path.is_file
) -> list[LinkData]:
    """Links of a document saved at ``path`` (none for an unsaved document: nothing to resolve against)."""
    if path is None:
        return []
    links: list[LinkData] = []
    for item in source.items:
        if isinstance(item, t.Include) and item.name:
            _add(links, item.name, item.name_span, path, exists, "include")
        elif isinstance(item, t.AgentDecl):
            for use in item.uses:
                if use.kind == "skill" and use.text:
                    _add(links, use.text, use.span, path, exists, "uses")
    return links


def _add(
    links: list[LinkData], written: str, quoted: t.Span, path: Path, exists: Callable[[Path], bool], what: str
) -> None:
    target = next((candidate for candidate in include_candidates(written, path) if exists(candidate)), None)
    if target is None:
        return
    start, end = quoted.start, quoted.end
    if end - start >= 2:
        start, end = start + 1, end - 1  # inside the quotes
    links.append(LinkData(start, end, target, f"{what} {written}: {target}"))
