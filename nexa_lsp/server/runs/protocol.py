"""The runs feature's methods and its messages to the client (logs, shown messages, requests
sent without waiting).

The protocol objects themselves are built in :mod:`nexa_lsp.server.to_lsp.runs` and read in
:mod:`nexa_lsp.server.from_lsp`; nothing in the runs package constructs one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from nexa_lsp.server.to_lsp import runs as to_lsp_runs

if TYPE_CHECKING:
    from concurrent.futures import Future

    from nexa_lsp.server.app import NexaLanguageServer

#: Methods of the runs feature (registered by ``nexa_lsp.server.runs.register``).
CODE_LENS = lsp.TEXT_DOCUMENT_CODE_LENS
SHUTDOWN = lsp.SHUTDOWN


def log(server: NexaLanguageServer, message: str, level: str = "log") -> None:
    """A ``window/logMessage`` of ``level`` ``log`` / ``info`` / ``warning`` / ``error``."""
    server.log(message, to_lsp_runs.MESSAGE_TYPES[level])


def show_message(server: NexaLanguageServer, message: str, level: str = "error") -> None:
    """A ``window/showMessage`` of ``level`` ``info`` / ``warning`` / ``error``."""
    server.window_show_message(to_lsp_runs.message(message, level))


def fire(future: Future[Any]) -> None:
    """Send a request without waiting; a failing answer (unsupported) is ignored."""

    def done(f: Future[Any]) -> None:
        try:
            f.exception()
        except BaseException:  # cancelled: nothing to report either
            return

    future.add_done_callback(done)
