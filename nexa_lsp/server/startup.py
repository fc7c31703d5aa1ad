"""Start-up: what loads when, so that ``initialize`` costs what pygls costs.

``initialize`` is answered with the server glue loaded and nothing else (the ide,
analysis and syntax layers, the runtime and the providers are imported where they are
used, marked "lazy: start-up"). Then, in background threads, so the event loop keeps
answering:

1. right after the ``initialize`` answer: what the first diagnostics need (the syntax
   and analysis layers, the 2.4 parser); a ``didOpen`` arriving meanwhile waits only for
   what is still loading;
2. after the first diagnostics (or when no document opened within
   :data:`IDLE_WARM_UP_SECONDS`): what later requests need (hover, completion and their
   data, the 3.0 parser).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

if TYPE_CHECKING:
    from nexa_lsp.server.app import NexaLanguageServer

IDLE_WARM_UP_SECONDS = 2.0


def _load_for_checks() -> None:
    """The layers a check runs through, and the parser of files without a declaration (2.4);
    the 3.0 parser loads with the features (``parser_for`` builds one parser at a time, so
    building both here would keep a check of a 2.4 file waiting for the 3.0 one)."""
    from nexa_lsp.analysis import engine  # noqa: F401  # lazy: start-up
    from nexa_lsp.syntax.grammar import parser_for  # lazy: start-up
    from nexa_lsp.syntax.version import VersionPath  # lazy: start-up

    parser_for(VersionPath.COMPAT_24)


def _load_for_features() -> None:
    from nexa_lsp.ide import completion, hover, outline, tokens  # noqa: F401  # lazy: start-up
    from nexa_lsp.syntax.grammar import parser_for  # lazy: start-up
    from nexa_lsp.syntax.version import VersionPath  # lazy: start-up

    parser_for(VersionPath.NEXA_30)


class StartUp:
    """The two background loads of one server (each runs once)."""

    def __init__(self, server: NexaLanguageServer) -> None:
        self.server = server
        self._started: set[str] = set()
        self._lock = threading.Lock()

    def prepare_checks(self) -> None:
        """Load what diagnostics need (call once ``initialize`` is answered)."""
        self._start("checks", _load_for_checks)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.call_later(IDLE_WARM_UP_SECONDS, self.warm_up_features)

    @property
    def features_started(self) -> bool:
        return "features" in self._started

    def warm_up_features(self) -> None:
        """Load what other requests need (after the first diagnostics)."""
        self._start("features", _load_for_features)

    def _start(self, name: str, load: Callable[[], None]) -> None:
        with self._lock:
            if name in self._started:
                return
            self._started.add(name)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        thread = threading.Thread(target=self._run, args=(name, load, loop), name=f"nexa-lsp-{name}", daemon=True)
        thread.start()

    def _run(self, name: str, load: Callable[[], None], loop: asyncio.AbstractEventLoop | None) -> None:
        try:
            load()
        except Exception as exc:  # the same import fails again, with its message, where it is used
            if loop is not None:
                loop.call_soon_threadsafe(self.server.log, f"loading for {name} failed: {exc}", lsp.MessageType.Warning)
            return
        if loop is not None and name == "features":
            loop.call_soon_threadsafe(self.server.idle_collector.collect)
