"""A failing request answers with an LSP error and a log message; the server keeps going."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import sys
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pytest_lsp import LanguageClient

from nexa_lsp.server.app import NexaLanguageServer, RequestFailed
from tests.server.conftest import CONFIG, PROFILES, diagnostics, initialize, open_document, uri, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = 'agent A { prompt: "p" }\nflow f {\n    x = A.run("q")\n}\n'


@pytest_lsp.fixture(scope="module", params=PROFILES, config=CONFIG)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    root = tmp_path_factory.mktemp("robust")
    lsp_client.root = root  # type: ignore[attr-defined]
    await initialize(lsp_client, request.param, [root])
    yield
    await lsp_client.shutdown_session()


async def test_a_request_for_an_unknown_document_fails_cleanly(client: LanguageClient) -> None:
    root: Path = client.root  # type: ignore[attr-defined]
    missing = uri(root / "never-opened.nx")
    with pytest.raises(JsonRpcException, match="not open") as info:
        await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(missing), lsp.Position(0, 0)))
    assert info.value.code == -32803
    await wait_until(lambda: [m for m in client.log_messages if "never-opened.nx" in m.message])
    # the server is still there and answers
    doc = uri(root / "ok.nx")
    open_document(client, doc, TEXT)
    await diagnostics(client, doc, 1)
    hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(doc), lsp.Position(2, 9)))
    assert hover is not None


async def test_bad_command_arguments_are_an_error_not_a_crash(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcException, match="uri"):
        await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="nexa.migrateFile", arguments=[42])
        )
    symbols = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=""))
    assert symbols is not None


async def test_edits_out_of_range_and_for_closed_documents_are_survived(client: LanguageClient) -> None:
    root: Path = client.root  # type: ignore[attr-defined]
    doc = uri(root / "odd.nx")
    open_document(client, doc, TEXT)
    await diagnostics(client, doc, 1)
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=doc, version=2),
            content_changes=[
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(lsp.Position(99, 0), lsp.Position(120, 5)), text="\n// tail\n"
                )
            ],
        )
    )
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri(root / "closed.nx"), version=3),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text="agent")],
        )
    )
    await diagnostics(client, doc, 2)
    symbols = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(doc))
    )
    assert [s.name for s in symbols or []] == ["A", "f"]


async def test_an_exception_in_a_handler_becomes_an_lsp_error_and_a_log() -> None:
    server = NexaLanguageServer()
    logged: list[tuple[str, lsp.MessageType]] = []
    server.log = lambda message, level=lsp.MessageType.Log: logged.append((message, level))  # type: ignore

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def broken(params: lsp.HoverParams) -> None:
        raise ZeroDivisionError("division by zero in a test handler")

    handler = server.protocol.fm.features[lsp.TEXT_DOCUMENT_HOVER]
    with pytest.raises(JsonRpcInternalError, match="ZeroDivisionError"):
        handler(None)
    [(message, level)] = logged
    assert level == lsp.MessageType.Error and "division by zero in a test handler" in message
    assert "textDocument/hover failed: ZeroDivisionError" in message

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def broken_notification(params: lsp.DidSaveTextDocumentParams) -> None:
        raise KeyError("lost")

    assert server.protocol.fm.features[lsp.TEXT_DOCUMENT_DID_SAVE](None) is None
    assert "KeyError" in logged[-1][0]


async def test_internal_errors_keep_their_traceback_and_refusals_do_not(caplog: pytest.LogCaptureFixture) -> None:
    server = NexaLanguageServer()
    logged: list[str] = []
    server.log = lambda message, level=lsp.MessageType.Log: logged.append(message)  # type: ignore
    sent: list[tuple[object, object]] = []
    server.protocol._send_response = lambda msg_id, result=None, error=None: sent.append((msg_id, error))  # type: ignore
    refused: Future[Any] = Future()
    refused.set_exception(RequestFailed("the document is not open"))
    broken: Future[Any] = Future()
    broken.set_exception(JsonRpcInternalError(message="nexa-lsp could not answer: ZeroDivisionError"))
    with caplog.at_level(logging.DEBUG):
        server.protocol._send_handler_result(refused, msg_id=1)  # type: ignore[attr-defined]
        assert not [r for r in caplog.records if r.exc_info]
        server.protocol._send_handler_result(broken, msg_id=2)  # type: ignore[attr-defined]
    assert [msg_id for msg_id, _error in sent] == [1, 2]
    assert logged == ["request: the document is not open"]
    assert [r for r in caplog.records if r.exc_info and "ZeroDivisionError" in str(r.exc_info[1])]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while True:
        line = (await reader.readline()).decode()
        if line in ("\r\n", ""):
            break
        if line.lower().startswith("content-length:"):
            length = int(line.split(":")[1])
    return json.loads(await reader.readexactly(length))  # type: ignore[no-any-return]


async def test_serve_over_tcp() -> None:
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nexa_lsp", "--tcp", f"127.0.0.1:{port}", stderr=asyncio.subprocess.PIPE
    )
    try:
        for _ in range(200):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the server did not listen")
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}},
            }
        ).encode()
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        while True:
            message = await asyncio.wait_for(_read_message(reader), 20)
            if message.get("id") == 1:
                break
        assert message["result"]["serverInfo"]["name"] == "nexa-lsp"
        assert message["result"]["capabilities"]["hoverProvider"]
        writer.close()
    finally:
        proc.terminate()
        await proc.wait()


class RawServer:
    """The server over stdio, driven with hand-made frames."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.notifications: list[dict[str, Any]] = []

    @classmethod
    async def start(cls, stderr: int = asyncio.subprocess.DEVNULL) -> RawServer:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "nexa_lsp",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
        return cls(proc)

    async def notify(self, method: str, params: Any) -> None:
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()
        await self.send(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw)
        await self.proc.stdin.drain()

    async def request(self, msg_id: int, method: str, params: Any, header: bytes = b"Content-Length") -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()
        await self.send(header + b": %d\r\n\r\n" % len(body) + body)
        assert self.proc.stdout is not None
        while True:
            message = await asyncio.wait_for(_read_message(self.proc.stdout), 20)
            if message.get("id") == msg_id:
                return message
            if "id" not in message:
                self.notifications.append(message)

    async def stop(self) -> None:
        self.proc.kill()
        await self.proc.wait()


async def test_params_that_do_not_fit_get_an_invalid_params_answer() -> None:
    server = await RawServer.start()
    try:
        await server.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        answer = await server.request(
            2,
            "textDocument/hover",
            {"textDocument": {"uri": "file:///x.nx"}, "position": {"line": "one", "character": None}},
        )
        assert answer["error"]["code"] == -32602
        again = await server.request(3, "workspace/symbol", {"query": ""})
        assert again["result"] == []
    finally:
        await server.stop()


async def test_frames_with_odd_headers_do_not_deafen_the_server() -> None:
    server = await RawServer.start()
    try:
        init = await server.request(
            1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}}, header=b"content-length"
        )  # header names are case-insensitive
        assert "capabilities" in init["result"]
        await server.send(b"Content-Length: many\r\n\r\n{}")  # an unusable length: that frame is skipped
        answer = await server.request(2, "workspace/symbol", {"query": ""})
        assert answer["result"] == []
    finally:
        await server.stop()


async def test_refusals_are_one_log_line_and_no_traceback_on_stderr() -> None:
    server = await RawServer.start(stderr=asyncio.subprocess.PIPE)
    try:
        await server.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        await server.notify("initialized", {})
        refused = [
            await server.request(2, "workspace/executeCommand", {"command": "nexa.migrateFile", "arguments": [42]}),
            await server.request(
                3,
                "textDocument/hover",
                {"textDocument": {"uri": "file:///never-open.nx"}, "position": {"line": 0, "character": 0}},
            ),
            await server.request(4, "workspace/executeCommand", {"command": "nexa.noSuchCommand", "arguments": []}),
        ]
        assert [r["error"]["code"] for r in refused] == [-32803, -32803, -32602]
        answered = await server.request(5, "workspace/symbol", {"query": ""})
        assert answered["result"] == []
        await server.notify("$/cancelRequest", {"id": 5})  # the client no longer needs what it got
        await server.request(6, "shutdown", None)
        await server.notify("exit", None)
        assert server.proc.stderr is not None
        stderr = (await asyncio.wait_for(server.proc.stderr.read(), 20)).decode()
        await asyncio.wait_for(server.proc.wait(), 20)
    finally:
        if server.proc.returncode is None:
            await server.stop()
    assert "Traceback" not in stderr and "Exception occurred" not in stderr
    assert "Cancel notification" not in stderr
    logged = [n["params"]["message"] for n in server.notifications if n["method"] == "window/logMessage"]
    for needle in ("nexa.migrateFile takes", "never-open.nx", "nexa.noSuchCommand"):
        lines = [m for m in logged if needle in m]
        assert len(lines) == 1 and "\n" not in lines[0], (needle, logged)
