"""Command line: `nexa-lsp [serve|check|agent|runs] ...`.

Each subcommand lives in its own module exposing ``register(subparsers)``; the
module is imported only when that subcommand runs (or for ``--help``), so
`nexa-lsp check` never pays for pygls and `nexa-lsp serve` never for the runtime's CLI.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from nexa_lsp import __version__

SUBCOMMANDS: dict[str, str] = {
    "serve": "nexa_lsp.cli.serve",
    "check": "nexa_lsp.cli.check",
    "agent": "nexa_lsp.cli.agent",
    "runs": "nexa_lsp.cli.runs",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Build the argument parser; with ``only`` set, import just that subcommand."""
    parser = argparse.ArgumentParser(
        prog="nexa-lsp",
        description="Nexa language server (default: serve on stdio), checker and run tool.",
    )
    parser.add_argument("--version", action="version", version=f"nexa-lsp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=f"see `nexa-lsp {name} --help`")
            continue
        module = importlib.import_module(module_name)  # lazy: start-up (see the module docstring)
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (args_list[0].startswith("--") and args_list[0] not in ("--help", "--version")):
        # `nexa-lsp` alone, or `nexa-lsp --tcp HOST:PORT`, starts the server.
        args_list = ["serve", *args_list]
    first = args_list[0]
    parser = build_parser(first if first in SUBCOMMANDS else None)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        result: int = handler(args)
    except BrokenPipeError:  # e.g. `nexa-lsp check ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    return result
