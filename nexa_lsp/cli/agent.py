"""`nexa-lsp agent`: run an agent of a `.nx` file, resume a run, or continue a conversation.

    nexa-lsp agent FILE AGENT "task"            start a run (new id, session and budget)
    nexa-lsp agent --resume RUN_ID              resume an interrupted or approval-waiting run
    nexa-lsp agent --continue RUN_ID "input"    next turn of a finished run's conversation

Text streams to stdout as it arrives. Approvals are asked on a terminal; elsewhere pass
`--approve` or `--deny` (otherwise the run stays waiting, exit code 3). Exit codes:
0 completed, 1 settled without success, 2 refused / usage error, 3 waiting for approval,
130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from nexa_lsp.cli.runs import add_store_option, open_store
from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.control import approve, deny
from nexa_lsp.runtime.declarations import load_agent
from nexa_lsp.runtime.errors import NexaRuntimeError
from nexa_lsp.runtime.events import ApprovalNeeded, CancelToken, RunEvent, ToolCallFinished, ToolCallStarted
from nexa_lsp.runtime.providers.base import Provider
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.run_state import RunConfig, RunState, RunStatus
from nexa_lsp.runtime.summary import RunSummary

EXIT_COMPLETED = 0
EXIT_NOT_SUCCESSFUL = 1
EXIT_REFUSED = 2
EXIT_WAITING = 3
EXIT_INTERRUPTED = 130


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "agent",
        help="run, resume or continue an agent run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("words", nargs="*", metavar="ARG", help="FILE AGENT TASK, or the input after --continue")
    entry = parser.add_mutually_exclusive_group()
    entry.add_argument("--resume", metavar="RUN_ID", help="resume the original interrupted or approval-waiting run")
    entry.add_argument("--continue", dest="continue_run", metavar="RUN_ID", help="start the next turn of a run")
    parser.add_argument("--file", type=Path, help="the .nx file of the agent (default: the run's own source)")
    add_store_option(parser)
    parser.add_argument(
        "--tools",
        type=Path,
        action="append",
        default=[],
        metavar="FILE.py",
        help="Python file whose functions implement the agent's declared tools (by name), after each tool's "
        "own `python:`; repeatable",
    )
    parser.add_argument("--provider", help="provider name (default: settings, else the offline `scripted` provider)")
    parser.add_argument("--script", type=Path, help="JSON script for the offline `scripted` provider")
    parser.add_argument("--model", help="model id, e.g. `openai/gpt-4o`")
    parser.add_argument("--timeout", type=float, help="run deadline in seconds from its start")
    parser.add_argument("--token-budget", type=int, help="input+output token budget of the run")
    parser.add_argument("--tool-call-budget", type=int, help="how many tool calls the run may execute")
    parser.add_argument("--config-name", help="select a `config NAME { ... }` block of the .nxs settings")
    decision = parser.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true", help="approve every tool call that asks for approval")
    decision.add_argument("--deny", action="store_true", help="deny every tool call that asks for approval")
    parser.add_argument("--by", default=None, help="name recorded with approvals (default: cli)")
    parser.add_argument("--json", action="store_true", help="print the final run summary as JSON, no streaming")
    parser.set_defaults(handler=run_agent_command)


def _config_from(args: argparse.Namespace) -> RunConfig | None:
    values = {
        "model": args.model,
        "timeout": args.timeout,
        "token_budget": args.token_budget,
        "tool_call_budget": args.tool_call_budget,
        "config_name": args.config_name,
    }
    if all(v is None for v in values.values()):
        return None
    return RunConfig(**values)


def _provider_from(args: argparse.Namespace) -> str | Provider | None:
    if args.script is not None:
        return ScriptedProvider.from_file(args.script)
    provider: str | None = args.provider
    return provider


class CommandError(Exception):
    """A usage problem of the command line (printed without a code)."""


class _Printer:
    """Streams text to stdout and reports tools/approvals on stderr."""

    def __init__(self, quiet: bool, out: TextIO, err: TextIO) -> None:
        self.quiet = quiet
        self.out = out
        self.err = err
        self.line_open = False

    def text(self, piece: str) -> None:
        if self.quiet:
            return
        self.out.write(piece)
        self.out.flush()
        self.line_open = not piece.endswith("\n")

    def end_line(self) -> None:
        if self.line_open:
            self.out.write("\n")
            self.out.flush()
            self.line_open = False

    def event(self, event: RunEvent) -> None:
        if self.quiet:
            return
        if isinstance(event, ToolCallStarted):
            self.end_line()
            self.err.write(f"[tool {event.tool} ({event.call_id}) started]\n")
        elif isinstance(event, ToolCallFinished):
            self.err.write(f"[tool {event.tool} ({event.call_id}) {event.status}]\n")
        elif isinstance(event, ApprovalNeeded):
            self.end_line()
            self.err.write(f"[tool {event.tool} ({event.call_id}) needs approval: {event.arguments}]\n")
        self.err.flush()


def _decide(state: RunState, args: argparse.Namespace, ask: Callable[[str], str] | None) -> RunState | None:
    """Approve/deny each pending call from the flags or a prompt; None when nobody can decide."""
    by = args.by or "cli"
    for pending in state.pending_approvals:
        if args.approve:
            state = approve(state, pending.call_id, by=by)
        elif args.deny:
            state = deny(state, pending.call_id, by=by)
        elif ask is not None:
            answer = ask(f"Allow {pending.tool}({pending.arguments}) [call {pending.call_id}]? [y/N] ")
            decided = answer.strip().lower() in ("y", "yes")
            state = (approve if decided else deny)(state, pending.call_id, by=by)
        else:
            return None
    return state


def _script_set(agent: NexaAgent, config: RunConfig) -> bool:
    """Whether the settings name a script for the scripted provider (then it is configured)."""
    settings = agent.settings_for(config, Path(config.working_directory or "."))
    return bool(settings.provider("scripted").options.get("SCRIPT") or settings.environ.get("NEXA_SCRIPT"))


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _agent_for(state: RunState, args: argparse.Namespace, warn: Callable[[str], None]) -> NexaAgent:
    source = args.file or (Path(state.metadata.source) if state.metadata.source else None)
    if source is None:
        raise CommandError(
            f"run {state.run_id} was not started from a .nx file; pass --file FILE to name the agent's source"
        )
    return load_agent(source, state.agent, tool_modules=args.tools, on_warning=warn)


def run_agent_command(args: argparse.Namespace) -> int:
    """Handler of `nexa-lsp agent`."""
    out, err = sys.stdout, sys.stderr
    printer = _Printer(args.json, out, err)

    def warn(message: str) -> None:
        err.write(f"warning: {message}\n")

    token = CancelToken()

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        token.cancel("interrupted (Ctrl-C)")

    previous_handler = signal.signal(signal.SIGINT, interrupt)
    try:
        return _run(args, printer, warn, token)
    except NexaRuntimeError as exc:
        printer.end_line()
        err.write(f"error: {exc}\n")
        return EXIT_REFUSED
    except CommandError as exc:
        err.write(f"error: {exc}\n")
        return EXIT_REFUSED
    finally:
        signal.signal(signal.SIGINT, previous_handler)


def _run(args: argparse.Namespace, printer: _Printer, warn: Callable[[str], None], token: CancelToken) -> int:
    err = printer.err
    provider = _provider_from(args)
    config = _config_from(args)
    ask: Callable[[str], str] | None = None
    if _interactive() and not args.json:

        def ask(prompt: str) -> str:
            err.write(prompt)
            err.flush()
            return sys.stdin.readline()

    with open_store(args) as store:
        common: dict[str, Any] = {
            "save": store.save,
            "on_text": printer.text,
            "on_event": printer.event,
            "cancel": token,
            "provider": provider,
        }
        if args.resume:
            if args.words and len(args.words) != 2:
                raise CommandError("--resume RUN_ID takes no task; optionally FILE AGENT")
            state = store.load(args.resume)
            store.check_current(state)
            if args.words:
                agent = load_agent(
                    args.words[0],
                    args.words[1],
                    tool_modules=args.tools,
                    on_warning=warn,
                )
            else:
                agent = _agent_for(state, args, warn)
            if state.pending_approvals:
                decided = _decide(state, args, ask)
                if decided is None:
                    return _report_waiting(state, printer)
                state = store.save(decided)
            state = agent.execute(state=state, **common)
        elif args.continue_run:
            previous = store.load(args.continue_run)
            agent = _agent_for(previous, args, warn)
            state = agent.continue_run(previous, " ".join(args.words), config=config, **common)
        else:
            if len(args.words) < 3:
                raise CommandError('usage: nexa-lsp agent FILE AGENT "task" (or --resume / --continue RUN_ID)')
            agent = load_agent(
                args.words[0],
                args.words[1],
                tool_modules=args.tools,
                on_warning=warn,
            )
            resolved = agent.new_run_config(config, provider)
            if resolved.provider == "scripted" and args.script is None and not _script_set(agent, resolved):
                warn("no provider configured: using the offline `scripted` provider (see docs/runs.md)")
            state = agent.execute(" ".join(args.words[2:]), config=config, **common)
        while state.status is RunStatus.WAITING_APPROVAL and not token.cancelled:
            decided = _decide(state, args, ask)
            if decided is None:
                return _report_waiting(state, printer)
            state = agent.execute(state=store.save(decided), **common)
    return _report_end(state, args, printer)


def _report_waiting(state: RunState, printer: _Printer) -> int:
    printer.end_line()
    calls = ", ".join(f"{a.tool} ({a.call_id})" for a in state.pending_approvals)
    printer.err.write(
        f"run {state.run_id} waits for approval of {calls}; resume it with "
        f"`nexa-lsp agent --resume {state.run_id} --approve` or `--deny`\n"
    )
    return EXIT_WAITING


def _report_end(state: RunState, args: argparse.Namespace, printer: _Printer) -> int:
    printer.end_line()
    if args.json:
        summary = RunSummary.of(state).to_dict()
        summary["output"] = state.output
        printer.out.write(json.dumps(summary, ensure_ascii=False) + "\n")
    else:
        usage = state.usage
        printer.err.write(
            f"run {state.run_id} {state.status.value} (session {state.session_id}; "
            f"{usage.input_tokens}+{usage.output_tokens} tokens, {usage.tool_calls} tool call(s))\n"
        )
        if state.error is not None and state.status is not RunStatus.COMPLETED:
            printer.err.write(f"reason: {state.error.code}: {state.error.message}\n")
    if state.status is RunStatus.COMPLETED:
        return EXIT_COMPLETED
    if state.status is RunStatus.WAITING_APPROVAL:
        return EXIT_WAITING
    if state.status is RunStatus.CANCELLED and state.error is not None and "Ctrl-C" in state.error.message:
        return EXIT_INTERRUPTED
    return EXIT_NOT_SUCCESSFUL
