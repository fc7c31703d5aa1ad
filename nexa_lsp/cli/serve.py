"""`nexa-lsp serve [--tcp HOST:PORT]`: the language server (stdio by default)."""

from __future__ import annotations

import argparse
import gc
import sys
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser("serve", help="run the language server (stdio unless --tcp is given)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead of stdio (debugging)")
    parser.add_argument(
        "--stdio", action="store_true", help="use stdin/stdout (the default; accepted for clients that always pass it)"
    )
    parser.set_defaults(handler=run_serve)


def parse_address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"--tcp expects HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


def run_serve(args: argparse.Namespace) -> int:
    address = None
    if args.tcp:
        try:
            address = parse_address(args.tcp)
        except ValueError as exc:
            print(f"nexa-lsp serve: {exc}", file=sys.stderr)
            return 2
    # Start-up allocates a lot and frees little (classes, tables, the parser): collections then
    # only cost time (~10% of the way to the first diagnostics). The first full collection runs
    # once the first diagnostics were sent (server/startup.py turns collection back on).
    gc.disable()
    from nexa_lsp.server.main import create_server  # lazy: start-up (after gc.disable)

    server = create_server()
    if address is not None:
        print(f"nexa-lsp: listening on {address[0]}:{address[1]}", file=sys.stderr)
        server.start_tcp(*address)
    else:
        server.start_io()
    return 0
