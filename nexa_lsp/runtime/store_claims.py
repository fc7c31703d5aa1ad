"""Compare-and-swap saves and claims of the run store (see ``checkpoints``' docstring).

A save is accepted when the stored run is still at the revision the state was based on,
and makes it one revision newer; ``revision_after`` decides, from the stored row, what a
save of a state does. A ``running`` run belongs to its owner process while that lives.
"""

from __future__ import annotations

import json
from typing import Any

from nexa_lsp.runtime.errors import RunChangedError, RunInUseError
from nexa_lsp.runtime.owner import Owner, owner_text_alive
from nexa_lsp.runtime.run_state import RunState, RunStatus

INSERT = """INSERT INTO runs (run_id, agent, session_id, parent_run_id, status, started_at, updated_at,
                         state, source, working_directory, owner, revision)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
UPDATE = """UPDATE runs SET agent = ?, session_id = ?, parent_run_id = ?, status = ?, started_at = ?,
         updated_at = ?, state = ?, source = ?, working_directory = ?, owner = ?, revision = ?
       WHERE run_id = ?"""
#: The row ``revision_after`` reads.
STORED = "SELECT revision, status, owner, state FROM runs WHERE run_id = ?"
_VOLATILE = ("status", "updated_at")
"""What a resume changes in the state it was given before its first save (the claim)."""


def row_values(state: RunState, text: str, owner: str | None) -> tuple[object, ...]:
    """The columns of ``INSERT`` / ``UPDATE`` after the run id and before the revision."""
    return (
        state.agent,
        state.session_id,
        state.parent_run_id,
        state.status.value,
        state.started_at,
        state.updated_at or state.started_at,
        text,
        state.metadata.source,
        state.config.working_directory,
        owner,
    )


def revision_after(stored: tuple[Any, ...], state: RunState, text: str, me: str) -> tuple[int, bool]:
    """The revision a save of ``state`` (serialised as ``text``, by process ``me``) gives the
    stored run, and whether it writes (not for a repeat of the save that made the stored
    revision). ``RunInUseError`` when another live process drives the run, ``RunChangedError``
    when the run was saved after ``state`` was read."""
    stored_revision, stored_status, stored_owner, stored_text = stored
    if driven_elsewhere(stored_status, stored_owner, me):
        raise in_use(state.run_id, str(stored_owner))
    if stored_revision == state.revision:
        return stored_revision + 1, True
    if stored_revision == state.revision + 1 and stored_text == text:
        return stored_revision, False  # a repeat of the save that made it
    if (
        stored_revision == state.revision + 1
        and state.status is RunStatus.RUNNING
        and not RunStatus(stored_status).settled
        and _same_apart_from_status(str(stored_text), state)
    ):
        return stored_revision, True  # the claim of a state the caller saved itself
    raise changed(state, stored_revision, stored_status)


def _same_apart_from_status(stored_text: str, state: RunState) -> bool:
    """True when the stored state is ``state`` with another status (and update time)."""
    try:
        stored = json.loads(stored_text)
    except ValueError:
        return False
    mine = json.loads(state.to_json())  # lists where the state has tuples, as in the stored text
    for key in _VOLATILE:
        stored.pop(key, None)
        mine.pop(key, None)
    return bool(stored == mine)


def driven_elsewhere(status: object, owner: object, me: str) -> bool:
    """True when a stored run is ``running`` and owned by a live process other than ``me``."""
    return status == RunStatus.RUNNING.value and bool(owner) and owner != me and owner_text_alive(str(owner))


def in_use(run_id: str, owner: str) -> RunInUseError:
    holder = Owner.parse(owner)
    who = holder.describe() if holder is not None else "another process"
    return RunInUseError(
        f"run {run_id} is being driven right now by {who}; it was not changed. "
        "Wait for it to stop, or cancel it there (or stop that process) before resuming it here"
    )


def changed(state: RunState, revision: object, status: object) -> RunChangedError:
    return RunChangedError(
        f"run {state.run_id} was saved again after this copy was read (this copy: revision {state.revision}; "
        f"stored: revision {revision}, {status}), so saving it would undo what was saved meanwhile; nothing "
        "was saved. Another process or command approved, resumed, recovered or cancelled it: look at it "
        f"(`nexa-lsp runs show {state.run_id}`) and decide again"
    )
