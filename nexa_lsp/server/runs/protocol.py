"""Every protocol object the runs feature builds or reads (lsprotocol), in one place.

Seam: these move into ``nexa_lsp.server.to_lsp`` / ``from_lsp`` when those modules hold
every conversion of the server; the rest of the runs package only calls the functions
here and never constructs an lsprotocol object itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from nexa_lsp.analysis.run_codes import RUN_CODES
from nexa_lsp.server.convert import offsets
from nexa_lsp.server.to_lsp import runs as to_lsp_runs
from nexa_lsp.server.to_lsp.runs import (
    code_action,
    code_lens,
    command,
    message_request,
    progress_begin,
    progress_end,
    progress_report,
    runs_configuration,
    show_document,
)

if TYPE_CHECKING:
    from concurrent.futures import Future

    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.text import LineIndex

#: Methods of the runs feature (registered by ``nexa_lsp.server.runs.register``).
CODE_LENS = lsp.TEXT_DOCUMENT_CODE_LENS
SHUTDOWN = lsp.SHUTDOWN
CODE_LENS_OPTIONS = to_lsp_runs.CODE_LENS_OPTIONS

__all__ = [
    "code_action",
    "code_lens",
    "command",
    "message_request",
    "progress_begin",
    "progress_end",
    "progress_report",
    "runs_configuration",
    "show_document",
]

_RUN_ID = re.compile(r"\brun_[0-9a-f]{32}\b")


# --- messages and logs --------------------------------------------------------------------


def log(server: NexaLanguageServer, message: str, level: str = "log") -> None:
    """A ``window/logMessage`` of ``level`` ``log`` / ``info`` / ``warning`` / ``error``."""
    server.log(message, to_lsp_runs.MESSAGE_TYPES[level])


def show_message(server: NexaLanguageServer, message: str, level: str = "error") -> None:
    """A ``window/showMessage`` of ``level`` ``info`` / ``warning`` / ``error``."""
    server.window_show_message(to_lsp_runs.message(message, level))


# --- lenses and code actions ----------------------------------------------------------------


def wants_kind(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a code action request's ``context.only`` admits actions of ``kind``."""
    if only is None:
        return True
    return any(str(k) in ("", kind) or kind.startswith(str(k) + ".") for k in only)


def action_range(lines: LineIndex, params: lsp.CodeActionParams) -> tuple[int, int]:
    """The request's range as code-point offsets."""
    return offsets(lines, params.range)


def diagnostic_run(diagnostic: lsp.Diagnostic) -> str | None:
    """The run a run-aware diagnostic is about (its data, else the full run id in its message)."""
    if diagnostic.code not in RUN_CODES:
        return None
    data = diagnostic.data
    if isinstance(data, Mapping) and isinstance(data.get("run_id"), str):
        return str(data["run_id"])
    match = _RUN_ID.search(diagnostic.message)
    return match.group(0) if match else None


def diagnostic_code(diagnostic: lsp.Diagnostic) -> str | None:
    return None if diagnostic.code is None else str(diagnostic.code)


# --- requests to the client -------------------------------------------------------------------


def chosen_action(answer: object) -> str | None:
    """The title of the action a ``window/showMessageRequest`` was answered with."""
    return answer.title if isinstance(answer, lsp.MessageActionItem) else None


def client_prompts_for_runs(server: NexaLanguageServer) -> bool:
    """The client declares ``experimental.nexa.runPrompts``: it asks the user for a run's task
    or input itself (a lens may leave them out), and shows message requests without blocking
    (the VS Code extension)."""
    experimental = server.client_capabilities.experimental
    if not isinstance(experimental, Mapping):
        return False
    nexa = experimental.get("nexa")
    return isinstance(nexa, Mapping) and nexa.get("runPrompts") is True


def custom_params(params: object) -> Mapping[str, Any]:
    """The params of a ``nexa/...`` request as a mapping (pygls hands them over as namedtuples)."""
    if params is None:
        return {}
    if isinstance(params, Mapping):
        return params
    as_dict = getattr(params, "_asdict", None)
    if as_dict is None:
        raise TypeError("the params must be an object")
    return {key: _plain(value) for key, value in as_dict().items()}


def _plain(value: object) -> object:
    as_dict = getattr(value, "_asdict", None)
    if as_dict is not None:
        return {key: _plain(item) for key, item in as_dict().items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def fire(future: Future[Any]) -> None:
    """Send a request without waiting; a failing answer (unsupported) is ignored."""

    def done(f: Future[Any]) -> None:
        try:
            f.exception()
        except BaseException:  # cancelled: nothing to report either
            return

    future.add_done_callback(done)
