"""``nexa/migrationStatus`` and the ``nexa.migrationStatus`` / ``nexa.migrateWorkspace`` commands.

The status covers every ``.nx`` / ``.nxlib`` file of the workspace folders (and the open
documents inside them): each is ready, blocked (with its blockers) or done, with counts,
in the JSON form ``nexa-lsp check --migrate --dry-run --format json`` prints (plus each
file's URI). It is computed in a worker thread over a :class:`FileView` taken when the
request came (open documents' current text first, then the disk), one status at a time,
with a :class:`StatusCache` so an unchanged workspace is answered without re-checking.

``nexa.migrateWorkspace`` applies every ready file's migration as one
``workspace/applyEdit`` (each file's edits annotated, needing confirmation where the client
supports change annotations, so VS Code previews them), leaves blocked files untouched,
re-checks the migrated workspace and says what happened with ``window/showMessage``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from nexa_lsp.server import to_lsp
from nexa_lsp.server.documents import SOURCE_SUFFIXES, FileView, uri_of_path

if TYPE_CHECKING:
    from nexa_lsp.analysis.engine import CheckSettings
    from nexa_lsp.analysis.migration.workspace import FileStatus, StatusCache, WorkspaceStatus
    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.server.settings import ServerSettings

METHOD = "nexa/migrationStatus"
STATUS_COMMAND = "nexa.migrationStatus"
MIGRATE_COMMAND = "nexa.migrateWorkspace"
#: Blockers named in the message after a workspace migration.
SHOWN_BLOCKERS = 3
#: Longest blocker message in that summary (the tree view and the status have them whole).
MESSAGE_CUT = 80


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The workspace files as the request found them, and the status computed from them."""

    texts: dict[Path, str]
    versions: dict[Path, int | None]  # open documents' versions (the edit must match them)
    status: WorkspaceStatus
    view: FileView  # for included files outside the workspace folders


def check_settings(settings: ServerSettings) -> CheckSettings:
    """The analysis settings of the server's ``nexa`` settings."""
    from nexa_lsp.analysis.engine import CheckSettings  # lazy: start-up
    from nexa_lsp.analysis.severity import SEVERITY_NAMES  # lazy: start-up

    return CheckSettings(
        migration_hints=settings.migration_hints,
        migration_severity=SEVERITY_NAMES[settings.migration_severity],
        severity_overrides={code: SEVERITY_NAMES[level] for code, level in settings.severity_overrides},
    )


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


class MigrationStatus:
    """The workspace migration status of one server (see the module docstring)."""

    def __init__(self, server: NexaLanguageServer) -> None:
        self.server = server
        self._cache: StatusCache | None = None
        self._lock = threading.Lock()  # one status at a time (the cache is not thread-safe)

    async def snapshot(self) -> Snapshot:
        """The status of the workspace as it is now (computed off the event loop)."""
        documents = self.server.documents
        view = documents.view()
        versions = {s.path: s.version for s in documents if s.path is not None}
        settings = check_settings(self.server.settings)
        return await asyncio.to_thread(self._compute, view, versions, settings)

    def _compute(self, view: FileView, versions: dict[Path, int | None], settings: CheckSettings) -> Snapshot:
        from nexa_lsp.analysis.migration.workspace import StatusCache, workspace_status  # lazy: start-up

        folders = list(view.store.folders)
        paths = [*view.store.workspace_files()]
        paths += [p for p in view.open if p.suffix in SOURCE_SUFFIXES and _inside(p, folders) and p not in paths]
        texts: dict[Path, str] = {}
        for path in sorted(paths):
            text = view.text(path)
            if text is not None:
                texts[path] = text
        with self._lock:
            if self._cache is None:
                self._cache = StatusCache()
            status = workspace_status(texts, view.text, settings, self._cache)
        return Snapshot(texts, {p: v for p, v in versions.items() if p in texts}, status, view)

    async def answer(self) -> dict[str, Any]:
        return to_lsp.migration_status((await self.snapshot()).status, uri_of_path)

    async def migrate(self) -> dict[str, Any]:
        """Apply every ready file's migration as one workspace edit, then re-check."""
        from nexa_lsp.analysis.migration.workspace import BLOCKED, READY  # lazy: start-up

        server = self.server
        snap = await self.snapshot()
        ready = snap.status.of(READY)
        blocked = snap.status.of(BLOCKED)
        migrated: list[FileStatus] = []
        applied = False
        if ready:
            files = [(uri_of_path(f.path), snap.versions.get(f.path), f) for f in ready]
            annotations = server.client_supports("workspace.workspace_edit.change_annotation_support")
            edit = to_lsp.migration_workspace_edit(files, server.client, annotations)
            label = f"Migrate {len(ready)} file{'s' if len(ready) != 1 else ''} to Nexa 3.0"
            result = await server.workspace_apply_edit_async(to_lsp.apply_edit_request(edit, label))
            applied = bool(result.applied)
            if applied:
                migrated = ready
            else:
                reason = result.failure_reason or "refused or cancelled"
                message = f"Nexa: the editor did not apply the migration: {reason}"
                server.window_show_message(to_lsp.show_message(lsp.MessageType.Warning, message))
        after = await asyncio.to_thread(self._recheck, snap, migrated)
        if applied and server.client.diagnostic_refresh:
            server.workspace_diagnostic_refresh(None)
        if not ready or applied:
            level = lsp.MessageType.Warning if blocked else lsp.MessageType.Info
            server.window_show_message(to_lsp.show_message(level, _summary(len(migrated), blocked, snap)))
        return {
            "applied": applied,
            "migrated": [uri_of_path(f.path) for f in migrated],
            "blocked": [uri_of_path(f.path) for f in blocked],
            "after": to_lsp.migration_status(after, uri_of_path),
        }

    def _recheck(self, snap: Snapshot, migrated: list[FileStatus]) -> WorkspaceStatus:
        """The status of the workspace with the migrated files' new texts."""
        from nexa_lsp.analysis.migration.workspace import StatusCache, workspace_status  # lazy: start-up

        texts = dict(snap.texts)
        for f in migrated:
            if f.new_text is not None:
                texts[f.path] = f.new_text
        with self._lock:
            if self._cache is None:
                self._cache = StatusCache()
            return workspace_status(texts, snap.view.text, check_settings(self.server.settings), self._cache)


def _summary(migrated: int, blocked: list[FileStatus], snap: Snapshot) -> str:
    """``N migrated, M blocked`` and where the first blockers are (1-based lines)."""
    from nexa_lsp.text import LineIndex  # lazy: start-up

    text = f"Nexa 3.0: {migrated} file{'s' if migrated != 1 else ''} migrated, {len(blocked)} blocked"
    shown = []
    for f in blocked:
        lines = LineIndex(snap.texts[f.path])
        for b in f.blockers:
            pos = lines.position(b.start_offset)
            message = b.message if len(b.message) <= MESSAGE_CUT else b.message[: MESSAGE_CUT - 1] + "…"
            shown.append(f"{f.path.name}:{pos.line + 1}: {b.code} {message}")
            break
        if len(shown) == SHOWN_BLOCKERS:
            break
    if shown:
        more = " ..." if len(blocked) > len(shown) else ""
        text += " (first blockers: " + "; ".join(shown) + more + ")"
    return text


def register(server: NexaLanguageServer) -> None:
    status = MigrationStatus(server)

    @server.feature(METHOD)
    async def migration_status(_params: Any) -> dict[str, Any]:
        return await status.answer()

    @server.command(STATUS_COMMAND)
    async def migration_status_command(*_args: Any) -> dict[str, Any]:
        return await status.answer()

    @server.command(MIGRATE_COMMAND)
    async def migrate_workspace(*_args: Any) -> dict[str, Any]:
        return await status.migrate()
