"""A minimal LSP client for benchmarks: JSON-RPC frames over a server's stdio.

It decodes frames with :func:`json.loads` only (no lsprotocol conversion), and
stamps each message when its frame has been read and decoded, so the figures
measure the server, the pipe and a plain JSON decode rather than a client
library's conversions; the decode time of each message is kept too. Requests the server sends
are answered at once (``workspace/configuration`` with nulls, anything else
with null).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any


def utf16_position(text: str, offset: int) -> dict[str, int]:
    """The LSP position of a code-point ``offset`` (UTF-16 columns)."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": len(text[start:offset].encode("utf-16-le")) // 2}


class RawClient:
    """One server process and the messages it sent, with arrival times."""

    def __init__(self, process: asyncio.subprocess.Process, spawned: float) -> None:
        self.process = process
        self.spawned = spawned  # perf_counter() just before the process was started
        self._next_id = 1
        self._pending: dict[int, asyncio.Future[tuple[Any, float]]] = {}
        self.diagnostics: dict[tuple[str, int | None], float] = {}
        self.last_diagnostics: dict[str, list[Any]] = {}  # the latest published list per URI
        #: Seconds this client spent in ``json.loads`` of each published version's frame, and of
        #: the last message read (part of every figure: a message is stamped once decoded).
        self.diagnostics_decode: dict[tuple[str, int | None], float] = {}
        self.last_decode = 0.0
        self._arrived = asyncio.Event()
        self.errors: list[str] = []
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> RawClient:
        spawned = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            limit=1 << 26,
        )
        return cls(process, spawned)

    @property
    def pid(self) -> int:
        return self.process.pid

    def rss_mb(self) -> float | None:
        """Resident memory of the server process (Linux ``/proc``)."""
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    # ------------------------------------------------------------------ wire

    async def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.process.stdin.drain()

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = 0
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = await stdout.readexactly(length)
            read = time.perf_counter()
            gc.disable()  # the decode, not this client's garbage collections (its heap grows with the run)
            try:
                message = json.loads(body)
            finally:
                gc.enable()
            arrived = time.perf_counter()
            self.last_decode = arrived - read
            await self._dispatch(message, arrived)

    async def _dispatch(self, message: dict[str, Any], arrived: float) -> None:
        if "id" in message and "method" not in message:
            future = self._pending.pop(message["id"], None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RuntimeError(f"{message['error']}"))
                else:
                    future.set_result((message.get("result"), arrived))
            return
        method = message.get("method")
        params = message.get("params") or {}
        if "id" in message:  # a request from the server
            result: Any = None
            if method == "workspace/configuration":
                result = [None for _ in params.get("items", [])]
            await self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif method == "textDocument/publishDiagnostics":
            self.diagnostics[(params["uri"], params.get("version"))] = arrived
            self.last_diagnostics[params["uri"]] = params.get("diagnostics", [])
            self.diagnostics_decode[(params["uri"], params.get("version"))] = self.last_decode
            self._arrived.set()
        elif method == "window/logMessage" and params.get("type") == 1:
            self.errors.append(params.get("message", ""))
            print(f"server error: {params.get('message', '')[:300]}", file=sys.stderr)

    # ------------------------------------------------------------------ API

    async def request(self, method: str, params: Any, timeout: float = 600.0) -> tuple[Any, float]:
        """The result and the seconds from sending the request to its response arriving."""
        result, sent, arrived = await self.call(method, params, timeout)
        return result, arrived - sent

    async def call(self, method: str, params: Any, timeout: float = 600.0) -> tuple[Any, float, float]:
        """The result, when the request was sent and when its response arrived."""
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[tuple[Any, float]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        sent = time.perf_counter()
        await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        result, arrived = await asyncio.wait_for(future, timeout)
        return result, sent, arrived

    async def notify(self, method: str, params: Any) -> float:
        """Send a notification; returns the time it was sent."""
        sent = time.perf_counter()
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})
        return sent

    async def diagnostics_of(self, uri: str, version: int | None, timeout: float = 600.0) -> float:
        """The arrival time of the diagnostics published for ``uri`` at ``version``."""
        deadline = time.perf_counter() + timeout
        while (uri, version) not in self.diagnostics:
            self._arrived.clear()
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError(f"no diagnostics for {uri} version {version}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)
        return self.diagnostics[(uri, version)]

    async def initialize(
        self, capabilities: dict[str, Any], options: dict[str, Any] | None = None, root: Path | None = None
    ) -> tuple[dict[str, Any], float]:
        """``initialize`` then ``initialized``; the server's capabilities and the time since spawning."""
        params: dict[str, Any] = {
            "processId": None,
            "rootUri": root.as_uri() if root is not None else None,
            "capabilities": capabilities,
            "initializationOptions": options,
        }
        if root is not None:
            params["workspaceFolders"] = [{"uri": root.as_uri(), "name": root.name}]
        result, _seconds = await self.request("initialize", params)
        done = time.perf_counter()
        await self.notify("initialized", {})
        return result.get("capabilities", {}), done - self.spawned

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, timeout=30)
            await self.notify("exit", None)
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        self._reader.cancel()


class Document:
    """An open document's text, kept in step with the edits sent."""

    def __init__(self, client: RawClient, uri: str, text: str) -> None:
        self.client = client
        self.uri = uri
        self.text = text
        self.version = 1

    async def open(self) -> float:
        return await self.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": self.uri, "languageId": "nexa", "version": 1, "text": self.text}},
        )

    async def replace(self, start: int, end: int, new_text: str) -> float:
        """Send an incremental change replacing ``[start, end)``; returns when it was sent."""
        change = {
            "range": {"start": utf16_position(self.text, start), "end": utf16_position(self.text, end)},
            "text": new_text,
        }
        self.text = self.text[:start] + new_text + self.text[end:]
        self.version += 1
        return await self.client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": [change]},
        )

    def position(self, offset: int) -> dict[str, int]:
        return utf16_position(self.text, offset)

    async def close(self) -> None:
        await self.client.notify("textDocument/didClose", {"textDocument": {"uri": self.uri}})
