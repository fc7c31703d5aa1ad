"""Helpers for IDE feature tests: sources with a cursor mark, and in-memory includes."""

from __future__ import annotations

from pathlib import Path

from nexa_lsp.analysis.symbols import Analysis, analyze
from nexa_lsp.syntax.source import SourceFile, parse_source

CURSOR = "‸"

#: A small program used by several tests (2.4 path).
PROGRAM = """include "lib.nxlib";

protocol Report {
    title: str,
    score: float
}

tool Lookup { description: "Find a record by id", parameters: {"id": "string", "limit": "number"} }

agent Analyst uses Lookup, Formatter implements Report {
    role: "Careful analyst",
    model: "scripted/demo",
    prompt: "Look the record up and score it. 请用中文回答。",
    memory: persistent
}

flow main(topic: str) {
    draft = Analyst.run(topic)
    print(draft.title)
    final = draft >> Analyst
    print("#{final}")
}
"""

LIB = """agent Formatter {
    prompt: "Format the text."
}

flow tidy(text: str) {
    out = Formatter.run(text)
    print(out)
}
"""


def split_cursor(text: str) -> tuple[str, int]:
    """Remove the cursor mark; returns the text and the mark's offset."""
    offset = text.index(CURSOR)
    return text.replace(CURSOR, "", 1), offset


class MemoryFiles:
    """Included files kept in memory, parsed once each (like the server's store)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.sources = {name: parse_source(text) for name, text in files.items()}

    def __call__(self, include: str, including: Path | None) -> tuple[Path | None, SourceFile | None]:
        source = self.sources.get(include)
        return (Path("/ws") / include, source) if source is not None else (None, None)


def analysed(text: str, includes: dict[str, str] | None = None, files: MemoryFiles | None = None) -> Analysis:
    files = files if files is not None else MemoryFiles(includes or {})
    return analyze(parse_source(text), Path("/ws/main.nx"), files)


def at(text: str, needle: str, delta: int = 0) -> int:
    return text.index(needle) + delta
