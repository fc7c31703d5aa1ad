"""Migration status and migration of a whole set of files (issue 14 item 2, analysis part).

Pure functions over file texts: :func:`workspace_status` says of every file whether it is
``ready`` (migrates automatically and safely), ``blocked`` (each blocker with its code,
range and message) or ``done`` (already on the 3.0 path), with counts;
:func:`migrate_workspace` gives the new text of every ready file and leaves the others
alone. Both decide alike, like ``cargo fix --edition``: every ready file is migrated, then
every migrated file is checked again with the migrated workspace (its includes migrated
too); a file that would have more errors than before is backed out and reported blocked.
Migrating the result again changes nothing.

A :class:`StatusCache` passed to either keeps each file's parse, migration plan and error
check, reused while the file's text, the texts of the files it includes and the settings
stay the same, so asking again about an unchanged workspace parses and checks nothing.

``as_json`` gives the form the server's ``nexa/migrationStatus`` request and the CLI
(``--migrate --dry-run --format json``) send: ranges are zero-based lines with UTF-16
characters, as LSP counts them; only the file names are converted by the caller.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexa_lsp.analysis.engine import CheckSettings, check_source
from nexa_lsp.analysis.migration.plan import MigrationResult, migrate_source, original_offset
from nexa_lsp.analysis.workspace import IncludeResolver, include_candidates
from nexa_lsp.syntax.diagnostics import Diagnostic, Severity, TextEdit
from nexa_lsp.syntax.source import SourceFile, parse_source
from nexa_lsp.syntax.version import VersionPath
from nexa_lsp.text import LineIndex

READY, BLOCKED, DONE = "ready", "blocked", "done"
STATES = (READY, BLOCKED, DONE)
_ROUNDS = 5  # backing out one file can change what the files including it see


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # zero-based
    character: int  # UTF-16 code units, as LSP counts them


@dataclass(frozen=True, slots=True)
class Blocker:
    """Why a file does not migrate automatically: a finding at a range of the file."""

    code: str
    message: str
    start: Position
    end: Position
    start_offset: int = 0  # code points into the file's text
    end_offset: int = 0


@dataclass(frozen=True, slots=True)
class Edit:
    """One replacement of the original text (offsets in code points, range in LSP terms)."""

    start_offset: int
    end_offset: int
    start: Position
    end: Position
    new_text: str


@dataclass(frozen=True, slots=True)
class FileStatus:
    """One file's migration state; ``edits`` turn it into ``new_text`` (ready files only)."""

    path: Path
    state: str  # ready | blocked | done
    blockers: tuple[Blocker, ...] = ()
    rewrites: int = 0  # rewrites besides the version declaration (ready files)
    notes: tuple[str, ...] = ()
    edits: tuple[Edit, ...] = ()
    new_text: str | None = None

    def as_json(self, name: Callable[[Path], str] = str) -> dict[str, Any]:
        return {
            "path": name(self.path),
            "state": self.state,
            "blockers": [
                {"code": b.code, "message": b.message, "range": _range_json(b.start, b.end)} for b in self.blockers
            ],
            "rewrites": self.rewrites,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class WorkspaceStatus:
    files: tuple[FileStatus, ...]

    @property
    def counts(self) -> dict[str, int]:
        counted = Counter(f.state for f in self.files)
        return {state: counted.get(state, 0) for state in STATES}

    def of(self, state: str) -> list[FileStatus]:
        return [f for f in self.files if f.state == state]

    def as_json(self, name: Callable[[Path], str] = str) -> dict[str, Any]:
        return {"files": [f.as_json(name) for f in self.files], "counts": self.counts}


#: What a file's result was computed from besides its own text: each include it asked for
#: and the text of the file that include found (None: not found).
_Deps = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class _Entry:
    deps: _Deps
    value: Any


class StatusCache:
    """Per-file results of :func:`workspace_status` / :func:`migrate_workspace`, keyed by
    content (see the module docstring). Not thread-safe: one status at a time."""

    def __init__(self) -> None:
        self._parses: dict[str, SourceFile] = {}
        self._entries: dict[tuple[str, Path, str], list[_Entry]] = {}
        self._settings: CheckSettings | None = None
        self._seen: set[str] = set()
        self.computed = 0  # plans and checks computed (not taken from the cache)

    def start(self, settings: CheckSettings) -> None:
        """Begin one status: results under other settings are dropped."""
        if self._settings != settings:
            self._entries.clear()
            self._settings = settings
        self._seen = set()

    def finish(self) -> None:
        """End one status: keep only the parses and results of the texts it read (so
        the cache does not grow with every edit of a long session)."""
        self._parses = {text: src for text, src in self._parses.items() if text in self._seen}
        self._entries = {key: found for key, found in self._entries.items() if key[2] in self._seen}

    def __len__(self) -> int:
        return sum(len(found) for found in self._entries.values())

    def parse(self, text: str) -> SourceFile:
        self._seen.add(text)
        found = self._parses.get(text)
        if found is None:
            found = self._parses[text] = parse_source(text)
        return found

    def get(self, kind: str, path: Path, text: str, resolve: IncludeResolver) -> tuple[bool, Any]:
        for entry in self._entries.get((kind, path, text), ()):
            if all(_text_of(resolve(include, path)) == dep for include, dep in entry.deps):
                return True, entry.value
        return False, None

    def put(self, kind: str, path: Path, text: str, deps: _Deps, value: Any) -> None:
        entries = self._entries.setdefault((kind, path, text), [])
        entries.insert(0, _Entry(deps, value))
        del entries[4:]  # e.g. the check before and after migrating the files it includes
        self.computed += 1


def _text_of(source: SourceFile | None) -> str | None:
    return source.text if source is not None else None


@dataclass(eq=False)
class _Workspace:
    """The texts of the files, parsed on demand, with includes resolved among them."""

    texts: dict[Path, str]
    read_outside: Callable[[Path], str | None] | None
    settings: CheckSettings
    cache: StatusCache | None = None
    _parsed: dict[Path, SourceFile | None] = field(default_factory=dict)

    def source(self, path: Path) -> SourceFile | None:
        if path not in self._parsed:
            text = self.texts.get(path)
            if text is None and self.read_outside is not None:
                text = self.read_outside(path)
            if text is None:
                self._parsed[path] = None
            else:
                self._parsed[path] = self.cache.parse(text) if self.cache is not None else parse_source(text)
        return self._parsed[path]

    def resolver(self, including: Path) -> IncludeResolver:
        def resolve(include: str, _including: Path | None) -> SourceFile | None:
            for candidate in include_candidates(include, including):
                key = Path(os.path.normpath(candidate))
                if key in self.texts or self.read_outside is not None:
                    found = self.source(key)
                    if found is not None:
                        return found
            return None

        return resolve

    def cached(self, kind: str, path: Path, compute: Callable[[SourceFile, IncludeResolver], Any]) -> Any:
        """``compute(source, includes)`` for the file at ``path``, from the cache when its
        text and the texts its includes resolve to are unchanged."""
        source = self.source(path)
        assert source is not None
        resolve = self.resolver(path)
        if self.cache is None:
            return compute(source, resolve)
        hit, value = self.cache.get(kind, path, source.text, resolve)
        if hit:
            return value
        deps: list[tuple[str, str | None]] = []

        def recording(include: str, including: Path | None) -> SourceFile | None:
            found = resolve(include, including)
            deps.append((include, _text_of(found)))
            return found

        value = compute(source, recording)
        self.cache.put(kind, path, source.text, tuple(deps), value)
        return value

    def errors(self, path: Path) -> list[Diagnostic]:
        if self.source(path) is None:
            return []

        def check(source: SourceFile, includes: IncludeResolver) -> list[Diagnostic]:
            found = check_source(source, includes, self.settings)
            return [d for d in found if d.severity is Severity.ERROR]

        errors: list[Diagnostic] = self.cached("errors", path, check)
        return errors


def _position(lines: LineIndex, offset: int) -> Position:
    pos = lines.utf16_position(offset)
    return Position(pos.line, pos.character)


def _range_json(start: Position, end: Position) -> dict[str, Any]:
    return {
        "start": {"line": start.line, "character": start.character},
        "end": {"line": end.line, "character": end.character},
    }


def _blocker(d: Diagnostic, lines: LineIndex) -> Blocker:
    start, end = d.span.start, d.span.end
    return Blocker(d.code, d.message, _position(lines, start), _position(lines, end), start, end)


def _ready(path: Path, text: str, result: MigrationResult) -> FileStatus:
    lines = LineIndex(text)
    edits = tuple(
        Edit(e.span.start, e.span.end, _position(lines, e.span.start), _position(lines, e.span.end), e.new_text)
        for e in result.edits
    )
    return FileStatus(path, READY, (), len(result.applied), result.notes, edits, result.text)


def _new_errors(before: list[Diagnostic], after: list[Diagnostic]) -> list[Diagnostic]:
    """The errors of ``after`` beyond as many of each code as ``before`` had."""
    allowed = Counter(d.code for d in before)
    out = []
    for d in after:
        if allowed[d.code] > 0:
            allowed[d.code] -= 1
        else:
            out.append(d)
    return out


def _plan(
    texts: Mapping[Path, str],
    read_outside: Callable[[Path], str | None] | None,
    settings: CheckSettings | None,
    cache: StatusCache | None,
) -> WorkspaceStatus:
    settings = settings or CheckSettings()
    if cache is not None:
        cache.start(settings)
    try:
        return _decide({Path(os.path.normpath(p)): text for p, text in texts.items()}, read_outside, settings, cache)
    finally:
        if cache is not None:
            cache.finish()


def _migrate(text: str) -> Callable[[SourceFile, IncludeResolver], MigrationResult]:
    return lambda source, includes: migrate_source(text, source, includes)


def _decide(
    texts: dict[Path, str],
    read_outside: Callable[[Path], str | None] | None,
    settings: CheckSettings,
    cache: StatusCache | None,
) -> WorkspaceStatus:
    paths = list(texts)
    original = _Workspace(dict(texts), read_outside, settings, cache)
    statuses: dict[Path, FileStatus] = {}
    rewrites: dict[Path, tuple[TextEdit, ...]] = {}
    for path in paths:
        text = texts[path]
        source = original.source(path)
        assert source is not None
        if source.path is VersionPath.NEXA_30:
            statuses[path] = FileStatus(path, DONE)
            continue
        result: MigrationResult = original.cached("plan", path, _migrate(text))
        if result.migrated:
            statuses[path] = _ready(path, text, result)
            rewrites[path] = result.edits
        elif not result.blocked:  # nothing to change
            statuses[path] = FileStatus(path, DONE, notes=result.notes)
        else:
            lines = LineIndex(text)
            statuses[path] = FileStatus(path, BLOCKED, tuple(_blocker(d, lines) for d in result.blockers))
    for _round in range(_ROUNDS):
        ready = [p for p in paths if statuses[p].state == READY]
        if not ready:
            break
        migrated = dict(texts)
        for path in ready:
            migrated[path] = statuses[path].new_text or texts[path]
        after = _Workspace(migrated, read_outside, settings, cache)
        backed_out = False
        for path in ready:
            new = _new_errors(original.errors(path), after.errors(path))
            if not new:
                continue
            backed_out = True
            lines = LineIndex(texts[path])
            blockers = []
            for d in new:
                offset = original_offset(d.span.start, rewrites[path])
                at = _position(lines, offset)
                message = f"migrating would add this error, so the file is left unchanged: {d.message}"
                blockers.append(Blocker(d.code, message, at, at, offset, offset))
            statuses[path] = FileStatus(path, BLOCKED, tuple(blockers))
        if not backed_out:
            break
    return WorkspaceStatus(tuple(statuses[p] for p in paths))


def workspace_status(
    texts: Mapping[Path, str],
    read_outside: Callable[[Path], str | None] | None = None,
    settings: CheckSettings | None = None,
    cache: StatusCache | None = None,
) -> WorkspaceStatus:
    """Every file of ``texts`` (path -> text) as ready, blocked or done, with counts.

    Includes are resolved among ``texts`` first; ``read_outside`` (for example a disk
    reader) is asked for included files that are not in the set.
    """
    return _plan(texts, read_outside, settings, cache)


def migrate_workspace(
    texts: Mapping[Path, str],
    read_outside: Callable[[Path], str | None] | None = None,
    settings: CheckSettings | None = None,
    cache: StatusCache | None = None,
) -> tuple[WorkspaceStatus, dict[Path, str]]:
    """The status, and the new text of every file that migrates (the ready ones; one edit
    set each, ``FileStatus.edits``). Blocked and done files are not in the result."""
    status = _plan(texts, read_outside, settings, cache)
    return status, {f.path: f.new_text for f in status.of(READY) if f.new_text is not None}
