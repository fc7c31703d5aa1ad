"""Reading source files: encoding and size problems become diagnostics, not tracebacks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nexa_lsp.syntax.diagnostics import Diagnostic, Severity
from nexa_lsp.syntax.tree import absolute_span
from nexa_lsp.text import LineIndex

#: Files larger than this are not parsed (a clear diagnostic instead).
MAX_SOURCE_BYTES = 8 * 1024 * 1024
SOURCE_SUFFIXES = (".nx", ".nxlib")


@dataclass(frozen=True, slots=True)
class SourceRead:
    """The text of a file, or why there is none. ``io_error`` means it could not be read at all."""

    path: Path
    text: str | None
    diagnostics: list[Diagnostic]
    io_error: bool = False


def decode_source(data: bytes, max_bytes: int = MAX_SOURCE_BYTES) -> tuple[str | None, list[Diagnostic]]:
    """Decode file bytes as UTF-8 (a BOM is allowed)."""
    if len(data) > max_bytes:
        return None, [
            Diagnostic(
                "NX092",
                f"file too large to check: {len(data):,} bytes (limit {max_bytes:,}); split it into included files",
                absolute_span(0, 0),
                Severity.ERROR,
            )
        ]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        good = data[: err.start].decode("utf-8", errors="replace")
        position = LineIndex(good).position(len(good))
        line, column = position.line + 1, position.character + 1
        return None, [
            Diagnostic(
                "NX090",
                f"file is not UTF-8: byte 0x{data[err.start]:02x} at line {line}, column {column} "
                "cannot be decoded; save the file as UTF-8",
                absolute_span(0, 0),
                Severity.ERROR,
                data={"line": line - 1, "column": column - 1},
            )
        ]
    return text, []


def read_source(path: Path, max_bytes: int = MAX_SOURCE_BYTES) -> SourceRead:
    """Read and decode one source file."""
    try:
        data = path.read_bytes()
    except OSError as err:
        reason = err.strerror or str(err)
        return SourceRead(
            path,
            None,
            [Diagnostic("NX093", f"cannot read file: {reason}", absolute_span(0, 0), Severity.ERROR)],
            io_error=True,
        )
    text, diagnostics = decode_source(data, max_bytes)
    return SourceRead(path, text, diagnostics)


def find_sources(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """Expand folders into their `.nx`/`.nxlib` files (sorted); returns (files, missing)."""
    files: list[Path] = []
    missing: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = [
                p
                for p in path.rglob("*")
                if p.suffix in SOURCE_SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") or part == "node_modules" for part in p.relative_to(path).parts)
            ]
            files.extend(sorted(found))
        elif path.exists():
            files.append(path)
        else:
            missing.append(path)
    seen: set[Path] = set()
    unique = []
    for f in files:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    return unique, missing
