"""Start-up: what loads when, so that ``initialize`` costs what pygls costs.

``initialize`` is answered with the server glue loaded and nothing else (the ide,
analysis and syntax layers, the runtime and the providers are imported where they are
used, marked "lazy: start-up"). Then, on the event loop between messages:

1. right after the ``initialize`` answer: what the first diagnostics need (the syntax
   and analysis layers) and what the worker threads use, so that no worker imports them;
   no grammar - the first parse builds the one its file declares (``parser_for`` is
   thread-safe), so a 3.0 file does not wait for the 2.4 parser too;
2. after the first diagnostics were sent (or when no document opened within
   :data:`IDLE_WARM_UP_SECONDS`): what later requests need (hover, completion and their
   data, both parsers, the runs feature's modules - ``nexa_lsp.server.runs`` registers
   its handlers by name and imports them on first use).

``nexa-lsp serve`` starts with garbage collection off (start-up allocates much and frees
little, so collections only cost time); it is turned on with the second load, which ends
with a full collection.

The loads run on the event loop, not in a thread: two threads importing the same
package at once can see it half-initialised (``ImportError: cannot import name ... from
partially initialized module``), and every request needs these modules anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

if TYPE_CHECKING:
    from nexa_lsp.server.app import NexaLanguageServer

IDLE_WARM_UP_SECONDS = 2.0


def _load_for_checks() -> None:
    """The layers a check runs through (and the workers' scans); the grammars load where used."""
    from nexa_lsp.analysis import engine, symbols, workspace  # noqa: F401  # lazy: start-up
    from nexa_lsp.syntax import files, grammar, source  # noqa: F401  # lazy: start-up


def _load_for_features() -> None:
    from nexa_lsp.ide import completion, hover, outline, tokens  # noqa: F401  # lazy: start-up
    from nexa_lsp.server.runs import features  # noqa: F401  # lazy: start-up
    from nexa_lsp.syntax.grammar import parser_for  # lazy: start-up
    from nexa_lsp.syntax.version import VersionPath  # lazy: start-up

    for path in (VersionPath.NEXA_30, VersionPath.COMPAT_24):
        parser_for(path)


class StartUp:
    """The two loads of one server (each runs once)."""

    def __init__(self, server: NexaLanguageServer) -> None:
        self.server = server
        self._started: set[str] = set()

    @property
    def features_started(self) -> bool:
        return "features" in self._started

    def prepare_checks(self) -> None:
        """Load what diagnostics need, once the current message is answered."""
        self._soon("checks", _load_for_checks)
        with contextlib.suppress(RuntimeError):  # no event loop: nothing to schedule
            asyncio.get_running_loop().call_later(IDLE_WARM_UP_SECONDS, self.warm_up_features)

    def warm_up_features(self) -> None:
        """Load what other requests need, once the current message is answered."""
        self._soon("features", _load_for_features)

    def _soon(self, name: str, load: Callable[[], None]) -> None:
        if name in self._started:
            return
        self._started.add(name)
        with contextlib.suppress(RuntimeError):  # no event loop: modules load where used
            asyncio.get_running_loop().call_soon(self._run, name, load)

    def _run(self, name: str, load: Callable[[], None]) -> None:
        try:
            load()
        except Exception as exc:  # the same import fails again, with its message, where it is used
            self.server.log(f"loading for {name} failed: {exc}", lsp.MessageType.Warning)
            return
        finally:
            if name == "features":
                gc.enable()  # off since ``nexa-lsp serve`` started (cli/serve.py)
        self.server.idle_collector.settle()  # the modules just loaded: no collection walks them again
        if name == "features":
            self.server.idle_collector.collect()
