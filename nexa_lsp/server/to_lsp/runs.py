"""The protocol objects of the runs feature (lenses, actions, progress, messages, requests to
the client), built from the plain data of :mod:`nexa_lsp.ide.run_commands` and the run driver.

The ``nexa_lsp.server.runs`` package calls these functions and never constructs an
lsprotocol object itself (``tests/test_layering.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from nexa_lsp.server.to_lsp import show_message, to_range

if TYPE_CHECKING:
    from nexa_lsp.ide.run_commands import Action, Lens, RunCommand
    from nexa_lsp.text import LineIndex

#: The ``textDocument/codeLens`` options the runs feature registers with.
CODE_LENS_OPTIONS = lsp.CodeLensOptions(resolve_provider=False)

#: ``window/logMessage`` / ``window/showMessage`` levels by name.
MESSAGE_TYPES = {
    "log": lsp.MessageType.Log,
    "info": lsp.MessageType.Info,
    "warning": lsp.MessageType.Warning,
    "error": lsp.MessageType.Error,
}


# --- messages -------------------------------------------------------------------------------


def message(message: str, level: str = "error") -> lsp.ShowMessageParams:
    """``window/showMessage`` params of ``level`` ``info`` / ``warning`` / ``error``."""
    return show_message(MESSAGE_TYPES[level], message)


def message_request(message: str, level: str, actions: Sequence[str]) -> lsp.ShowMessageRequestParams:
    """``window/showMessageRequest`` offering ``actions`` (answered with one title, or nothing)."""
    return lsp.ShowMessageRequestParams(
        type=MESSAGE_TYPES[level], message=message, actions=[lsp.MessageActionItem(title=a) for a in actions]
    )


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


def show_document(uri: str) -> lsp.ShowDocumentParams:
    return lsp.ShowDocumentParams(uri=uri, take_focus=True)
