"""NXM001: no version declaration.

## What it does
Reports, on the first line, a file without a version declaration: it follows the 2.4
compatibility path. The message says whether the whole file migrates automatically and,
when it does not, how many findings block it and where the first one is, and links each
blocker (up to 100) with its location as related information. Not shown for
empty files or files with syntax errors. The same code names the blocker "nested too
deeply to analyse".

## Why is this bad?
Nothing is wrong: the file is valid 2.4. But on 2.4 a run returns text and each agent's
history is shared implicitly between runs; Nexa 3.0 makes runs values with explicit
entries (`execute`, `continue`, `resume`) and enforces tool approvals. The finding says
which path the file is on, so nobody is surprised.

## Example
```nexa
agent A { prompt: "p" }   // line 1: this file follows the 2.4 compatibility path
```

Use instead:
```nexa
nexa 3.0;
agent A { prompt: "p" }
```

## Fix safety
"Migrate this file to Nexa 3.0" inserts `nexa 3.0;` after a `#!` line and the leading
comment block (license, description), and applies every safe rewrite at once; the result
is re-parsed on the 3.0 path and re-checked. It is offered only when the whole file
migrates, and always as an unsafe fix: the file as a whole moves to the 3.0 contract
(declared tool approvals start to apply), so review it.
"""

from __future__ import annotations

from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Fix, Related, Severity, TextEdit
from nexa_lsp.syntax.source import SourceFile
from nexa_lsp.syntax.tree import Span, absolute_span

CODE = "NXM001"
INFO = CodeInfo("no version declaration: the file follows the 2.4 compatibility path", Severity.HINT, "migration")

MIGRATE_TITLE = "Migrate this file to Nexa 3.0"
#: At most this many blockers are linked from the finding (each is its own diagnostic too).
RELATED_LIMIT = 100


def first_line_span(text: str) -> Span:
    start = 1 if text.startswith("\ufeff") else 0
    end = text.find("\n", start)
    end = len(text) if end == -1 else end
    if end > start and text[end - 1] == "\r":
        end -= 1
    return absolute_span(start, end)


def diagnostic(
    source: SourceFile,
    blockers: list[Diagnostic],
    edits: list[TextEdit],
    severity: Severity = Severity.HINT,
    ordered: bool = False,
) -> Diagnostic:
    """NXM001 for ``source``: with the migrate fix (``edits``, ``ordered`` when already
    stably sorted by start) unless ``blockers`` stop it."""
    message = (
        "no version declaration: this file follows the Nexa 2.4 compatibility path (a run returns "
        "text and each agent's history is shared implicitly between runs). Nexa 3.0 makes runs values "
        "with explicit entries (`execute`, `continue`, `resume`) and enforces tool approvals; migrate "
        f'with `nexa-lsp check --migrate` or the "{MIGRATE_TITLE}" action'
    )
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    if blockers:
        first = blockers[0]
        line = source.lines.line_of(first.span.start) + 1
        count = len(blockers)
        message += (
            f". Automatic migration is blocked by {count} finding{'s' if count != 1 else ''} that "
            f"need{'s' if count == 1 else ''} a manual change (first: line {line}, {first.code})"
        )
        related = tuple(
            Related(b.span, f"blocks the migration: {b.code} {_clip(b.message)}") for b in blockers[:RELATED_LIMIT]
        )
    else:
        fixes = (
            Fix(
                MIGRATE_TITLE,
                tuple(edits) if ordered else tuple(sorted(edits, key=lambda e: e.span.start)),
                safe=False,
                why_unsafe="moves the whole file to the Nexa 3.0 path (runs become values, declared tool "
                "approvals start to apply); every rewrite in it keeps the meaning, but review the result "
                "as a whole",
            ),
        )
    return Diagnostic(CODE, message, first_line_span(source.text), severity, fixes, related)


def _clip(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
