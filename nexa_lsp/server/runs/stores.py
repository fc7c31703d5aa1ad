"""Where the editor's runs are kept: one run store per workspace folder.

The store of a folder is ``nexa.runs.store`` (default ``.nexa/runs.sqlite3``) relative to
that folder. Stores are opened once and kept; a store file that does not exist is created
only by a command that starts a run (looking at a workspace never creates one).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.run_state import RunState
from nexa_lsp.server.documents import normal_path, uri_of_path
from nexa_lsp.server.runs.arguments import Refused

if TYPE_CHECKING:
    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.server.settings import ServerSettings

DEFAULT_STORE = ".nexa/runs.sqlite3"


def store_stamp(store_path: Path) -> tuple[int, ...]:
    """Modification time and size of the store and its write-ahead log (changes on every save)."""
    stamp: list[int] = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(str(store_path) + suffix)
            stamp += [st.st_mtime_ns, st.st_size]
        except OSError:
            stamp += [0, 0]
    return tuple(stamp)


class RunStores:
    """The run stores of the server's workspace folders, opened on demand."""

    def __init__(self, server: NexaLanguageServer) -> None:
        self.server = server
        self._stores: dict[Path, SQLiteCheckpointStore] = {}
        self._lock = threading.Lock()

    def folder_of(self, path: Path | None) -> Path:
        """The workspace folder holding ``path`` (longest match), else its directory."""
        folders = self.server.documents.folders
        if path is not None:
            best: Path | None = None
            for folder in folders:
                if (path == folder or folder in path.parents) and (best is None or len(str(folder)) > len(str(best))):
                    best = folder
            if best is not None:
                return best
            return path.parent
        if folders:
            return folders[0]
        return normal_path(os.getcwd())

    def settings(self, path: Path | None) -> ServerSettings:
        """The settings in force for the folder of ``path``."""
        return self.server.settings_for(uri_of_path(self.folder_of(path) / "_"))

    def store_path(self, path: Path | None) -> Path:
        folder = self.folder_of(path)
        store = Path(self.settings(path).runs_store or DEFAULT_STORE).expanduser()
        return store if store.is_absolute() else folder / store

    def store(self, store_path: Path, create: bool) -> SQLiteCheckpointStore | None:
        """The store at ``store_path``; an absent file is created only when ``create``."""
        with self._lock:
            store = self._stores.get(store_path)
            if store is None:
                if not create and not store_path.is_file():
                    return None
                store = SQLiteCheckpointStore(store_path)
                self._stores[store_path] = store
            return store

    def known_paths(self) -> list[Path]:
        """The stores of the workspace folders, then every other store opened so far."""
        paths = [self.store_path(folder / "_") for folder in self.server.documents.folders]
        with self._lock:
            paths += [p for p in self._stores if p not in paths]
        return paths

    def locate(self, run_id: str) -> tuple[SQLiteCheckpointStore, RunState]:
        """The store holding ``run_id`` and the run as that store has it now."""
        for store_path in self.known_paths():
            store = self.store(store_path, create=False)
            if store is None:
                continue
            state = store.get(run_id)
            if state is not None:
                return store, state
        places = ", ".join(str(p) for p in self.known_paths()) or "no store"
        raise Refused(f"NXR021: no run {run_id!r} in {places}")
