"""A real HTTP server on 127.0.0.1 for provider tests: records requests, plays scripted answers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    """One scripted HTTP answer. ``chunks`` are written one by one (with ``chunk_delay``)."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunk_delay: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def sse(*events: Any, event_names: list[str] | None = None, done: bool = False) -> list[bytes]:
    """SSE chunks for JSON ``events`` (``event:`` lines when names are given)."""
    chunks = []
    for index, event in enumerate(events):
        data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
        name = f"event: {event_names[index]}\n" if event_names else ""
        chunks.append(f"{name}data: {data}\n\n".encode())
    if done:
        chunks.append(b"data: [DONE]\n\n")
    return chunks


def json_answer(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, [json.dumps(data).encode()], "application/json", headers or {})


def chat_text(*pieces: str, usage: tuple[int, int] = (11, 4)) -> Answer:
    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    chunks += [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    chunks.append({"choices": [], "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]}})
    return Answer(chunks=sse(*chunks, done=True))


class LoopbackServer:
    """Serves ``answers`` in order (the last one repeats) and records every request."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with server._lock:
                    server.requests.append(
                        Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    index = len(server.requests) - 1
                    answer = server.answers[min(index, len(server.answers) - 1)]
                if answer.delay:
                    time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    self.send_header("content-type", answer.content_type)
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    self.send_header("connection", "close")
                    self.end_headers()
                    for chunk in answer.chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        if answer.chunk_delay:
                            time.sleep(answer.chunk_delay)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def serve(*answers: Answer) -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        server.answers.extend(answers)
        yield server
