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
  transcripts, logs, progress or diagnostics; ``providers``, ``nexa_lsp.runtime.redaction``).

Registering the feature loads none of its implementation (``RUN_COMMANDS``, ``RUN_DETAILS``
and ``RUN_ACTION_KIND`` are names): the runs modules, the runtime and the syntax tree are
imported after the first diagnostics were sent (``server/startup.py``), and the feature is
built (``LazyRunFeatures.features``) on the event loop by the first handler, code action
request or run-aware check of a document with a store; the agent module and the providers
(httpx) load only when a run needs them. The capabilities announced in ``initialize`` are
the same as with the feature built.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexa_lsp.server import from_lsp
from nexa_lsp.server.app import RequestFailed
from nexa_lsp.server.documents import uri_of_path
from nexa_lsp.server.runs import protocol
from nexa_lsp.server.to_lsp import runs as to_lsp_runs

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.server.documents import DocumentState
    from nexa_lsp.server.runs.commands import RunCommands
    from nexa_lsp.server.runs.features import RunFeatures
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import SourceFile

__all__ = ["RUN_ACTION_KIND", "RUN_COMMANDS", "RUN_DETAILS", "LazyRunFeatures", "RunFeatures", "register"]

#: The code action kind of the run actions (``ide.run_commands.RUN_ACTION_KIND``).
RUN_ACTION_KIND = "source.nexa.run"
#: Where a folder's store is when ``nexa.runs.store`` is empty (``server.runs.stores.DEFAULT_STORE``).
DEFAULT_STORE = ".nexa/runs.sqlite3"
#: The custom request of a run panel (``server.runs.details.RUN_DETAILS``).
RUN_DETAILS = "nexa/runDetails"
#: Run command -> the ``RunCommands`` handler it calls, by name (docs/commands.md).
RUN_COMMANDS: dict[str, Callable[[RunCommands, Mapping[str, Any]], Awaitable[dict[str, Any]]]] = {
    "nexa.execute": lambda c, a: c.execute(a),
    "nexa.resume": lambda c, a: c.resume(a),
    "nexa.continue": lambda c, a: c.continue_(a),
    "nexa.approve": lambda c, a: c.decide(a, True),
    "nexa.deny": lambda c, a: c.decide(a, False),
    "nexa.cancel": lambda c, a: c.cancel(a),
    "nexa.recover": lambda c, a: c.recover(a),
    "nexa.showRun": lambda c, a: c.show_run(a),
    "nexa.listRuns": lambda c, a: c.list_runs(a),
}


def __getattr__(name: str) -> Any:
    if name == "RunFeatures":
        from nexa_lsp.server.runs.features import RunFeatures  # lazy: start-up

        return RunFeatures
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class LazyRunFeatures:
    """The runs feature of one server, built (its modules imported) on first use."""

    def __init__(self, server: NexaLanguageServer) -> None:
        self.server = server
        self._features: RunFeatures | None = None

    @property
    def loaded(self) -> bool:
        return self._features is not None

    @property
    def features(self) -> RunFeatures:
        if self._features is None:
            from nexa_lsp.server.runs.features import RunFeatures  # lazy: start-up

            self._features = RunFeatures(self.server)
        return self._features

    def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return self.features.views.code_actions(params)

    def diagnostics_for(self, state: DocumentState, source: SourceFile) -> list[Diagnostic]:
        """The run-aware diagnostics; before the feature is built, none while no store exists
        for the document (every one names a stored run, and no run is live yet)."""
        if self._features is None and (state.path is None or not self.any_store_for(state.path)):
            return []
        return self.features.views.diagnostics_for(state, source)

    def any_store_for(self, path: Path) -> bool:
        """Whether a store file exists where the store of ``path`` can be: that of each
        workspace folder or of the file's directory (``RunStores.store_path`` picks one)."""
        for folder in {*self.server.documents.folders, path.parent}:
            folder_settings = self.server.settings_for(uri_of_path(folder / "_"))
            store = Path(folder_settings.runs_store or DEFAULT_STORE).expanduser()
            if (store if store.is_absolute() else folder / store).is_file():
                return True
        return False

    def settings_changed(self) -> None:
        """Nothing to refresh before the feature was first used (no lens was answered)."""
        if self._features is not None:
            self._features.settings_changed()

    def stop_all(self) -> None:
        if self._features is not None:
            self._features.stop_all()


def register(server: NexaLanguageServer) -> LazyRunFeatures:
    """Register code lenses, run code actions, run-aware diagnostics and the run commands."""
    lazy = LazyRunFeatures(server)

    @server.feature(protocol.CODE_LENS, to_lsp_runs.CODE_LENS_OPTIONS)
    async def code_lens(params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        return await lazy.features.views.code_lens(params)

    @server.feature(RUN_DETAILS)
    async def run_details(params: Any) -> dict[str, Any]:  # a namedtuple (pygls, custom method)
        from nexa_lsp.server.runs.arguments import Refused  # lazy: start-up

        try:
            return await lazy.features.details.request(from_lsp.custom_params(params))
        except (Refused, TypeError) as exc:  # a data request: answered with the reason, not shown
            raise RequestFailed(str(exc)) from None

    server.code_action_providers.append(lazy.code_actions)
    if RUN_ACTION_KIND not in server.code_action_kinds:
        server.code_action_kinds.append(RUN_ACTION_KIND)
    server.diagnostic_providers.append(lazy.diagnostics_for)
    server.settings_listeners.append(lazy.settings_changed)

    def command(name: str, call: Callable[[RunCommands, Mapping[str, Any]], Awaitable[dict[str, Any]]]) -> None:
        async def run_command(ls: object, *arguments: object) -> dict[str, Any]:
            from nexa_lsp.server.runs.arguments import Refused, command_argument  # lazy: start-up

            features = lazy.features
            try:
                return await call(features.commands, command_argument(name, arguments))
            except Refused as exc:
                raise features.refuse(str(exc)) from None

        run_command.__name__ = name.replace(".", "_")
        server.command(name)(run_command)

    for name, call in RUN_COMMANDS.items():
        command(name, call)

    if protocol.SHUTDOWN not in server.protocol.fm.features:

        @server.feature(protocol.SHUTDOWN)
        def shutdown(params: None) -> None:
            lazy.stop_all()

    return lazy
