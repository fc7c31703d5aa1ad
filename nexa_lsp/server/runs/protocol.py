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
from nexa_lsp.server.convert import offsets, to_range

if TYPE_CHECKING:
    from concurrent.futures import Future

    from nexa_lsp.ide.run_commands import Action, Lens, RunCommand
    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.text import LineIndex

#: Methods of the runs feature (registered by ``nexa_lsp.server.runs.register``).
CODE_LENS = lsp.TEXT_DOCUMENT_CODE_LENS
SHUTDOWN = lsp.SHUTDOWN
CODE_LENS_OPTIONS = lsp.CodeLensOptions(resolve_provider=False)

_RUN_ID = re.compile(r"\brun_[0-9a-f]{32}\b")


# --- messages and logs --------------------------------------------------------------------


def log(server: NexaLanguageServer, message: str, level: str = "log") -> None:
    """A ``window/logMessage`` of ``level`` ``log`` / ``info`` / ``warning`` / ``error``."""
    server.log(message, _MESSAGE_TYPES[level])


def show_message(server: NexaLanguageServer, message: str, level: str = "error") -> None:
    """A ``window/showMessage`` of ``level`` ``info`` / ``warning`` / ``error``."""
    server.window_show_message(lsp.ShowMessageParams(type=_MESSAGE_TYPES[level], message=message))


_MESSAGE_TYPES = {
    "log": lsp.MessageType.Log,
    "info": lsp.MessageType.Info,
    "warning": lsp.MessageType.Warning,
    "error": lsp.MessageType.Error,
}


# --- lenses and code actions ----------------------------------------------------------------


def command(run_command: RunCommand) -> lsp.Command:
    return lsp.Command(title=run_command.title, command=run_command.command, arguments=run_command.arguments)


def code_lens(lines: LineIndex, lens: Lens) -> lsp.CodeLens:
    return lsp.CodeLens(range=to_range(lines, lens.span.start, lens.span.end), command=command(lens.command))


def code_action(action: Action, kind: str, attached: Sequence[lsp.Diagnostic]) -> lsp.CodeAction:
    return lsp.CodeAction(
        title=action.title,
        kind=kind,
        diagnostics=list(attached) or None,
        command=command(action.command),
    )


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


# --- progress ---------------------------------------------------------------------------------


def progress_begin(title: str, message: str) -> lsp.WorkDoneProgressBegin:
    return lsp.WorkDoneProgressBegin(title=title, cancellable=True, message=message)


def progress_report(message: str) -> lsp.WorkDoneProgressReport:
    return lsp.WorkDoneProgressReport(message=message)


def progress_end(message: str) -> lsp.WorkDoneProgressEnd:
    return lsp.WorkDoneProgressEnd(message=message)


# --- requests to the client -------------------------------------------------------------------


def runs_configuration(scope_uri: str) -> lsp.ConfigurationParams:
    """``workspace/configuration`` for section ``nexa.runs`` of one folder."""
    return lsp.ConfigurationParams(items=[lsp.ConfigurationItem(scope_uri=scope_uri, section="nexa.runs")])


def message_request(message: str, level: str, actions: Sequence[str]) -> lsp.ShowMessageRequestParams:
    """``window/showMessageRequest`` offering ``actions`` (answered with one title, or nothing)."""
    return lsp.ShowMessageRequestParams(
        type=_MESSAGE_TYPES[level], message=message, actions=[lsp.MessageActionItem(title=a) for a in actions]
    )


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


def client_keeps_provider_secrets(server: NexaLanguageServer) -> bool:
    """The client declares ``experimental.nexa.providerSecrets``: it answers ``nexa/providerSecret``
    with a key from its secret storage (the VS Code extension)."""
    experimental = server.client_capabilities.experimental
    nexa = experimental.get("nexa") if isinstance(experimental, Mapping) else None
    return isinstance(nexa, Mapping) and nexa.get("providerSecrets") is True


def show_document(uri: str) -> lsp.ShowDocumentParams:
    return lsp.ShowDocumentParams(uri=uri, take_focus=True)


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
