"""A raw HTTP server on 127.0.0.1 that answers like a broken or hostile model provider.

Each behaviour is a function that gets the ``Exchange`` (the connected socket and the
request already read) and writes whatever it likes: a truncated stream, garbage, a
stall, a byte at a time. Requests are recorded (headers included) so tests can check
what was sent. Every stall is bounded (``MAX_STALL`` seconds, and it ends as soon as the
client hangs up or the server stops).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

MAX_STALL = 30.0


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Exchange:
    conn: socket.socket
    request: Request
    stop: threading.Event

    def send(self, data: bytes) -> None:
        self.conn.sendall(data)

    def stall(self, seconds: float = MAX_STALL) -> float:
        """Wait until the client hangs up, the server stops, or ``seconds`` pass; returns the wait."""
        started = time.monotonic()
        self.conn.settimeout(0.05)
        deadline = started + min(seconds, MAX_STALL)
        while time.monotonic() < deadline and not self.stop.is_set():
            try:
                if self.conn.recv(1) == b"":
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        self.conn.settimeout(MAX_STALL)
        return time.monotonic() - started


Behaviour = Callable[[Exchange], None]


@dataclass
class HostileServer:
    behaviours: list[Behaviour]
    requests: list[Request] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    hangups: list[float] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def behaviour_for(self, index: int) -> Behaviour:
        return self.behaviours[min(index, len(self.behaviours) - 1)]


def _read_request(conn: socket.socket) -> Request | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    header_bytes, _, body = data.partition(b"\r\n\r\n")
    lines = header_bytes.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return Request(method, path, headers, body)


@contextmanager
def hostile_server(*behaviours: Behaviour) -> Iterator[HostileServer]:
    """Serve ``behaviours`` in order (the last one repeats) until the block ends."""
    server = HostileServer(list(behaviours))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.05)
    server.port = listener.getsockname()[1]
    threads: list[threading.Thread] = []
    lock = threading.Lock()

    def handle(conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(MAX_STALL)
                request = _read_request(conn)
                if request is None:
                    return
                with lock:
                    server.requests.append(request)
                    behaviour = server.behaviour_for(len(server.requests) - 1)
                behaviour(Exchange(conn, request, server.stop))
            except OSError:
                pass

    def accept_loop() -> None:
        while not server.stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=handle, args=(conn,), daemon=True)
            thread.start()
            threads.append(thread)

    acceptor = threading.Thread(target=accept_loop, daemon=True)
    acceptor.start()
    try:
        yield server
    finally:
        server.stop.set()
        acceptor.join(5)
        listener.close()
        for thread in threads:
            thread.join(5)


# --- building blocks of behaviours ------------------------------------------------------------

REASONS = {200: "OK", 401: "Unauthorized", 403: "Forbidden", 500: "Internal Server Error", 503: "Unavailable"}


def head(status: int = 200, content_type: str = "text/event-stream", extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\n"
        f"content-type: {content_type}\r\nconnection: close\r\n{extra}\r\n"
    ).encode("latin-1")


def send(*parts: bytes, status: int = 200, content_type: str = "text/event-stream", extra: str = "") -> Behaviour:
    """Headers, then ``parts``, then close (no content-length: the close ends the body)."""

    def behaviour(exchange: Exchange) -> None:
        exchange.send(head(status, content_type, extra))
        for part in parts:
            exchange.send(part)

    return behaviour


def send_then_stall(*parts: bytes, content_type: str = "text/event-stream") -> Behaviour:
    """Headers and ``parts``, then nothing more while the client waits."""

    def behaviour(exchange: Exchange) -> None:
        exchange.send(head(200, content_type))
        for part in parts:
            exchange.send(part)
        exchange.stall()

    return behaviour


def no_answer() -> Behaviour:
    """Read the request and never answer (not even headers)."""

    def behaviour(exchange: Exchange) -> None:
        exchange.stall()

    return behaviour


def dribble(part: bytes, every: float, content_type: str = "text/event-stream") -> Behaviour:
    """Headers, then ``part`` again and again every ``every`` seconds: never silent long enough for a read
    timeout, never finished."""

    def behaviour(exchange: Exchange) -> None:
        exchange.send(head(200, content_type))
        while not exchange.stop.is_set():
            exchange.send(part)
            if exchange.stall(every) < every * 0.9:
                return

    return behaviour
