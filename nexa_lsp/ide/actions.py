"""Code actions: diagnostic fixes as quick fixes, fix-all, and file migration.

Every fix is applied to a copy of the text and re-parsed before it is offered:
a fix that would add syntax errors is not offered. Safe fixes are plain quick
fixes; unsafe ones carry "(unsafe)" in their title (the diagnostic's message says why)
and never take part in ``source.fixAll.nexa``. Every title is at most 60 characters, so
the editor's quick-fix menu shows it whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from nexa_lsp.analysis.fixes import apply_edits, apply_fixes, select_fixes
from nexa_lsp.analysis.migration import migrate_source
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Severity, TextEdit
from nexa_lsp.syntax.source import ParsedChunk, SourceFile, parse_source
from nexa_lsp.syntax.tree import Anchor
from nexa_lsp.syntax.version import VersionPath

QUICKFIX = "quickfix"
FIX_ALL = "source.fixAll.nexa"
MIGRATE = "source.migrate.nexa"


@dataclass(frozen=True, slots=True)
class Edit:
    start: int
    end: int
    new_text: str


@dataclass(slots=True)
class ActionData:
    title: str
    kind: str
    edits: list[Edit]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    preferred: bool = False
    command: str | None = None  # run this server command instead of applying edits
    why_unsafe: str | None = None  # for an unsafe fix: why (the title only says "unsafe")


def syntax_errors(source: SourceFile) -> int:
    return sum(1 for d in source.diagnostics if d.severity is Severity.ERROR)


def reparse_after(source: SourceFile, new_text: str) -> SourceFile:
    """Parse ``new_text`` reusing the unchanged chunks of ``source``, without touching ``source``.

    :func:`parse_source` moves the anchors of the chunks it reuses; a shadow copy of
    the chunk list (with its own anchors) keeps the live document's spans intact.
    The result is only good for counting diagnostics, not for positions.
    """
    shadow_chunks = [ParsedChunk(c.text, c.path, Anchor(c.anchor.base), c.items, c.diagnostics) for c in source.chunks]
    shadow = SourceFile(
        source.text, source.path, source.version, source.items, source.diagnostics, source.comments, shadow_chunks
    )
    return parse_source(new_text, shadow)


def still_parses(source: SourceFile, edits: Iterable[TextEdit]) -> tuple[bool, str]:
    """Apply ``edits`` to a copy; True when the result has no more syntax errors than now."""
    try:
        new_text = apply_edits(source.text, edits)
    except ValueError:
        return False, source.text
    return syntax_errors(reparse_after(source, new_text)) <= syntax_errors(source), new_text


#: Longest code action title.
MAX_TITLE = 60


def short_title(title: str) -> str:
    """``title`` cut to :data:`MAX_TITLE` characters."""
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1] + "…"


def fix_title(fix: Fix) -> str:
    """The action title of ``fix``: short, "(unsafe)" at the end of an unsafe one."""
    if fix.safe:
        return short_title(fix.title)
    suffix = " (unsafe)"
    room = MAX_TITLE - len(suffix)
    title = fix.title if len(fix.title) <= room else fix.title[: room - 1] + "…"
    return title + suffix


def _edits(fix_edits: Iterable[TextEdit]) -> list[Edit]:
    return [Edit(e.span.start, e.span.end, e.new_text) for e in fix_edits]


def _overlaps(d: Diagnostic, start: int, end: int) -> bool:
    return d.span.start <= end and start <= d.span.end


def quick_fixes(source: SourceFile, diagnostics: Iterable[Diagnostic], start: int, end: int) -> list[ActionData]:
    """One action per fix of each diagnostic touching ``[start, end]``."""
    out: list[ActionData] = []
    for diag in diagnostics:
        if not diag.fixes or not _overlaps(diag, start, end):
            continue
        safe_count = sum(1 for f in diag.fixes if f.safe)
        for fix in diag.fixes:
            ok, _text = still_parses(source, fix.edits)
            if not ok:
                continue
            out.append(
                ActionData(
                    fix_title(fix),
                    QUICKFIX,
                    _edits(fix.edits),
                    [diag],
                    preferred=fix.safe and safe_count == 1,
                    why_unsafe=None if fix.safe else fix.why_unsafe,
                )
            )
    out.sort(key=lambda a: (not a.preferred, "(unsafe" in a.title))
    return out


def fix_all(source: SourceFile, diagnostics: Iterable[Diagnostic]) -> ActionData | None:
    """All safe fixes at once (``source.fixAll.nexa``); fixes that would break the file are left out."""
    chosen = select_fixes(diagnostics, unsafe=False)
    if not chosen:
        return None
    outcome = apply_fixes(source.text, chosen)
    applied = outcome.applied
    if syntax_errors(reparse_after(source, outcome.text)) > syntax_errors(source):
        applied = [(d, f) for d, f in applied if still_parses(source, f.edits)[0]]
        if not applied:
            return None
        outcome = apply_fixes(source.text, applied)
        if syntax_errors(reparse_after(source, outcome.text)) > syntax_errors(source):
            return None
        applied = outcome.applied
    edits = [e for _d, f in applied for e in f.edits]
    count = len(applied)
    title = f"Fix all safe Nexa problems ({count} fix{'es' if count != 1 else ''})"
    return ActionData(title, FIX_ALL, _edits(edits), [d for d, _f in applied])


@dataclass(frozen=True, slots=True)
class Blocker:
    """One finding that keeps a file from migrating, with where it is."""

    code: str
    start: int
    end: int
    message: str


@dataclass(frozen=True, slots=True)
class MigrationPlan:
    """What "Migrate this file to Nexa 3.0" would do: the edits, or the codes that block it
    (``blocked_by`` has each blocker with its location)."""

    edits: list[Edit] | None
    blockers: list[str]
    available: bool = True  # kept for the server, which still asks
    blocked_by: list[Blocker] = field(default_factory=list)


def migration_plan(source: SourceFile, includes: IncludeResolver | None = None) -> MigrationPlan:
    """Ask the migration lints (``migrate_source``) how this file moves to Nexa 3.0; pass
    ``includes`` so included agents and tools count, as in the diagnostics."""
    result = migrate_source(source.text, source, includes)
    if not result.migrated:
        blocked_by = [Blocker(d.code, d.span.start, d.span.end, d.message) for d in result.blockers]
        return MigrationPlan(None, sorted({d.code for d in result.blockers}), blocked_by=blocked_by)
    return MigrationPlan([Edit(e.span.start, e.span.end, e.new_text) for e in result.edits], [])


def migrate_action(source: SourceFile, plan: MigrationPlan | None) -> ActionData | None:
    """ "Migrate this file to Nexa 3.0" for a 2.4 file that migrates cleanly."""
    if plan is None or plan.edits is None or source.path is VersionPath.NEXA_30:
        return None
    return ActionData("Migrate this file to Nexa 3.0", MIGRATE, plan.edits)


def code_actions(
    source: SourceFile,
    diagnostics: list[Diagnostic],
    start: int,
    end: int,
    only: Iterable[str] | None = None,
    migration: Callable[[], MigrationPlan | None] | None = None,
) -> list[ActionData]:
    """The actions for the range ``[start, end]``, filtered by the requested kinds."""
    wanted = list(only) if only else None

    def allowed(kind: str) -> bool:
        return wanted is None or any(kind == w or kind.startswith(w + ".") for w in wanted)

    out: list[ActionData] = []
    if allowed(QUICKFIX):
        out.extend(quick_fixes(source, diagnostics, start, end))
    if allowed(FIX_ALL):
        action = fix_all(source, diagnostics)
        if action is not None:
            out.append(action)
    if allowed(MIGRATE) and migration is not None and source.path is not VersionPath.NEXA_30:
        action = migrate_action(source, migration())
        if action is not None:
            out.append(action)
    return out
