"""The run model: immutable ``RunState`` values, their configuration and JSON form.

Every type here is a frozen dataclass holding only immutable values (tuples, strings,
numbers). Provider-native items (Responses reasoning items, Anthropic content blocks)
are kept verbatim as JSON text, so nothing can change them after they were received.

The JSON form carries its version (``"format"``, see ``RUN_STATE_FORMAT``) and the
nexa-lsp that wrote it (``"written_by"``). Reading a state:

* an older format is migrated step by step (``STATE_MIGRATIONS``); a state without
  ``"format"`` is format 1 (written by nexa-lsp 0.1.0 and earlier);
* a newer format is refused (``RunStateFormatError``) naming the nexa-lsp that wrote it:
  its meaning may have changed in ways this version cannot know;
* in a state of a format this version reads, a top-level key it does not know is kept
  verbatim (``RunState.extra``) and written back on every save, so a run saved by a
  newer nexa-lsp of the same format loses nothing here. An unknown key *inside* a record
  (config, fingerprint, message, tool call, approval, journal entry, usage, error,
  metadata) is refused naming the key: dropping it could change what the record means.
  So a new field that older versions may ignore is added at the top level; any other
  change bumps the format and adds a migration.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias, TypeVar

from nexa_lsp import __version__

JsonObject: TypeAlias = dict[str, Any]
RecordT = TypeVar("RecordT")

RUN_STATE_FORMAT = 2
"""Version of a run state's JSON form. 1: nexa-lsp 0.1.0 and earlier (no ``format`` key);
2: ``format`` and ``written_by`` are written."""
WRITTEN_BY = f"nexa-lsp {__version__}"


class RunStateFormatError(ValueError):
    """A run state this nexa-lsp cannot read: a newer format, or a record with an unknown field."""


class RunStatus(enum.Enum):
    """Where a run stands; ``.value`` is the string used in stores, events and the CLI."""

    RUNNING = "running"
    WAITING_APPROVAL = "waiting_approval"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    BUDGET_EXHAUSTED = "budget_exhausted"

    @property
    def settled(self) -> bool:
        """True for the five states a run never leaves by itself."""
        return self not in (RunStatus.RUNNING, RunStatus.WAITING_APPROVAL)


SETTLED_STATUSES: tuple[RunStatus, ...] = tuple(s for s in RunStatus if s.settled)

DEFAULT_ARTIFACT_THRESHOLD = 16 * 1024


@dataclass(frozen=True)
class RunConfig:
    """Run configuration. ``None`` fields mean "not set" (defaults, or inherited on continue).

    ``timeout`` is in seconds and fixes a deadline measured from the run's start time.
    ``token_budget`` limits input+output tokens, ``tool_call_budget`` executed tool calls.
    ``artifact_threshold`` is the size in bytes above which a tool result is written to a
    file in ``artifact_directory`` and only referenced from history.
    ``max_retries`` overrides how often a provider call is retried on 429/5xx/network errors.
    ``config_name`` selects a ``config NAME { ... }`` block of the ``.nxs`` settings files.
    """

    timeout: float | None = None
    token_budget: int | None = None
    tool_call_budget: int | None = None
    model: str | None = None
    provider: str | None = None
    working_directory: str | None = None
    artifact_directory: str | None = None
    artifact_threshold: int | None = None
    max_output_tokens: int | None = None
    max_retries: int | None = None
    config_name: str | None = None

    def merged_over(self, base: RunConfig) -> RunConfig:
        """This config with every unset field taken from ``base``."""
        values = {
            f.name: getattr(self, f.name) if getattr(self, f.name) is not None else getattr(base, f.name)
            for f in dataclasses.fields(self)
        }
        return RunConfig(**values)

    def to_dict(self) -> JsonObject:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        """Build from a JSON object; unknown keys are rejected so typos do not pass silently."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown run config field(s): {', '.join(unknown)}; known: {', '.join(sorted(names))}")
        return cls(**dict(data))


@dataclass(frozen=True)
class ToolCall:
    """A tool call requested by the model. ``arguments`` is the JSON text the model sent."""

    call_id: str
    name: str
    arguments: str = "{}"


Role = Literal["user", "assistant", "tool"]


@dataclass(frozen=True)
class Message:
    """A provider-neutral history entry.

    ``opaque`` holds the provider's native items verbatim (JSON text) and ``response_id``
    its cursor (Responses ``previous_response_id``); ``provider`` names who produced them.
    A ``tool`` message answers ``tool_call_id``; ``artifact`` names the artifact file
    (relative to the run's artifact directory) holding the full result when it was large.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    provider: str | None = None
    opaque: tuple[str, ...] = ()
    response_id: str | None = None
    artifact: str | None = None
    run_id: str | None = None


@dataclass(frozen=True)
class Usage:
    """Tokens reported by the provider and tool calls executed, for one run."""

    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def plus(self, input_tokens: int = 0, output_tokens: int = 0, tool_calls: int = 0) -> Usage:
        return Usage(self.input_tokens + input_tokens, self.output_tokens + output_tokens, self.tool_calls + tool_calls)


ApprovalStatus = Literal["pending", "approved", "denied"]


@dataclass(frozen=True)
class Approval:
    """The approval of one tool call: requested when, decided by whom and when."""

    call_id: str
    tool: str
    arguments: str
    status: ApprovalStatus
    requested_at: float
    decided_by: str | None = None
    decided_at: float | None = None
    reason: str | None = None


JournalStatus = Literal["started", "completed", "failed", "not_executed"]


@dataclass(frozen=True)
class JournalEntry:
    """Write-ahead record of one tool execution.

    ``started`` is saved before the tool runs and replaced after it ends; an entry still
    ``started`` in a stored run is an unknown outcome (the process died in between).
    ``recovered_by`` is set when a person resolved such an outcome.
    """

    call_id: str
    tool: str
    arguments: str
    status: JournalStatus
    started_at: float
    finished_at: float | None = None
    result: str | None = None
    artifact: str | None = None
    recovered_by: str | None = None


@dataclass(frozen=True)
class RunMetadata:
    """Conversation links: ``session_id`` is shared by every turn, ``parent_run_id`` is the previous turn.

    ``source`` is the ``.nx`` file the agent was declared in (when built from one).
    """

    session_id: str
    parent_run_id: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class AgentFingerprint:
    """What must stay the same for a run to be resumed or continued.

    ``definition`` is a hash of the agent's name, prompt and tools; ``prompt`` and
    ``tools`` are hashes of those parts alone, so a drift report can say which changed.
    """

    agent: str
    definition: str
    prompt: str
    tools: str
    tool_names: tuple[str, ...]
    model: str | None
    provider: str
    working_directory: str


@dataclass(frozen=True)
class RunError:
    """Why a run failed: the error's stable code and message."""

    code: str
    message: str


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex}"


def new_session_id() -> str:
    return f"ses_{uuid.uuid4().hex}"


@dataclass(frozen=True)
class RunState:
    """One run of an agent. Immutable: every change returns a new object (see ``evolve``).

    ``history`` is the whole conversation (earlier turns included); ``input`` is the task
    or continuation input of this run and ``turn_start`` the index of its user message.
    """

    run_id: str
    agent: str
    status: RunStatus
    input: str
    config: RunConfig
    fingerprint: AgentFingerprint
    metadata: RunMetadata
    started_at: float
    deadline: float | None
    output: str = ""
    history: tuple[Message, ...] = ()
    usage: Usage = field(default_factory=Usage)
    approvals: tuple[Approval, ...] = ()
    journal: tuple[JournalEntry, ...] = ()
    error: RunError | None = None
    turn_start: int = 0
    updated_at: float = 0.0
    extra: tuple[tuple[str, str], ...] = ()
    """Top-level keys of the stored JSON this version does not know, with their JSON text:
    kept and written back unchanged (see the module docstring)."""
    revision: int = field(default=0, compare=False)
    """The store revision this state is based on (0: never saved). ``SQLiteCheckpointStore``
    sets it when it loads or saves a run and refuses a save based on an older revision
    (NXR027). Store bookkeeping, not part of the JSON."""

    # --- the run value of the 3.0 language ----------------------------------------------
    @property
    def success(self) -> bool:
        """True only for ``completed``."""
        return self.status is RunStatus.COMPLETED

    @property
    def settled(self) -> bool:
        """True for ``completed``, ``failed``, ``cancelled``, ``timed_out`` and ``budget_exhausted``."""
        return self.status.settled

    @property
    def session_id(self) -> str:
        return self.metadata.session_id

    @property
    def parent_run_id(self) -> str | None:
        return self.metadata.parent_run_id

    def __str__(self) -> str:
        """Where text is expected a run stands for its output."""
        return self.output

    # --- derived views -----------------------------------------------------------------------
    @property
    def pending_approvals(self) -> tuple[Approval, ...]:
        return tuple(a for a in self.approvals if a.status == "pending")

    @property
    def unknown_outcomes(self) -> tuple[JournalEntry, ...]:
        """Journal entries that started but never recorded an end."""
        return tuple(e for e in self.journal if e.status == "started")

    def approval_for(self, call_id: str) -> Approval | None:
        for approval in self.approvals:
            if approval.call_id == call_id:
                return approval
        return None

    def journal_entry(self, call_id: str) -> JournalEntry | None:
        for entry in self.journal:
            if entry.call_id == call_id:
                return entry
        return None

    def evolve(self, **changes: Any) -> RunState:
        """A copy with ``changes`` applied and ``updated_at`` set to now."""
        changes.setdefault("updated_at", time.time())
        return replace(self, **changes)

    def with_approval(self, approval: Approval) -> RunState:
        """A copy whose approval for ``approval.call_id`` is replaced (or added)."""
        others = tuple(a for a in self.approvals if a.call_id != approval.call_id)
        return self.evolve(approvals=(*others, approval))

    def with_journal(self, entry: JournalEntry) -> RunState:
        """A copy whose journal entry for ``entry.call_id`` is replaced (or appended)."""
        if self.journal_entry(entry.call_id) is None:
            return self.evolve(journal=(*self.journal, entry))
        return self.evolve(journal=tuple(entry if e.call_id == entry.call_id else e for e in self.journal))

    def at_revision(self, revision: int) -> RunState:
        """This state as based on store revision ``revision`` (``updated_at`` unchanged)."""
        return replace(self, revision=revision)

    # --- JSON ----------------------------------------------------------------------------------
    def to_dict(self) -> JsonObject:
        """The JSON object of this state (``format`` and ``written_by`` first)."""
        data: JsonObject = {"format": RUN_STATE_FORMAT, "written_by": WRITTEN_BY}
        data.update(dataclasses.asdict(self))
        data["status"] = self.status.value
        del data["revision"], data["extra"]
        for key, text in self.extra:
            data.setdefault(key, json.loads(text))
        return data

    def to_json(self) -> str:
        """Compact JSON. Text that cannot be encoded as UTF-8 (a lone surrogate a provider sent)
        is written with ``\\u`` escapes instead, so every state can be saved and read back."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(self.to_dict(), ensure_ascii=True, separators=(",", ":"))
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunState:
        """Read a state of any format this version knows (see the module docstring)."""
        data, writer = _current_format(data)

        def record(kind: type[RecordT], value: Any, where: str, **converted: Any) -> RecordT:
            if not isinstance(value, Mapping):
                raise RunStateFormatError(f"{where} is not a JSON object")
            names = {f.name for f in dataclasses.fields(kind)}  # type: ignore[arg-type]
            unknown = sorted(set(value) - names)
            if unknown:
                raise RunStateFormatError(
                    f"{where}.{unknown[0]} is not a field nexa-lsp {__version__} knows (the run was written by "
                    f"{writer}); upgrade nexa-lsp to read it"
                )
            return kind(**{**value, **converted})

        history = tuple(
            record(
                Message,
                m,
                f"history[{n}]",
                tool_calls=tuple(
                    record(ToolCall, c, f"history[{n}].tool_calls[{k}]")
                    for k, c in enumerate(m.get("tool_calls", ()) if isinstance(m, Mapping) else ())
                ),
                opaque=tuple(m.get("opaque", ()) if isinstance(m, Mapping) else ()),
            )
            for n, m in enumerate(data.get("history", ()))
        )
        fingerprint = data["fingerprint"]
        tool_names = tuple(fingerprint.get("tool_names", ()) if isinstance(fingerprint, Mapping) else ())
        error = data.get("error")
        config = data.get("config", {})
        record(RunConfig, config, "config")
        known = {f.name for f in dataclasses.fields(cls)} - {"extra", "revision"}
        return cls(
            run_id=data["run_id"],
            agent=data["agent"],
            status=RunStatus(data["status"]),
            input=data.get("input", ""),
            config=RunConfig.from_dict(config),
            fingerprint=record(AgentFingerprint, fingerprint, "fingerprint", tool_names=tool_names),
            metadata=record(RunMetadata, data["metadata"], "metadata"),
            started_at=float(data["started_at"]),
            deadline=None if data.get("deadline") is None else float(data["deadline"]),
            output=data.get("output", ""),
            history=history,
            usage=record(Usage, data.get("usage", {}), "usage"),
            approvals=tuple(record(Approval, a, f"approvals[{n}]") for n, a in enumerate(data.get("approvals", ()))),
            journal=tuple(record(JournalEntry, e, f"journal[{n}]") for n, e in enumerate(data.get("journal", ()))),
            error=None if error is None else record(RunError, error, "error"),
            turn_start=int(data.get("turn_start", 0)),
            updated_at=float(data.get("updated_at", 0.0)),
            extra=tuple(
                (key, json.dumps(value, ensure_ascii=False, separators=(",", ":")))
                for key, value in data.items()
                if key not in known
            ),
        )

    @classmethod
    def from_json(cls, text: str) -> RunState:
        return cls.from_dict(json.loads(text))


def _from_format_1(data: JsonObject) -> JsonObject:
    """Format 1 -> 2: the shape is unchanged; version 2 only writes ``format`` and ``written_by``."""
    return data


STATE_MIGRATIONS: dict[int, Callable[[JsonObject], JsonObject]] = {1: _from_format_1}
"""``STATE_MIGRATIONS[n]`` turns a format-``n`` state (as a JSON object) into format ``n + 1``."""


def _current_format(data: Mapping[str, Any]) -> tuple[JsonObject, str]:
    """``data`` migrated to ``RUN_STATE_FORMAT`` (without ``format``/``written_by``), and who wrote it."""
    migrated = dict(data)
    version = migrated.pop("format", 1)
    written_by = migrated.pop("written_by", None)
    writer = str(written_by) if written_by else "nexa-lsp 0.1.0 or earlier" if version == 1 else "an unknown program"
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RunStateFormatError(f"the run state's format {version!r} is not a run state format (written by {writer})")
    if version > RUN_STATE_FORMAT:
        raise RunStateFormatError(
            f"it was written by {writer} in run format {version}; this nexa-lsp {__version__} reads run formats up "
            f"to {RUN_STATE_FORMAT}: upgrade nexa-lsp to resume, continue or show it"
        )
    for step in range(version, RUN_STATE_FORMAT):
        migrated = STATE_MIGRATIONS[step](migrated)
    return migrated, writer


def unanswered_tool_calls(history: tuple[Message, ...]) -> tuple[ToolCall, ...]:
    """Tool calls of the last assistant message that have no tool result after it, in order."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.role == "assistant":
            answered = {m.tool_call_id for m in history[index + 1 :] if m.role == "tool"}
            return tuple(c for c in message.tool_calls if c.call_id not in answered)
    return ()


def open_tool_calls(history: tuple[Message, ...]) -> tuple[ToolCall, ...]:
    """Every tool call anywhere in history that has no tool result message."""
    answered = {m.tool_call_id for m in history if m.role == "tool"}
    return tuple(c for m in history if m.role == "assistant" for c in m.tool_calls if c.call_id not in answered)
