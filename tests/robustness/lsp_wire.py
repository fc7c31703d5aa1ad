"""A raw LSP client over a server's stdin/stdout, able to send anything at all.

pytest-lsp speaks correct LSP; the hostile traffic tests need to send broken frames,
invalid JSON and out-of-order messages, so this client writes bytes itself. A reader
thread parses the server's frames; server-to-client requests are answered (with empty
configuration, ``null`` otherwise) so the server never waits on us.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.robustness.helpers import subprocess_env

SERVER_COMMAND = [sys.executable, "-m", "nexa_lsp"]


def frame(payload: bytes) -> bytes:
    return b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload


class ServerGone(AssertionError):
    pass


class WireClient:
    def __init__(self, cwd: Path, command: list[str] | None = None) -> None:
        self.process = subprocess.Popen(
            command or SERVER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=subprocess_env(),
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        self.responses: dict[Any, dict[str, Any]] = {}
        self.stderr_lines: list[str] = []
        self._next_id = 1000
        self._lock = threading.Lock()
        self._condition = threading.Condition(self._lock)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # --- reading -------------------------------------------------------------------------------
    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = None
            while True:
                line = stdout.readline()
                if not line:
                    with self._condition:
                        self._condition.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.lower() == "content-length":
                    length = int(value.strip())
            if length is None:
                continue
            body = stdout.read(length)
            message = json.loads(body)
            if "method" in message and "id" in message:
                self._answer_server_request(message)
            with self._condition:
                if "method" in message and "id" not in message:
                    self.notifications.append(message)
                elif "id" in message and "method" not in message:
                    self.responses[message["id"]] = message
                self._condition.notify_all()

    def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        for line in stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace"))

    def _answer_server_request(self, message: dict[str, Any]) -> None:
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [{} for _ in message.get("params", {}).get("items", [])]
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    # --- writing ---------------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ServerGone(f"the server closed its input: {self.describe_exit()}") from exc

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(frame(json.dumps(message, ensure_ascii=False).encode("utf-8")))

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def request_async(self, method: str, params: Any = None) -> int:
        with self._lock:
            self._next_id += 1
            request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def wait_response(self, request_id: Any, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._condition:
            while request_id not in self.responses:
                if self.process.poll() is not None:
                    raise ServerGone(f"no answer to {request_id}: {self.describe_exit()}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no answer to request {request_id} within {timeout:g}s")
                self._condition.wait(min(remaining, 0.2))
            return self.responses[request_id]

    def request(self, method: str, params: Any = None, timeout: float = 20.0) -> dict[str, Any]:
        return self.wait_response(self.request_async(method, params), timeout)

    def wait_notification(
        self,
        method: str,
        where: Callable[[dict[str, Any]], bool] = lambda m: True,
        timeout: float = 20.0,
        after: int = 0,
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._condition:
            while True:
                for message in self.notifications[after:]:
                    if message["method"] == method and where(message):
                        return message
                if self.process.poll() is not None:
                    raise ServerGone(f"no {method}: {self.describe_exit()}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no {method} within {timeout:g}s")
                self._condition.wait(min(remaining, 0.2))

    def describe_exit(self) -> str:
        code = self.process.poll()
        tail = "".join(self.stderr_lines[-20:])
        return f"exit code {code}; stderr:\n{tail}"

    # --- session ---------------------------------------------------------------------------------
    def initialize(self, root: Path, pull: bool = False) -> dict[str, Any]:
        text_document: dict[str, Any] = {
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "publishDiagnostics": {"relatedInformation": True},
            "synchronization": {"didSave": True},
        }
        if pull:
            text_document["diagnostic"] = {"dynamicRegistration": False}
        answer = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {"textDocument": text_document, "workspace": {"configuration": True}},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            },
            timeout=60,
        )
        assert "result" in answer, answer
        self.notify("initialized", {})
        return answer

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "nexa", "version": version, "text": text}},
        )

    def close(self, timeout: float = 20.0) -> int:
        """shutdown + exit; returns the exit code."""
        if self.process.poll() is None:
            try:
                self.request("shutdown", timeout=timeout)
                self.notify("exit")
            except (ServerGone, AssertionError):
                pass
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("the server did not exit after shutdown/exit") from None
        finally:
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()
