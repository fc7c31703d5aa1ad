"""The diagnostics of a whole source that no single chunk can decide.

The version declaration (unsupported, malformed, misplaced, repeated), the order
of ``include`` and ``use config``, the cap on syntax errors and the empty file.
They read only the chunks that have diagnostics or header items, so a parse
after an edit does not visit every item of the file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from nexa_lsp.syntax.tree import absolute_span
from nexa_lsp.syntax.version import SUPPORTED_VERSIONS, VersionScan

if TYPE_CHECKING:
    from nexa_lsp.syntax.source import ParsedChunk

MAX_SYNTAX_ERRORS = 100


def file_diagnostics(
    text: str,
    scan: VersionScan,
    problem_chunks: list[ParsedChunk],
    header_chunks: list[ParsedChunk],
    first_declaration: int | None,
    position_text: Callable[[int], str],
) -> list[Diagnostic]:
    """Every syntax diagnostic of a source, sorted: the chunks' own (from ``problem_chunks``,
    the chunks that have any, in order) and the file-wide ones."""
    headers = [item for chunk in header_chunks for item in chunk.items]
    diagnostics = _version_diagnostics(text, scan, headers)
    syntax_count = 0
    shown = 0
    for chunk in problem_chunks:
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
    diagnostics.extend(_order_diagnostics(headers, first_declaration))
    if not text or text.isspace():
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
    return diagnostics


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, int, int]] = set()
    out = []
    for diag in diagnostics:
        key = (diag.code, diag.span.start, diag.span.end)
        if key not in seen:
            seen.add(key)
            out.append(diag)
    return out


def _version_diagnostics(text: str, scan: VersionScan, headers: list[t.TopItem]) -> list[Diagnostic]:
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
    for item in headers:
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


def _order_diagnostics(headers: list[t.TopItem], first_declaration: int | None) -> list[Diagnostic]:
    """`include`s first, then `use config`s, then declarations."""
    out: list[Diagnostic] = []
    seen_use = False
    for item in headers:
        after_declaration = first_declaration is not None and first_declaration < item.span.start
        if isinstance(item, t.Include):
            if after_declaration or seen_use:
                out.append(
                    Diagnostic("NX030", "`include` must come before `use config` and all declarations", item.span)
                )
        elif isinstance(item, t.UseConfig):
            if after_declaration:
                out.append(
                    Diagnostic(
                        "NX030",
                        "`use config` must come after the includes and before all declarations",
                        item.span,
                    )
                )
            seen_use = True
    return out
