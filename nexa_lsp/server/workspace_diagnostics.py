"""``workspace/diagnostic``: every workspace file's findings, computed off the event loop and long-polled.

* Files that are not open are read, parsed and checked in a worker thread over a
  :class:`~nexa_lsp.server.documents.FileView` (the open documents as they were when
  the request came), so hover, completion and edits keep being answered during a scan.
  A file's result is kept until the file, its includes or the settings change.
* Long-polling (as ty, Roslyn and JETLS do): VS Code asks again about 2 s after each
  answer. When nothing changed since the client's ``previousResultIds``, the request is
  held and answered once something changes (an edit, a file on disk, the settings, a
  run), or when a newer request arrives; a cancel or shutdown answers it as cancelled.
* Unchanged files are answered with ``kind: "unchanged"``; a file that went away since
  the client's previous answer gets an empty report once.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from nexa_lsp.server import to_lsp
from nexa_lsp.server.documents import Checked, DocumentState, FileView, uri_of_path
from nexa_lsp.server.settings import ServerSettings, settings_for_uri
from nexa_lsp.server.sync import base_diagnostics, check, checked, provided_diagnostics

if TYPE_CHECKING:
    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.server.from_lsp import ClientFacts
    from nexa_lsp.syntax.source import SourceFile

#: The result id of a file that is gone (its report is empty, sent once).
GONE = "gone"
#: Providers (run-aware diagnostics) run on the event loop; it answers others every this many files.
YIELD_EVERY = 25
#: The scan freezes what it built (``gc.freeze``) every this many files.
FREEZE_EVERY = 50
#: Seconds a thread may hold the GIL while another waits, during a scan (Python's default: 0.005).
SCAN_SWITCH_INTERVAL = 0.001


@dataclass(frozen=True, slots=True)
class _FileResult:
    """A workspace file's findings, and what they were computed from."""

    path: Path
    uri: str
    source: SourceFile
    settings: ServerSettings
    includes: tuple[tuple[str, Path | None, SourceFile | None], ...]  # (include, path, parse) resolved
    checked: Checked

    def still_valid(self, view: FileView, source: SourceFile, settings: ServerSettings) -> bool:
        if source is not self.source or settings != self.settings:
            return False
        return all(view.locate(name, self.path) == (path, parse) for name, path, parse in self.includes)


class _Scanner:
    """Checks the workspace files that are not open; one scan at a time, in a worker thread."""

    def __init__(self) -> None:
        self._results: dict[Path, _FileResult] = {}
        self._lock = threading.Lock()

    def scan(
        self, view: FileView, settings_for: Callable[[str], ServerSettings], client: ClientFacts
    ) -> list[_FileResult]:
        with self._lock:
            results = []
            files = [p for p in view.store.workspace_files() if p not in view.open]
            for number, path in enumerate(files, 1):
                if number % FREEZE_EVERY == 0:
                    gc.freeze()  # the parses so far: no full collection scans them (server/memory.py)
                result = self._file(view, path, settings_for, client)
                if result is not None:
                    results.append(result)
            keep = {r.path for r in results}
            for path in [p for p in self._results if p not in keep]:
                del self._results[path]
            return results

    def _file(
        self, view: FileView, path: Path, settings_for: Callable[[str], ServerSettings], client: ClientFacts
    ) -> _FileResult | None:
        source = view.read(path)
        if source is None:
            return None
        uri = uri_of_path(path)
        settings = settings_for(uri)
        cached = self._results.get(path)
        if cached is not None and cached.still_valid(view, source, settings):
            return cached
        resolved: list[tuple[str, Path | None, SourceFile | None]] = []

        def locate(include: str, including: Path | None) -> tuple[Path | None, SourceFile | None]:
            found = view.locate(include, including)
            resolved.append((include, *found))
            return found

        diagnostics, _paths = base_diagnostics(source, path, locate, settings)
        result = _FileResult(
            path, uri, source, settings, tuple(resolved), checked(uri, None, source, diagnostics, client)
        )
        self._results[path] = result
        return result


class WorkspacePull:
    """Answers ``workspace/diagnostic`` requests (see the module docstring)."""

    def __init__(self, server: NexaLanguageServer) -> None:
        self.server = server
        self.scanner = _Scanner()
        self._newest = 0  # number of the newest request

    async def answer(self, params: lsp.WorkspaceDiagnosticParams) -> lsp.WorkspaceDiagnosticReport:
        self._newest += 1
        number = self._newest
        changes = self.server.diagnostic_changes
        changes.wake()  # an older held request answers now
        previous = {p.uri: p.value for p in params.previous_result_ids}
        while True:
            seen = changes.count
            items = await self._items(previous)
            if number != self._newest or any(not _unchanged(item) for item in items):
                return to_lsp.workspace_report(items)
            while changes.count == seen and number == self._newest:
                await changes.wait()
            if number != self._newest:
                continue  # superseded: answer with what we have (all unchanged)
            delay = self.server.settings.debounce_ms / 1000
            if delay > 0:  # let a burst of edits settle
                await asyncio.sleep(delay)

    async def _items(self, previous: dict[str, str]) -> list[lsp.WorkspaceDocumentDiagnosticReport]:
        with self.server.idle_collector.busy():  # no full collection in the middle of a scan
            return await self._scanned_items(previous)

    async def _scanned_items(self, previous: dict[str, str]) -> list[lsp.WorkspaceDocumentDiagnosticReport]:
        server = self.server
        items = []
        for state in server.documents:
            found = check(server, state)
            items.append(
                to_lsp.workspace_file_report(
                    state.uri, state.version, found.lsp, found.result_id, previous.get(state.uri)
                )
            )
        view = server.documents.view()
        settings, folder_settings = server.settings, dict(server.folder_settings)

        def settings_for(uri: str) -> ServerSettings:
            return settings_for_uri(uri, settings, folder_settings)

        interval = sys.getswitchinterval()
        sys.setswitchinterval(SCAN_SWITCH_INTERVAL)  # the loop waits less for the GIL while the scan runs
        try:
            results = await asyncio.to_thread(self.scanner.scan, view, settings_for, server.client)
        finally:
            sys.setswitchinterval(interval)
        for index, result in enumerate(results):
            if index and index % YIELD_EVERY == 0:
                await asyncio.sleep(0)
            found = self._with_providers(result)
            items.append(
                to_lsp.workspace_file_report(result.uri, None, found.lsp, found.result_id, previous.get(result.uri))
            )
        present = {item.uri for item in items}
        for uri, value in previous.items():
            if uri not in present and value != GONE:
                items.append(to_lsp.workspace_file_report(uri, None, [], GONE, None))
        return items

    def _with_providers(self, result: _FileResult) -> Checked:
        """The scan's findings plus those of the other features (event loop)."""
        server = self.server
        if not server.diagnostic_providers:
            return result.checked
        state = DocumentState(result.uri, result.path, result.source.text, None, result.source)
        extra = provided_diagnostics(server, state, result.source)
        if not extra:
            return result.checked
        return checked(result.uri, None, result.source, result.checked.diagnostics, server.client, extra)


def _unchanged(item: lsp.WorkspaceDocumentDiagnosticReport) -> bool:
    return isinstance(item, lsp.WorkspaceUnchangedDocumentDiagnosticReport)


def register(server: NexaLanguageServer) -> None:
    pull = WorkspacePull(server)

    @server.feature(lsp.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(params: lsp.WorkspaceDiagnosticParams) -> lsp.WorkspaceDiagnosticReport:
        return await pull.answer(params)
