"""Reading LSP frames from stdin, forgiving about headers.

pygls' own stdio loop matches ``Content-Length`` case-sensitively and, after a
frame whose length is not a number, takes the next frames' bytes for headers, so
the server stops hearing the client for good. This loop reads header names
case-insensitively (as vscode-jsonrpc writes them), skips a frame whose length is
unusable, and finds the next ``Content-Length`` even when stray bytes precede it.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

logger = logging.getLogger(__name__)

_LENGTH = re.compile(rb"content-length\s*:\s*(-?\d+)", re.IGNORECASE)
MAX_FRAME_BYTES = 256 * 1024 * 1024


class AsyncReader(Protocol):
    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


async def read_messages(
    stop_event: threading.Event,
    reader: AsyncReader,
    protocol: JsonRPCProtocol,
    error_handler: Callable[[Exception, Any], Any] | None = None,
) -> None:
    """Read frames until end of input (or ``stop_event``) and hand each message to ``protocol``."""
    length: int | None = None
    saw_length_header = False
    while not stop_event.is_set():
        line = await reader.readline()
        if not line:
            break
        if line.strip():
            match = _LENGTH.search(line)
            if match is not None:
                saw_length_header = True
                value = int(match.group(1))
                length = value if 0 < value <= MAX_FRAME_BYTES else None
            elif line.lstrip()[:15].lower().startswith(b"content-length"):
                saw_length_header = True  # a length that is not a number: skip this frame
                length = None
            continue
        # an empty line ends the headers
        if length is None:
            if saw_length_header:
                logger.warning("skipped a frame without a usable Content-Length")
            saw_length_header = False
            continue
        body = await reader.readexactly(length)
        length = None
        saw_length_header = False
        if not body:
            break
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
            protocol.handle_message(message)
        except Exception as exc:
            logger.exception("Unable to handle message")
            if error_handler is not None:
                error_handler(exc, JsonRpcException)
