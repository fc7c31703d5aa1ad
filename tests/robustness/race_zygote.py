"""A warm, single-threaded process that forks racing command-line processes on request.

Started by ``test_claim_race``. It imports nexa-lsp and builds the parsers once; then, for
each JSON line on stdin (``{"folder", "commands", "start_at", "result"}``), it forks a child
that waits until ``start_at`` (a ``time.time()`` value), runs each command line through
``nexa_lsp.cli.main`` in ``folder`` and writes ``{"pid", "commands": [[code, stderr], ...]}``
to ``result``. It prints ``started PID RESULT`` after each fork and ``ended PID STATUS`` when it reaps one.
Forking from one thread keeps the children safe (no locks or connections are inherited).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from nexa_lsp.cli import build_parser, main
from nexa_lsp.syntax import parse_source

WARM_SOURCE = 'nexa 3.0;\ntool t { description: "d", parameters: {"a": "string"} }\nagent A uses t { prompt: "p" }\n'


def child(request: dict[str, object]) -> int:
    result = str(request["result"])
    log = os.open(f"{result}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 2)  # whatever escapes the command line (a crash) is kept for the report
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.chdir(str(request["folder"]))
    pause = float(str(request["start_at"])) - time.time()
    if pause > 0:
        time.sleep(pause)
    outcomes: list[tuple[int, str]] = []
    commands = request["commands"]
    assert isinstance(commands, list)
    for index, argv in enumerate(commands):
        err_path = Path(f"{result}.{index}.err")
        with open(err_path, "w", encoding="utf-8") as err:
            saved = sys.stderr
            sys.stderr = err
            try:
                code = main(argv)
            finally:
                sys.stderr = saved
        outcomes.append((code, err_path.read_text(encoding="utf-8")))
    Path(result).write_text(json.dumps({"pid": os.getpid(), "commands": outcomes}), encoding="utf-8")
    return 0


def serve() -> None:
    parse_source(WARM_SOURCE)
    build_parser("agent")
    build_parser("runs")
    print("ready", flush=True)
    stdin = sys.stdin.fileno()
    os.set_blocking(stdin, False)
    pending = b""
    children: set[int] = set()
    open_input = True
    while open_input or children:
        try:
            data = os.read(stdin, 65536)
        except BlockingIOError:
            data = None
        if data == b"":
            open_input = False
        elif data:
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    code = 1
                    try:
                        code = child(request)
                    finally:
                        os._exit(code)
                children.add(pid)
                print("started", pid, request["result"], flush=True)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            children.discard(pid)
            print("ended", pid, os.waitstatus_to_exitcode(status), flush=True)
        time.sleep(0.002)


if __name__ == "__main__":
    serve()
