"""The properties the runtime reads, with the value kinds it accepts and what each does.

These tables are what the property rules (NX120-NX124) check against, and what hover and
completion show, so the editor and the checker describe properties alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nexa_lsp.syntax.tree import ValueKind

STRINGS = frozenset({ValueKind.STRING, ValueKind.MULTILINE_STRING})


@dataclass(frozen=True, slots=True)
class PropertySpec:
    """A property the runtime reads: the value kinds it accepts and what it does."""

    kinds: frozenset[ValueKind]
    summary: str
    values: tuple[str, ...] = ()  # the accepted words, when the value is one of a few
    snippet: str = "$1"  # the value part of the completion snippet
    on_30_only: bool = False


def _p(
    kinds: Iterable[ValueKind],
    summary: str,
    values: tuple[str, ...] = (),
    snippet: str = "$1",
    on_30_only: bool = False,
) -> PropertySpec:
    return PropertySpec(frozenset(kinds), summary, values, snippet, on_30_only)


S, MS, N, INT, B, L, OBJ = (
    ValueKind.STRING,
    ValueKind.MULTILINE_STRING,
    ValueKind.NAME,
    ValueKind.INT,
    ValueKind.BOOL,
    ValueKind.LIST,
    ValueKind.OBJECT,
)

#: Agent properties the runtime reads (reference section 5.2).
AGENT_PROPERTIES: dict[str, PropertySpec] = {
    "prompt": _p((S, MS), "The system instruction of the agent.", snippet='"$1"'),
    "role": _p((S, MS), "Prepended to the system prompt as `Role: <role>.`", snippet='"$1"'),
    "model": _p(
        (S, L),
        'Model name; `"provider/model"` selects the provider. A list `["m1", fallback: "m2"]` '
        "names fallbacks. Default: the configured strong model.",
        snippet='"$1"',
    ),
    "memory": _p(
        (N, S),
        "Conversation memory: `local` (default), `shared` or `persistent` (saved to disk).",
        ("local", "shared", "persistent"),
        snippet="${1|local,shared,persistent|}",
    ),
    "stream": _p(
        (B,),
        "Stream tokens to stdout (only for agents without tools and protocol).",
        ("true", "false"),
        snippet="${1|true,false|}",
    ),
    "cache": _p(
        (B,), "Cache responses (exact and semantic), persisted on disk.", ("true", "false"), snippet="${1|true,false|}"
    ),
    "max_history_turns": _p((INT,), "Summarise history beyond this many user turns.", snippet="${1:10}"),
    "experience": _p((S,), "A file whose content is appended to the system prompt when it exists.", snippet='"$1"'),
    "timeout": _p((INT,), "Seconds per model call (default 30).", snippet="${1:30}"),
    "retry": _p((INT,), "Retries on timeout or protocol validation failure (default 3).", snippet="${1:3}"),
    "output_format": _p((S,), '`"json"` requests JSON output (default `""`).', snippet='"${1:json}"'),
    "output_schema": _p(
        (OBJ,),
        'Field name -> `"string"`, `"number"`, `"integer"` or `"boolean"`; used with `output_format: "json"`.',
        snippet='{"$1": "${2:string}"}',
    ),
    "max_tool_calls": _p((INT,), "Maximum tool-call rounds per run (default 10).", snippet="${1:10}"),
    "tool_call_strategy": _p(
        (S,),
        '`"auto"` (default), `"required"` (the first round must call a tool) or `"none"` (tools removed).',
        ("auto", "required", "none"),
        snippet='"${1|auto,required,none|}"',
    ),
}

#: Keys that sources and docs use but no runtime reads.
IGNORED_AGENT_PROPERTIES: dict[str, str] = {
    "max_tokens": "use the `@limit(max_tokens=N)` decorator instead",
    "fallback": 'write the fallback in the model list: `model: ["main", fallback: "backup"]`',
    "tools": "list the tools after `uses` in the agent header",
    "protocol": "write `implements Protocol` in the agent header",
    "uses": "write `uses` in the agent header, before the `{`",
    "description": "the runtime does not read an agent description",
    "temperature": "use the `@temperature(value=F)` decorator instead",
}

#: Keys of an agent's `context { ... }` block.
CONTEXT_PROPERTIES: dict[str, PropertySpec] = {
    "source": _p((N, S), "Where the agent's input context comes from (default `upstream`).", snippet="${1:upstream}"),
    "sink": _p((N, S), "Where the agent's output context goes (default `downstream`).", snippet="${1:downstream}"),
    "input_schema": _p((N,), "Protocol the incoming context must match.", snippet="$1"),
    "output_schema": _p((N,), "Protocol the outgoing context must match.", snippet="$1"),
    "max_history_turns": _p((INT,), "Summarise history beyond this many user turns.", snippet="${1:10}"),
    "inherit": _p(
        (L,), "What to take over from the previous stage, e.g. `[messages, artifacts]`.", snippet="[${1:messages}]"
    ),
}

#: Keys of a `tool Name { ... }` body.
TOOL_PROPERTIES: dict[str, PropertySpec] = {
    "description": _p((S,), "What the tool does (shown to the model).", snippet='"$1"'),
    "parameters": _p(
        (OBJ,), 'Parameter name -> type description, e.g. `{"query": "string"}`.', snippet='{"$1": "${2:string}"}'
    ),
    "mcp": _p((S,), "An MCP server URI that provides the tool.", snippet='"$1"'),
    "python": _p((S,), "A Python callable (`module.function`) that implements the tool.", snippet='"$1"'),
    "approval": _p(
        (S,),
        'Nexa 3.0: `"required"` pauses the run in `waiting_approval` before each call.',
        ("required",),
        snippet='"required"',
        on_30_only=True,
    ),
}
