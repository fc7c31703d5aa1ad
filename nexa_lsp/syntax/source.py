"""Parsing a whole source: version scan, chunks, recovery, typed items, diagnostics.

:func:`parse_source` is the entry point of the syntax layer. Given the previous
:class:`SourceFile` of the same document it re-parses only the chunks whose
text changed and moves the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.builder import build_chunk
from nexa_lsp.syntax.chunks import ChunkLayout, Comment, layout_chunks
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from nexa_lsp.syntax.grammar import parser_for
from nexa_lsp.syntax.recovery import WHERE, parse_chunk
from nexa_lsp.syntax.tree import Anchor, Span, absolute_span
from nexa_lsp.syntax.version import SUPPORTED_VERSIONS, VersionPath, VersionScan, scan_version
from nexa_lsp.text import LineIndex

MAX_SYNTAX_ERRORS = 100


@dataclass(slots=True)
class ParsedChunk:
    """One chunk's parse, reusable while its text is unchanged.

    ``positioned`` lists the diagnostics whose message names a document position:
    ``(index in diagnostics, chunk offset)``; their stored message holds
    :data:`~nexa_lsp.syntax.recovery.WHERE`, replaced by the offset's current
    `line:column` whenever the chunk is part of a parse (see :func:`parse_source`).
    """

    text: str
    path: VersionPath
    anchor: Anchor
    items: list[t.TopItem]
    diagnostics: list[Diagnostic]
    syntax_error_count: int = 0
    positioned: tuple[tuple[int, int], ...] = ()

    def current_diagnostics(self, position_text: Callable[[int], str]) -> list[Diagnostic]:
        """The diagnostics with positions in messages rendered for the chunk's current place."""
        if not self.positioned:
            return self.diagnostics
        out = list(self.diagnostics)
        for index, offset in self.positioned:
            diag = out[index]
            out[index] = replace(diag, message=diag.message.replace(WHERE, position_text(self.anchor.base + offset)))
        return out


@dataclass(slots=True)
class SourceFile:
    """Everything the syntax layer knows about one version of a document."""

    text: str
    path: VersionPath
    version: VersionScan
    items: list[t.TopItem]
    diagnostics: list[Diagnostic]
    comments: list[Comment]
    chunks: list[ParsedChunk]
    reused_chunks: int = 0
    _lines: LineIndex | None = field(default=None, repr=False)
    _layout: ChunkLayout | None = field(default=None, repr=False)

    @property
    def lines(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines

    def declarations(self) -> list[t.TopItem]:
        """Named top-level declarations (not version / include / use / statements)."""
        return [
            i for i in self.items if not isinstance(i, t.VersionDecl | t.Include | t.UseConfig | t.TopLevelStatement)
        ]


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + "".join(c if c in "\r\n" else " " for c in text[start:end]) + text[end:]


def parse_source(text: str, previous: SourceFile | None = None) -> SourceFile:
    """Parse ``text``; pass the document's previous parse to reuse unchanged chunks."""
    scan = scan_version(text)
    body = text
    if body.startswith("\ufeff"):
        body = " " + body[1:]
    if body.startswith("#!"):
        newline = min((i for i in (body.find("\n"), body.find("\r")) if i != -1), default=len(body))
        body = _blank(body, 0, newline)
    if scan.declaration is not None:
        body = _blank(body, scan.declaration.start, scan.declaration.end)
    line_index: list[LineIndex] = []  # built only if a message needs a position

    def position_text(offset: int) -> str:
        if not line_index:
            line_index.append(LineIndex(text))
        pos = line_index[0].position(offset)
        return f"{pos.line + 1}:{pos.character + 1}"

    parser = parser_for(scan.path)
    reusable: dict[str, list[ParsedChunk]] = {}
    if previous is not None:
        for old in previous.chunks:
            if old.path is scan.path:
                reusable.setdefault(old.text, []).append(old)
    layout = layout_chunks(body, previous._layout if previous is not None else None)
    chunk_ranges, comments = layout.chunks, layout.comments
    chunks: list[ParsedChunk] = []
    reused = 0
    for rng in chunk_ranges:
        chunk_text = body[rng.start : rng.end]
        candidates = reusable.get(chunk_text)
        if candidates:
            old = candidates.pop()
            old.anchor.base = rng.start
            chunks.append(old)
            reused += 1
            continue
        anchor = Anchor(rng.start)
        parsed = parse_chunk(parser, chunk_text)
        diagnostics = [
            Diagnostic(
                p.code,
                p.message,
                Span(p.start, max(p.end, p.start), anchor),
                Severity.ERROR,
                related=tuple(Related(Span(a, b, anchor), m) for a, b, m in p.related),
            )
            for p in parsed.problems
        ]
        positioned = tuple((i, p.where) for i, p in enumerate(parsed.problems) if p.where is not None)
        items, built = build_chunk(parsed.tree, chunk_text, anchor, scan.path)
        chunks.append(
            ParsedChunk(chunk_text, scan.path, anchor, items, diagnostics + built, parsed.total_errors, positioned)
        )
    items = [item for chunk in chunks for item in chunk.items]
    diagnostics = _version_diagnostics(text, scan, items)
    syntax_count = 0
    shown = 0
    for chunk in chunks:
        syntax_count += max(chunk.syntax_error_count, sum(1 for d in chunk.diagnostics if d.severity is Severity.ERROR))
        for diag in chunk.current_diagnostics(position_text):
            if diag.severity is Severity.ERROR:
                shown += 1
                if shown > MAX_SYNTAX_ERRORS:
                    continue
            diagnostics.append(diag)
    if syntax_count > MAX_SYNTAX_ERRORS:
        diagnostics.append(
            Diagnostic(
                "NX005",
                f"{syntax_count} syntax errors; showing the first {MAX_SYNTAX_ERRORS}",
                absolute_span(0, 0),
                Severity.INFORMATION,
            )
        )
    diagnostics.extend(_order_diagnostics(items))
    if not text.strip():
        diagnostics.append(
            Diagnostic(
                "NX091",
                "the file is empty (an empty Nexa source is valid and declares nothing)",
                absolute_span(0, 0),
                Severity.INFORMATION,
            )
        )
    diagnostics = _dedupe(diagnostics)
    diagnostics.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    return SourceFile(
        text,
        scan.path,
        scan,
        items,
        diagnostics,
        comments,
        chunks,
        reused,
        line_index[0] if line_index else None,
        layout,
    )


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, int, int]] = set()
    out = []
    for diag in diagnostics:
        key = (diag.code, diag.span.start, diag.span.end)
        if key not in seen:
            seen.add(key)
            out.append(diag)
    return out


def _version_diagnostics(text: str, scan: VersionScan, items: list[t.TopItem]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    decl = scan.declaration
    supported = " or ".join(f"`nexa {v};`" for v in SUPPORTED_VERSIONS)
    if decl is not None and decl.problem == "unsupported":
        out.append(
            Diagnostic(
                "NX010",
                f"Nexa {decl.version} is not a supported version: write {supported}; "
                "this file is checked on the 2.4 compatibility path meanwhile",
                absolute_span(decl.version_start, decl.version_end),
                Severity.ERROR,
            )
        )
    elif decl is not None and decl.problem == "malformed":
        shown = decl.version or "nothing"
        out.append(
            Diagnostic(
                "NX013",
                f"malformed version declaration: expected `nexa MAJOR.MINOR;` ({supported}), found {shown}",
                absolute_span(decl.start, decl.end),
                Severity.ERROR,
            )
        )
    for item in items:
        if not isinstance(item, t.VersionDecl):
            continue
        span = item.span
        remove = Fix("Remove this declaration", (TextEdit(span, ""),))
        if decl is not None:
            out.append(
                Diagnostic(
                    "NX012",
                    "a second version declaration: a file declares its version once, as its first statement",
                    span,
                    Severity.ERROR,
                    (remove,),
                    (Related(absolute_span(decl.start, decl.end), "the file's version declaration"),),
                )
            )
        else:
            out.append(
                Diagnostic(
                    "NX011",
                    "the version declaration must be the first statement of the file (only comments and "
                    "blank lines may come before it); this file is checked on the 2.4 compatibility path",
                    span,
                    Severity.ERROR,
                    (remove,),
                )
            )
    return out


def _order_diagnostics(items: list[t.TopItem]) -> list[Diagnostic]:
    """`include`s first, then `use config`s, then declarations."""
    out: list[Diagnostic] = []
    stage = 0
    for item in items:
        if isinstance(item, t.VersionDecl):
            continue
        if isinstance(item, t.Include):
            if stage > 0:
                out.append(
                    Diagnostic("NX030", "`include` must come before `use config` and all declarations", item.span)
                )
        elif isinstance(item, t.UseConfig):
            if stage > 1:
                out.append(
                    Diagnostic(
                        "NX030",
                        "`use config` must come after the includes and before all declarations",
                        item.span,
                    )
                )
            stage = max(stage, 1)
        else:
            stage = 2
    return out
