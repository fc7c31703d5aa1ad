"""Helpers of the runs tests (no tests here): a workspace with agents, a scripted provider
script and tool implementations that record every call, and a client session running the
real server (``python -m nexa_lsp``) over stdio.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.run_state import RunState
from tests.server.conftest import (
    SERVER_COMMAND,
    TIMEOUT,
    diagnostics,
    initialize,
    is_push,
    make_client,
    open_document,
    uri,
    wait_until,
)

T = TypeVar("T")

RUN_KIND = "source.nexa.run"
VSCODE = "visual_studio_code"
NEOVIM = "neovim@v0.10.0"

AGENTS = """nexa 3.0;

tool lookup {
    python: "ws_tools.lookup"
}

tool publish {
    python: "ws_tools.publish",
    approval: "required"
}

agent Analyst uses lookup, publish {
    prompt: "Work from evidence.",
    model: "scripted/demo"
}

agent Greeter {
    prompt: "Greet the user warmly.",
    model: "scripted/demo"
}

flow main {
    r = Greeter.execute("Say hello")
    if (r.success) {
        s = Greeter.continue(r, "Now say goodbye")
    }
}
"""

TOOLS = '''"""Tool implementations of the test workspace: every call (and the import) is recorded."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
with open(HERE / "tools_imported.log", "a", encoding="utf-8") as log:
    log.write("imported\\n")


def _record(name, arguments):
    with open(HERE / "tool_calls.log", "a", encoding="utf-8") as log:
        log.write(name + " " + repr(sorted(arguments.items())) + "\\n")


def lookup(**arguments):
    _record("lookup", arguments)
    return "evidence: badge 4411 at 02:13"


def publish(**arguments):
    _record("publish", arguments)
    return "published"


def slow(**arguments):
    import time

    _record("slow", arguments)
    time.sleep(1.0)
    return "slow result"


def env_echo(**arguments):
    import os

    _record("env_echo", arguments)
    return "LOOP_API_KEY=" + os.environ.get("LOOP_API_KEY", "")
'''


@dataclass
class Workspace:
    folder: Path
    doc: Path
    text: str

    @property
    def uri(self) -> str:
        return uri(self.doc)

    @property
    def store(self) -> Path:
        return self.folder / ".nexa" / "runs.sqlite3"

    def tool_calls(self) -> list[str]:
        log = self.folder / "tool_calls.log"
        return log.read_text(encoding="utf-8").split() if log.exists() else []

    def tool_call_names(self) -> list[str]:
        log = self.folder / "tool_calls.log"
        if not log.exists():
            return []
        return [line.split()[0] for line in log.read_text(encoding="utf-8").splitlines()]

    def rows(self) -> list[tuple[str, str, float, str]]:
        """Every stored run: id, status, updated_at and the whole saved state."""
        if not self.store.exists():
            return []
        with sqlite3.connect(self.store) as connection:
            return sorted(connection.execute("SELECT run_id, status, updated_at, state FROM runs").fetchall())

    def status(self, run_id: str) -> str | None:
        return next((row[1] for row in self.rows() if row[0] == run_id), None)


def make_workspace(
    root: Path, replies: list[dict[str, Any]], *, text: str = AGENTS, nxs: str = "", fallback: str | None = None
) -> Workspace:
    folder = root / "ws"
    folder.mkdir(parents=True)
    doc = folder / "agents.nx"
    doc.write_text(text, encoding="utf-8")
    (folder / "ws_tools.py").write_text(TOOLS, encoding="utf-8")
    script: dict[str, Any] = {"replies": replies}
    if fallback is not None:
        script["fallback"] = fallback
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    (folder / "project.nxs").write_text(f'SCRIPT = "script.json"\n{nxs}', encoding="utf-8")
    return Workspace(folder, doc, text)


def clean_environment(**extra: str) -> dict[str, str]:
    """The test process's environment without provider settings of the machine."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL"))
        and k not in ("API_KEY", "BASE_URL", "NEXA_PROVIDER", "NEXA_SCRIPT")
    }
    env.update(extra)
    return env


def as_plain(value: Any) -> Any:
    """A notification's params as plain JSON data (pygls hands custom params over as namedtuples)."""
    if hasattr(value, "_asdict"):
        return {k: as_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [as_plain(v) for v in value]
    return value


def runs_client() -> LanguageClient:
    """The shared test client, also recording ``nexa/runsChanged`` and lens refreshes."""
    client = make_client()
    converter = client.protocol._converter

    def command_or_code_action(obj: Any, _: type) -> lsp.Command | lsp.CodeAction:
        # lsprotocol's own hook reads every object with a "command" key as a Command, so a
        # CodeAction that runs a command would arrive as a Command (editors check the type)
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, lsp.Command)  # type: ignore[no-any-return]
        return converter.structure(obj, lsp.CodeAction)  # type: ignore[no-any-return]

    converter.register_structure_hook(lsp.Command | lsp.CodeAction, command_or_code_action)  # type: ignore[arg-type]
    client.runs_changed = []  # type: ignore[attr-defined]
    client.lens_refreshes = 0  # type: ignore[attr-defined]

    @client.feature("nexa/runsChanged")
    def runs_changed(params: Any) -> None:
        data = (
            params if isinstance(params, dict) else {k: getattr(params, k, None) for k in ("run_id", "agent", "status")}
        )
        client.runs_changed.append(data)  # type: ignore[attr-defined]

    client.run_updates = []  # type: ignore[attr-defined]

    @client.feature("nexa/runUpdated")
    def run_updated(params: Any) -> None:
        client.run_updates.append(as_plain(params))  # type: ignore[attr-defined]

    client.message_requests = []  # type: ignore[attr-defined]
    client.message_answers = []  # type: ignore[attr-defined]

    @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem | None:
        """Record the request; answer with the next queued title that it offers (else dismiss)."""
        client.message_requests.append(params)  # type: ignore[attr-defined]
        offered = [a.title for a in params.actions or []]
        answers: list[str] = client.message_answers  # type: ignore[attr-defined]
        for index, title in enumerate(answers):
            if title in offered:
                del answers[index]
                return lsp.MessageActionItem(title=title)
        return None

    client.protocol.fm.features.pop(lsp.WORKSPACE_CODE_LENS_REFRESH, None)  # the shared client's no-op

    @client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params: None) -> None:
        client.lens_refreshes += 1  # type: ignore[attr-defined]

    return client


@asynccontextmanager
async def session(
    profile: str,
    folder: Path,
    *,
    env: dict[str, str] | None = None,
    options: dict[str, Any] | None = None,
    configuration: dict[str, Any] | None = None,
    capabilities: lsp.ClientCapabilities | None = None,
    prompts: bool | None = None,
) -> AsyncIterator[LanguageClient]:
    """A client connected to a fresh ``python -m nexa_lsp`` for ``folder``.

    The VS Code profile stands for VS Code with the Nexa extension, which declares
    ``experimental.nexa.runPrompts`` (it prompts for a run's task and input itself);
    ``prompts=False`` leaves that out (another client with lenses)."""
    if capabilities is None and (profile == VSCODE if prompts is None else prompts):
        capabilities = client_capabilities(profile)
        capabilities.experimental = {"nexa": {"runPrompts": True}}
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=runs_client, server_env=env or clean_environment()
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    if configuration is not None:
        client.set_configuration(configuration)
    try:
        if capabilities is None:
            await initialize(client, profile, [folder], options)
        else:
            await client.initialize_session(
                lsp.InitializeParams(
                    capabilities=capabilities,
                    root_uri=uri(folder),
                    workspace_folders=[lsp.WorkspaceFolder(uri=uri(folder), name=folder.name)],
                    initialization_options=options,
                )
            )
        yield client
    finally:
        try:
            await client.shutdown_session()
        finally:
            await client.stop()


async def eventually(probe: Callable[[], Awaitable[T]], accept: Callable[[T], bool]) -> T:
    """Ask again until the answer is accepted (e.g. after settings reached the server)."""
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while True:
        value = await probe()
        if accept(value):
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out; last answer: {value!r}")
        await asyncio.sleep(0.03)


async def open_workspace_document(client: LanguageClient, ws: Workspace) -> None:
    open_document(client, ws.uri, ws.text)


async def command(client: LanguageClient, name: str, **argument: Any) -> dict[str, Any]:
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command=name, arguments=[argument]))
    assert isinstance(result, dict), result
    return result


async def refusal(client: LanguageClient, name: str, **argument: Any) -> str:
    """Send a command that must be refused: returns the LSP error's message, after checking
    the same reason was shown with ``window/showMessage`` (type Error)."""
    shown = len(client.messages)
    try:
        await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command=name, arguments=[argument]))
    except JsonRpcException as exc:
        message = str(exc.message)
    else:
        raise AssertionError(f"{name} was not refused")
    await wait_until(lambda: len(client.messages) > shown)
    errors = [m for m in client.messages[shown:] if m.type == lsp.MessageType.Error]
    assert errors, client.messages[shown:]
    assert message in errors[-1].message
    return message


def changes(client: LanguageClient) -> list[dict[str, Any]]:
    return list(client.runs_changed)  # type: ignore[attr-defined]


async def wait_status(client: LanguageClient, run_id: str, *statuses: str) -> dict[str, Any]:
    """Wait for ``nexa/runsChanged`` saying ``run_id`` reached one of ``statuses``."""

    def reached() -> dict[str, Any] | None:
        return next((c for c in changes(client) if c["run_id"] == run_id and c["status"] in statuses), None)

    found: dict[str, Any] = await wait_until(reached)
    return found


async def waiting_run(client: LanguageClient, ws: Workspace) -> str:
    """Execute ``Analyst`` (its script asks for ``publish``) and wait until it waits for approval."""
    run_id = str((await command(client, "nexa.execute", uri=ws.uri, agent="Analyst", task="Analyze"))["run_id"])
    await wait_status(client, run_id, "waiting_approval")
    return run_id


async def lenses(client: LanguageClient, ws: Workspace) -> list[lsp.CodeLens]:
    found = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=ws.uri))
    )
    return list(found or [])


async def run_actions(
    client: LanguageClient,
    ws: Workspace,
    needle: str = "agent Greeter",
    diagnostics: list[lsp.Diagnostic] | None = None,
) -> list[lsp.CodeAction]:
    """The ``source.nexa.run`` code actions at ``needle``."""
    start = ws.text.index(needle)
    line = ws.text.count("\n", 0, start)
    rng = lsp.Range(start=lsp.Position(line=line, character=0), end=lsp.Position(line=line, character=len(needle)))
    found = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=ws.uri),
            range=rng,
            context=lsp.CodeActionContext(diagnostics=diagnostics or [], only=[RUN_KIND]),
        )
    )
    return [a for a in found or [] if isinstance(a, lsp.CodeAction)]


@dataclass(frozen=True)
class Offer:
    title: str
    command: str
    argument: dict[str, Any]


async def offers(client: LanguageClient, profile: str, ws: Workspace, needle: str = "agent Greeter") -> list[Offer]:
    """What the editor offers for the agent at ``needle``: code lenses in VS Code (their line),
    ``source.nexa.run`` code actions in Neovim (which has no code lenses)."""
    found: list[Offer] = []
    if profile == VSCODE:
        line = ws.text.count("\n", 0, ws.text.index(needle))
        for lens in await lenses(client, ws):
            if lens.range.start.line == line and lens.command is not None:
                found.append(Offer(lens.command.title, lens.command.command, dict((lens.command.arguments or [{}])[0])))
    else:
        for action in await run_actions(client, ws, needle):
            assert action.kind == RUN_KIND
            assert action.command is not None
            found.append(Offer(action.title, action.command.command, dict((action.command.arguments or [{}])[0])))
    return found


def offered_actions(found: list[Offer], run_id: str) -> set[str]:
    """The commands offered for ``run_id``, e.g. ``{"nexa.continue", "nexa.showRun"}``."""
    return {o.command for o in found if o.argument.get("run_id") == run_id}


def progress_of(client: LanguageClient) -> dict[Any, list[Any]]:
    return {token: list(values) for token, values in client.progress_reports.items()}


async def diagnostic_with(
    client: LanguageClient, doc_uri: str, code: str, *, present: bool = True
) -> lsp.Diagnostic | None:
    """Wait until the document's diagnostics (latest pushed, or pulled again) have - or no
    longer have - one with ``code``; returns it."""
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while True:
        if is_push(client):
            published = [p for p in client.published if p.uri == doc_uri]  # type: ignore[attr-defined]
            items = list(published[-1].diagnostics) if published else []
        else:
            items = await diagnostics(client, doc_uri)
        found = next((d for d in items if d.code == code), None)
        if (found is not None) == present:
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {code} {'to appear' if present else 'to go'}: {items}")
        await asyncio.sleep(0.03)


_CRASH = """
import json, os, sys
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.declarations import load_agent
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.run_state import RunConfig

doc, name, task, replies, mode, store_path, folder = json.loads(sys.argv[1])
store = SQLiteCheckpointStore(store_path)


def save(state):
    store.save(state)
    asked = any(m.tool_calls for m in state.history) and not state.journal
    started = any(e.status == "started" for e in state.journal)
    if (mode == "asked" and asked) or (mode == "started" and started):
        print(state.run_id, flush=True)
        os._exit(0)  # killed: nothing after this save happens


load_agent(doc, name).execute(
    task, config=RunConfig(working_directory=folder), save=save, provider=ScriptedProvider({"replies": replies})
)
sys.exit(3)
"""


def crashed_run(ws: Workspace, agent_name: str, task: str, replies: list[dict[str, Any]], mode: str) -> RunState:
    """Run ``agent_name`` in another process that dies right after a save: once the model
    asked for a tool (``mode="asked"``), or once the journal says the tool started
    (``mode="started"``, an unknown outcome). The store keeps that ``running`` state, owned
    by a process that is gone - an interrupted run. No tool ever runs."""
    argument = json.dumps([str(ws.doc), agent_name, task, replies, mode, str(ws.store), str(ws.folder)])
    done = subprocess.run(
        [sys.executable, "-c", _CRASH, argument], capture_output=True, text=True, timeout=60, env=clean_environment()
    )
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip()
    with SQLiteCheckpointStore(ws.store) as store:
        state = store.load(run_id)
        assert store.is_interrupted(run_id)
    assert state.status.value == "running"
    return state
