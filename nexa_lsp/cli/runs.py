"""`nexa-lsp runs`: list and show stored runs; approve, deny, recover or cancel one.

nexa-lsp runs list [--agent A] [--session S] [--status S] [--json]
nexa-lsp runs show RUN_ID [--json]
nexa-lsp runs approve|deny RUN_ID CALL_ID       then `nexa-lsp agent --resume RUN_ID`
nexa-lsp runs recover RUN_ID CALL_ID (--completed RESULT | --not-executed)
nexa-lsp runs cancel RUN_ID
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from nexa_lsp.runtime.checkpoints import DEFAULT_STORE, SQLiteCheckpointStore
from nexa_lsp.runtime.control import approve, cancel_run, deny, recover_tool_call
from nexa_lsp.runtime.errors import NexaRuntimeError
from nexa_lsp.runtime.run_state import RunState, RunStatus
from nexa_lsp.runtime.summary import RunSummary, iso_time
from nexa_lsp.runtime.transcript import render_transcript


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        type=Path,
        default=None,
        help=f"run store (default: {DEFAULT_STORE} under the current folder)",
    )


def open_store(args: argparse.Namespace) -> SQLiteCheckpointStore:
    return SQLiteCheckpointStore(args.store if args.store is not None else Path.cwd() / DEFAULT_STORE)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "runs",
        help="list, show and manage stored runs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="runs_command", metavar="ACTION")

    listing = actions.add_parser("list", help="list runs, oldest first")
    listing.add_argument("--agent")
    listing.add_argument("--session")
    listing.add_argument("--status", choices=[s.value for s in RunStatus])
    listing.add_argument("--limit", type=int, help="only the newest N runs")
    listing.add_argument("--json", action="store_true", help="RunSummary objects, one JSON array")
    add_store_option(listing)
    listing.set_defaults(handler=run_action, action=_list)

    show = actions.add_parser("show", help="print a run's transcript")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true", help="the whole stored run state as JSON")
    add_store_option(show)
    show.set_defaults(handler=run_action, action=_show)

    for name, helptext in (("approve", "approve a pending tool call"), ("deny", "deny a pending tool call")):
        decide = actions.add_parser(name, help=helptext)
        decide.add_argument("run_id")
        decide.add_argument("call_id")
        decide.add_argument("--by", default="cli", help="who decided (recorded with the approval)")
        add_store_option(decide)
        decide.set_defaults(handler=run_action, action=_decide, decision=name)

    recover = actions.add_parser("recover", help="resolve a tool call whose outcome is unknown")
    recover.add_argument("run_id")
    recover.add_argument("call_id")
    outcome = recover.add_mutually_exclusive_group(required=True)
    outcome.add_argument("--completed", metavar="RESULT", help="the call did run; RESULT is its result")
    outcome.add_argument("--not-executed", action="store_true", help="the call never ran")
    recover.add_argument("--by", default="cli")
    add_store_option(recover)
    recover.set_defaults(handler=run_action, action=_recover)

    cancel = actions.add_parser("cancel", help="cancel a stored running or approval-waiting run")
    cancel.add_argument("run_id")
    cancel.add_argument("--by", default="cli")
    add_store_option(cancel)
    cancel.set_defaults(handler=run_action, action=_cancel)

    parser.set_defaults(handler=lambda _args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def run_action(args: argparse.Namespace) -> int:
    """Handler of every `nexa-lsp runs` action: a runtime refusal is printed, exit code 2."""
    try:
        code: int = args.action(args)
    except NexaRuntimeError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    return code


def _list(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        summaries = store.list_runs(agent=args.agent, session_id=args.session, status=args.status, limit=args.limit)
    if args.json:
        sys.stdout.write(json.dumps([s.to_dict() for s in summaries], ensure_ascii=False, indent=2) + "\n")
        return 0
    if not summaries:
        sys.stderr.write("no runs\n")
        return 0
    for summary in summaries:
        sys.stdout.write(_line(summary) + "\n")
    return 0


def _line(summary: RunSummary) -> str:
    parent = f" <- {summary.parent_run_id}" if summary.parent_run_id else ""
    task = summary.input.replace("\n", " ")
    if len(task) > 48:
        task = task[:47] + "…"
    return (
        f"{summary.run_id}  {summary.agent:<16} {summary.status:<16} {iso_time(summary.started_at)}  "
        f"{task}{parent}  [{', '.join(summary.actions)}]"
    )


def _show(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        state = store.load(args.run_id)
    if args.json:
        sys.stdout.write(json.dumps(state.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(render_transcript(state) + "\n")
    return 0


def _change(args: argparse.Namespace, change: Callable[[RunState], RunState]) -> RunState:
    """Load run ``args.run_id``, check that no one drives or saved it since, apply ``change``
    and save the result (returned)."""
    with open_store(args) as store:
        state = store.load(args.run_id)
        store.check_current(state)
        changed = change(state)
        store.save(changed)
    return changed


def _decide(args: argparse.Namespace) -> int:
    decide = approve if args.decision == "approve" else deny
    decided = _change(args, lambda state: decide(state, args.call_id, by=args.by))
    remaining = len(decided.pending_approvals)
    hint = f"{remaining} call(s) still wait" if remaining else f"resume with `nexa-lsp agent --resume {args.run_id}`"
    sys.stderr.write(f"{args.decision.rstrip('e')}ed {args.call_id}; {hint}\n")
    return 0


def _recover(args: argparse.Namespace) -> int:
    if args.not_executed:
        recovered = _change(args, lambda state: recover_tool_call(state, args.call_id, "not_executed", by=args.by))
    else:
        recovered = _change(
            args, lambda state: recover_tool_call(state, args.call_id, "completed", result=args.completed, by=args.by)
        )
    next_step = (
        f"`nexa-lsp agent --resume {args.run_id}`"
        if not recovered.settled
        else f'`nexa-lsp agent --continue {args.run_id} "next input"`'
    )
    sys.stderr.write(f"recovered {args.call_id}; next: {next_step}\n")
    return 0


def _cancel(args: argparse.Namespace) -> int:
    _change(args, lambda state: cancel_run(state, by=args.by))
    sys.stderr.write(f"cancelled {args.run_id}\n")
    return 0
