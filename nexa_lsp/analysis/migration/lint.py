"""Migration diagnostics of one source, and the cache that keeps them between edits."""

from __future__ import annotations

import bisect
import dataclasses
import threading
from collections import OrderedDict

from nexa_lsp.analysis.migration.findings import analyse
from nexa_lsp.analysis.migration.plan import plan_migration, to_diagnostic
from nexa_lsp.analysis.migration.rules import nxm001_no_version_declaration
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic, Related, Severity, TextEdit
from nexa_lsp.syntax.source import SourceFile
from nexa_lsp.syntax.tree import Anchor, Span
from nexa_lsp.syntax.version import VersionPath


def migration_diagnostics(source: SourceFile, hints_on_24: bool = True) -> list[Diagnostic]:
    """Lints for the 2.4 -> 3.0 move: hints on the 2.4 path, errors on 3.0 (with the 3.3 run checks).

    The analysis covers the whole file, so its result is cached: an edit that changes
    nothing the lints read (an agent's prompt, role or model, say) reuses the previous
    findings, whose spans are anchored to their chunks and so move with the edit.
    """
    if source.path is VersionPath.COMPAT_24 and not hints_on_24:
        return []
    key = _lint_signature(source, hints_on_24)
    live = {id(chunk.anchor) for chunk in source.chunks}
    with _CACHE_LOCK:
        cached = _LINT_CACHE.get(key)
        if cached is not None and all(id(anchor) in live for anchor in cached[1]):
            _LINT_CACHE.move_to_end(key)
            return list(cached[0])
    found = fresh_migration_diagnostics(source, hints_on_24)
    anchored = _anchored(found, source)
    if anchored is not None:
        with _CACHE_LOCK:
            _LINT_CACHE[key] = anchored
            while len(_LINT_CACHE) > _LINT_CACHE_SIZE:
                _LINT_CACHE.popitem(last=False)
        return list(anchored[0])
    return found


_LINT_CACHE_SIZE = 32
_LINT_CACHE: OrderedDict[tuple[object, ...], tuple[list[Diagnostic], list[Anchor]]] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _lint_signature(source: SourceFile, hints_on_24: bool) -> tuple[object, ...]:
    """Everything the lints read: every chunk's text, except chunks of agents only, which
    count by the parts the analysis uses (uses, implements, return type, memory) and their
    line count (messages name lines)."""
    decl = source.version.declaration
    parts: list[object] = [
        source.path,
        hints_on_24,
        (decl.start, decl.end, decl.version, decl.problem) if decl is not None else None,
        any(d.severity is Severity.ERROR for d in source.diagnostics),
        not source.text.strip(),
    ]
    for chunk in source.chunks:
        if chunk.items and all(isinstance(item, t.AgentDecl) for item in chunk.items):
            parts.append(
                (
                    chunk.text.count("\n"),
                    tuple(
                        (
                            item.name,
                            tuple((u.kind, u.text) for u in item.uses),
                            item.implements,
                            item.return_type,
                            item.text_property("memory"),
                        )
                        for item in chunk.items
                        if isinstance(item, t.AgentDecl)
                    ),
                )
            )
        else:
            parts.append(chunk.text)
    return tuple(parts)


def _anchored(diagnostics: list[Diagnostic], source: SourceFile) -> tuple[list[Diagnostic], list[Anchor]] | None:
    """The diagnostics with spans tied to the chunk they lie in; None when one crosses chunks."""
    starts = [chunk.anchor.base for chunk in source.chunks]
    anchors: dict[int, Anchor] = {}

    def tie(span: Span) -> Span | None:
        index = max(0, bisect.bisect_right(starts, span.start) - 1)
        chunk = source.chunks[index]
        end_of_chunk = chunk.anchor.base + len(chunk.text)
        if span.end > end_of_chunk:
            return None
        anchors[id(chunk.anchor)] = chunk.anchor
        base = chunk.anchor.base
        return Span(span.start - base, span.end - base, chunk.anchor)

    out: list[Diagnostic] = []
    for diag in diagnostics:
        span = tie(diag.span)
        related = [(tie(r.span), r.message) for r in diag.related]
        fixes = []
        for fix in diag.fixes:
            edits = [(tie(e.span), e.new_text) for e in fix.edits]
            if any(sp is None for sp, _ in edits):
                return None
            fixes.append(dataclasses.replace(fix, edits=tuple(TextEdit(sp, text) for sp, text in edits if sp)))
        if span is None or any(sp is None for sp, _ in related):
            return None
        out.append(
            dataclasses.replace(
                diag,
                span=span,
                related=tuple(Related(sp, message) for sp, message in related if sp),
                fixes=tuple(fixes),
            )
        )
    return out, list(anchors.values())


def fresh_migration_diagnostics(source: SourceFile, hints_on_24: bool = True) -> list[Diagnostic]:
    """The migration diagnostics of ``source`` computed from scratch (no cache)."""
    analysis = analyse(source)
    if source.path is VersionPath.NEXA_30:
        return [to_diagnostic(f, source.path) for f in analysis.findings]
    # 2.4 path: the file is valid as it is. A single rewrite would call a method 2.4 does not
    # have, so the hints carry no individual fix; the migrate fix applies them all at once.
    # A file with syntax errors gets no NXM001: those come first (and block migrating).
    out = [to_diagnostic(f, source.path, with_fixes=False) for f in analysis.findings]
    broken = any(d.severity is Severity.ERROR for d in source.diagnostics)
    if source.version.declaration is None and source.text.strip() and not broken:
        plan = plan_migration(source, analysis)
        out.append(nxm001_no_version_declaration.diagnostic(source, plan.blockers, plan.edits))
    return out
