"""Open documents, files read from disk, and how includes find them.

Each open document keeps its latest parse and re-parses only when its text
changed, passing the previous parse so untouched chunks are reused. Files that
are not open (included files, workspace files for cross-file features) are read
from disk and parsed once per modification time.

Open documents belong to the event loop. Work that reads many files (workspace
diagnostics, references across files, workspace symbols) runs in worker threads
over a :class:`FileView`: the open documents' texts and parses of one moment,
then the disk (whose cache and workspace listing are safe in any thread).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import from_fs_path, to_fs_path

from nexa_lsp.text import ContentChange, DocumentText, TextChange, covering

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from nexa_lsp.analysis.symbols import Analysis
    from nexa_lsp.ide.actions import MigrationPlan
    from nexa_lsp.server.document_info import DocumentInfo
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import SourceFile

SOURCE_SUFFIXES = (".nx", ".nxlib")
MAX_WORKSPACE_FILES = 5000


def normal_path(path: str | Path) -> Path:
    """One spelling per file (absolute, normalised; symlinks are kept)."""
    return Path(os.path.normpath(os.path.abspath(path)))


def path_of_uri(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    fs_path = to_fs_path(uri)
    return normal_path(fs_path) if fs_path else None


def _is_regular_file(path: Path) -> bool:
    """A regular file we may read (not a device, FIFO or a path the system rejects)."""
    try:
        return path.is_file()
    except (OSError, ValueError):  # e.g. a name longer than the system allows, or a NUL in it
        return False


def uri_of_path(path: Path) -> str:
    return str(from_fs_path(str(path)))


@dataclass(slots=True, eq=False)
class Checked:
    """Diagnostics of one document version, in both forms (and, when kept per chunk, the JSON
    of the LSP form, which push and pull send as it is: ``chunked_lsp``)."""

    version: int | None
    diagnostics: list[Diagnostic]
    lsp: list[lsp.Diagnostic]
    result_id: str
    items_json: str | None = None  # the JSON of ``lsp`` as list items (no brackets); None: not encoded


@dataclass(slots=True, eq=False)
class DocumentState:
    """What the server knows about one open document.

    ``buffer`` holds the editor's text (the server's only copy: pygls keeps none, see
    ``NexaProtocol``); ``text`` is the same string, for reading."""

    uri: str
    path: Path | None
    text: str
    version: int | None
    source: SourceFile | None = None  # parse of ``text`` (None until needed)
    checked: Checked | None = None  # diagnostics of ``version``
    include_paths: set[Path] = field(default_factory=set)  # files the last check resolved includes to
    tokens: tuple[str, list[int]] | None = None  # last semantic tokens (result id, data)
    migration: tuple[int | None, MigrationPlan] | None = None
    info: tuple[SourceFile, DocumentInfo] | None = None  # ``nexa/documentInfo`` of a parse
    pending: Any = None  # the scheduled diagnostics run (asyncio handle)
    buffer: DocumentText | None = None  # the text, changed by the editor's edits (open documents)
    unparsed: TextChange | None = None  # what changed since ``source`` was parsed (code points)
    language_id: str = ""  # the ``languageId`` the client opened it with


@dataclass(slots=True)
class _DiskEntry:
    stamp: tuple[int, int]
    text: str | None
    source: SourceFile | None


class DiskFiles:
    """Files read from disk, parsed once per (modification time, size); safe in any thread."""

    def __init__(self) -> None:
        self._entries: dict[Path, _DiskEntry] = {}
        self._lock = threading.Lock()

    def entry(self, path: Path) -> tuple[str | None, SourceFile | None]:
        """The text and parse of ``path`` (None, None when it is not a readable regular file)."""
        try:
            st = path.stat()
        except (OSError, ValueError):
            self.forget(path)
            return None, None
        if not stat.S_ISREG(st.st_mode):
            return None, None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            entry = self._entries.get(path)
        if entry is not None and entry.stamp == stamp:
            return entry.text, entry.source
        from nexa_lsp.syntax.files import read_source  # lazy: start-up
        from nexa_lsp.syntax.source import parse_source  # lazy: start-up

        read = read_source(path)
        source = parse_source(read.text) if read.text is not None else None
        with self._lock:
            self._entries[path] = _DiskEntry(stamp, read.text, source)
        return read.text, source

    def forget(self, path: Path | None = None) -> None:
        with self._lock:
            if path is None:
                self._entries.clear()
            else:
                self._entries.pop(path, None)


def _locate(
    include: str, base: Path | None, is_open: Callable[[Path], bool], read: Callable[[Path], SourceFile | None]
) -> tuple[Path | None, SourceFile | None]:
    """The first candidate of the 2.x search order that is open or a file (see ``DocumentStore.locate``)."""
    from nexa_lsp.analysis.workspace import include_candidates  # lazy: start-up

    for candidate in include_candidates(include, base):
        path = normal_path(candidate)
        if is_open(path) or _is_regular_file(path):
            return path, read(path)
    return None, None


@dataclass(frozen=True, slots=True)
class FileView:
    """The files as the editor had them at one moment: each open document's text and parse
    (by path), else the disk. Nothing in it changes; safe to read in any thread."""

    open: Mapping[Path, tuple[str, SourceFile]]
    store: DocumentStore

    def read(self, path: Path) -> SourceFile | None:
        found = self.open.get(path)
        return found[1] if found is not None else self.store.disk.entry(path)[1]

    def text(self, path: Path) -> str | None:
        found = self.open.get(path)
        return found[0] if found is not None else self.store.disk.entry(path)[0]

    def locate(self, include: str, including: Path | None) -> tuple[Path | None, SourceFile | None]:
        return _locate(include, self.store.base_for(including), self.open.__contains__, self.read)

    def analysis_of_file(self, path: Path) -> Analysis | None:
        from nexa_lsp.analysis.symbols import analyze  # lazy: start-up

        source = self.read(path)
        return analyze(source, path, self.locate) if source is not None else None

    def known_files(self) -> list[Path]:
        """Workspace files and the paths of the open documents."""
        return sorted({*self.store.workspace_files(), *self.open})


class DocumentStore:
    """Open documents by URI, and parsed files from disk by path."""

    def __init__(self) -> None:
        self._open: dict[str, DocumentState] = {}
        self._by_path: dict[Path, DocumentState] = {}
        self.disk = DiskFiles()
        self.folders: list[Path] = []
        self._workspace_files: list[Path] | None = None
        self._listing = threading.Lock()
        self._listing_generation = 0

    # -- open documents

    def open(self, uri: str, text: str, version: int | None, language_id: str = "") -> DocumentState:
        path = path_of_uri(uri)
        state = DocumentState(uri, path, text, version, buffer=DocumentText(text), language_id=language_id)
        self._open[uri] = state
        if path is not None:
            self._by_path[path] = state
        return state

    def change(self, uri: str, changes: list[ContentChange], version: int | None) -> DocumentState | None:
        """Apply one ``didChange`` (its content changes in order, with LSP semantics) to the document."""
        state = self._open.get(uri)
        if state is None:
            return None
        if state.buffer is None:
            state.buffer = DocumentText(state.text)
        done = state.buffer.apply(changes)
        if state.source is not None:
            state.unparsed = covering([state.unparsed, *done] if state.unparsed is not None else done)
        state.text = state.buffer.text
        state.version = version
        state.checked = None
        return state

    def close(self, uri: str) -> DocumentState | None:
        state = self._open.pop(uri, None)
        if state is not None and state.path is not None and self._by_path.get(state.path) is state:
            del self._by_path[state.path]
        return state

    def get(self, uri: str) -> DocumentState | None:
        return self._open.get(uri)

    def __iter__(self) -> Iterator[DocumentState]:
        return iter(list(self._open.values()))

    def __len__(self) -> int:
        return len(self._open)

    def parsed(self, state: DocumentState) -> SourceFile:
        """The parse of the document's current text (re-parsing only what changed)."""
        from nexa_lsp.syntax.source import parse_source  # lazy: start-up

        source = state.source
        if source is None or (source.text is not state.text and source.text != state.text):
            changed = state.unparsed if source is not None else None
            lines = state.buffer.lines if state.buffer is not None else None
            state.source = parse_source(state.text, source, changed, lines)
            if state.buffer is not None and state.source._lines is None:
                state.source._lines = state.buffer.line_index()  # a snapshot of the line table: O(blocks)
        state.unparsed = None
        assert state.source is not None
        return state.source

    # -- files on disk

    def read(self, path: Path) -> SourceFile | None:
        """The parse of a file: the open document's when it is open, else from disk (cached)."""
        state = self._by_path.get(path)
        if state is not None:
            return self.parsed(state)
        return self.disk.entry(path)[1]

    def forget_disk(self, path: Path | None = None) -> None:
        """Read ``path`` (every file, and the workspace listing, when None) again when next needed."""
        self.disk.forget(path)
        if path is None:
            with self._listing:
                self._workspace_files = None
                self._listing_generation += 1

    def view(self) -> FileView:
        """The open documents as they are now (parsed now where needed), then the disk."""
        return FileView({path: (state.text, self.parsed(state)) for path, state in self._by_path.items()}, self)

    # -- includes

    def base_for(self, path: Path | None) -> Path | None:
        """The including path to resolve relative includes of a document without a file."""
        if path is not None:
            return path
        return self.folders[0] / "untitled.nx" if self.folders else None

    def locate(self, include: str, including: Path | None) -> tuple[Path | None, SourceFile | None]:
        """Find an included file: open documents first, then disk (2.x search order)."""
        return _locate(include, self.base_for(including), self._by_path.__contains__, self.read)

    def analysis(self, state: DocumentState) -> Analysis:
        """Names of the document resolved against its includes (memoised per version)."""
        from nexa_lsp.analysis.symbols import analyze  # lazy: start-up

        source = self.parsed(state)
        return analyze(source, state.path, self.locate)

    def dependents(self, path: Path) -> list[DocumentState]:
        """Open documents whose includes resolved to ``path``."""
        return [s for s in self._open.values() if path in s.include_paths]

    # -- workspace files

    def workspace_files(self) -> list[Path]:
        """`.nx` / `.nxlib` files of the workspace folders (hidden folders skipped; capped).
        Listed once until :meth:`forget_disk`; safe in any thread."""
        with self._listing:
            if self._workspace_files is not None:
                return self._workspace_files
            generation = self._listing_generation
            folders = list(self.folders)
        found: list[Path] = []
        for folder in folders:
            for root, dirs, files in os.walk(folder):
                dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
                for name in files:
                    if name.endswith(SOURCE_SUFFIXES):
                        found.append(normal_path(os.path.join(root, name)))
                if len(found) >= MAX_WORKSPACE_FILES:
                    break
        listing = sorted(set(found))[:MAX_WORKSPACE_FILES]
        with self._listing:
            if generation == self._listing_generation:  # not forgotten while we walked
                self._workspace_files = listing
        return listing
