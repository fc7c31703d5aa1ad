"""Runs inside the editor: code lenses, run code actions, run-aware diagnostics and the
``nexa.*`` run commands of docs/commands.md, with runs executing in the background.

* A run is driven on its own thread by the runtime (``NexaAgent.execute`` /
  ``continue_run``); the event loop only receives its saves and events, so hover,
  completion and every other request keep being answered while a run streams (``live``).
* Every step is saved through the runtime's ``save`` into the workspace's store
  (``nexa.runs.store``, default ``.nexa/runs.sqlite3`` in the workspace folder; ``stores``).
* Work-done progress reports the run's status, streamed text and tool activity;
  cancelling the progress cancels the run (``progress``). ``nexa.showRun`` writes a
  Markdown transcript under ``.nexa/transcripts/`` (next to the store), opens it with
  ``window/showDocument`` and rewrites it while the run goes on (``transcripts``).
* After a run changes state: ``nexa/runsChanged``, ``workspace/codeLens/refresh`` and the
  run-aware diagnostics (pushed again, or ``workspace/diagnostic/refresh``; ``features``).
* A refused command answers with an LSP error whose message is the runtime's reason and
  shows it with ``window/showMessage``; nothing is saved or changed (``commands``).
* Nothing runs unless a command is invoked: lenses, actions and diagnostics only read an
  existing store (never create one) and build agents without importing user code (``views``).
* Provider keys come from the environment or from the client setting
  ``nexa.runs.providerSettings``; they go to the provider only (never to the store,
  transcripts, logs, progress or diagnostics; ``providers``, ``redaction``).

Importing this package and registering it loads neither the runtime's agent module nor
the providers (httpx): those load when a run first needs them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from nexa_lsp.ide.run_commands import RUN_ACTION_KIND
from nexa_lsp.server.app import RequestFailed
from nexa_lsp.server.runs import protocol
from nexa_lsp.server.runs.arguments import Refused, command_argument
from nexa_lsp.server.runs.details import RUN_DETAILS
from nexa_lsp.server.runs.features import RunFeatures

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from nexa_lsp.server.app import NexaLanguageServer

__all__ = ["RunFeatures", "register"]


def register(server: NexaLanguageServer) -> RunFeatures:
    """Register code lenses, run code actions, run-aware diagnostics and the run commands."""
    features = RunFeatures(server)
    commands = features.commands

    @server.feature(protocol.CODE_LENS, protocol.CODE_LENS_OPTIONS)
    async def code_lens(params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        return await features.views.code_lens(params)

    @server.feature(RUN_DETAILS)
    async def run_details(params: Any) -> dict[str, Any]:  # a namedtuple (pygls, custom method)
        try:
            return await features.details.request(protocol.custom_params(params))
        except (Refused, TypeError) as exc:  # a data request: answered with the reason, not shown
            raise RequestFailed(str(exc)) from None

    server.code_action_providers.append(features.views.code_actions)
    if RUN_ACTION_KIND not in server.code_action_kinds:
        server.code_action_kinds.append(RUN_ACTION_KIND)
    server.diagnostic_providers.append(features.views.diagnostics_for)
    server.settings_listeners.append(features.settings_changed)

    def command(name: str, handler: Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]]) -> None:
        async def run_command(ls: object, *arguments: object) -> dict[str, Any]:
            try:
                return await handler(command_argument(name, arguments))
            except Refused as exc:
                raise features.refuse(str(exc)) from None

        run_command.__name__ = name.replace(".", "_")
        server.command(name)(run_command)

    command("nexa.execute", commands.execute)
    command("nexa.resume", commands.resume)
    command("nexa.continue", commands.continue_)
    command("nexa.approve", lambda a: commands.decide(a, True))
    command("nexa.deny", lambda a: commands.decide(a, False))
    command("nexa.cancel", commands.cancel)
    command("nexa.recover", commands.recover)
    command("nexa.showRun", commands.show_run)
    command("nexa.listRuns", commands.list_runs)

    if protocol.SHUTDOWN not in server.protocol.fm.features:

        @server.feature(protocol.SHUTDOWN)
        def shutdown(params: None) -> None:
            features.stop_all()

    return features
