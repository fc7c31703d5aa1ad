"""Semantic diagnostics: names that resolve to nothing or to the wrong kind of
declaration, duplicate declarations, agent / context properties, unused tools
and missing include files.

The property tables here (:data:`AGENT_PROPERTIES` ...) are also what hover and
completion show, so the editor and the checker describe properties alike.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from nexa_lsp.analysis.symbols import (
    Analysis,
    ChunkCache,
    DeclKind,
    NameRef,
    RefRole,
    Symbol,
    analyze,
    chunk_facts,
    declared_kind,
    file_symbols,
    locator_from_resolver,
)
from nexa_lsp.analysis.workspace import IncludeResolver
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from nexa_lsp.syntax.source import ParsedChunk, SourceFile
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


def _did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.7)
    return matches[0] if matches else None


# ---------------------------------------------------------------------- per-chunk property checks


def _kind_words(kinds: frozenset[ValueKind]) -> str:
    order = [S, MS, N, INT, B, L, OBJ]
    words = []
    for kind in order:
        if kind in kinds and not (kind is MS and S in kinds):
            words.append(
                {
                    S: "a string",
                    MS: "a string",
                    N: "a name",
                    INT: "an integer",
                    B: "true or false",
                    L: "a list",
                    OBJ: "an object",
                }[kind]
            )
    return " or ".join(words)


def _value_fix(value: t.Value, spec: PropertySpec) -> Fix | None:
    """A rewrite of a string that holds a number or a boolean into that literal."""
    text = value.text
    if value.kind is not S or text is None:
        return None
    stripped = text.strip()
    if B in spec.kinds and stripped in ("true", "false"):
        if stripped == "true":
            return Fix("Write `true` without quotes", (TextEdit(value.span, "true"),))
        return Fix(
            "Write `false` without quotes",
            (TextEdit(value.span, "false"),),
            safe=False,
            why_unsafe='Nexa 2.x treats the string "false" as true; the fix turns the switch off',
        )
    if INT in spec.kinds and stripped.isdigit():
        return Fix(
            f"Write {stripped} as a number",
            (TextEdit(value.span, stripped),),
            safe=False,
            why_unsafe="the runtime receives a number instead of text",
        )
    return None


def _check_property(prop: t.Property, spec: PropertySpec, code_kind: str, where: str) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    value = prop.value
    if value.kind not in spec.kinds:
        fix = _value_fix(value, spec)
        out.append(
            Diagnostic(
                "NX121",
                f"`{prop.key}` {where} takes {_kind_words(spec.kinds)}, not {_article(value.kind)}",
                value.span,
                Severity.WARNING,
                (fix,) if fix else (),
            )
        )
        return out
    if (
        spec.values
        and value.kind in (N, S)
        and isinstance(value.value, str)
        and value.value.strip()
        and value.value not in spec.values
    ):
        guess = _did_you_mean(value.value, spec.values)
        allowed = ", ".join(f"`{v}`" for v in spec.values)
        message = f"`{value.value}` is not a value of `{prop.key}` ({code_kind}): use {allowed}"
        fixes: tuple[Fix, ...] = ()
        if guess is not None:
            message += f"; did you mean `{guess}`?"
            new_text = f'"{guess}"' if value.kind is S else guess
            fixes = (
                Fix(
                    f"Change to `{guess}`",
                    (TextEdit(value.span, new_text),),
                    safe=False,
                    why_unsafe="changes the setting the runtime receives",
                ),
            )
        out.append(Diagnostic("NX122", message, value.span, Severity.WARNING, fixes))
    return out


def _a(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def _article(kind: ValueKind) -> str:
    return _a(kind.value)


def _agent_property_diagnostics(agent: t.AgentDecl) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for prop in agent.properties:
        spec = AGENT_PROPERTIES.get(prop.key)
        if spec is not None:
            out.extend(_check_property(prop, spec, "agent property", "in an agent"))
            continue
        if prop.key in IGNORED_AGENT_PROPERTIES:
            out.append(
                Diagnostic(
                    "NX124",
                    f"`{prop.key}` has no effect on an agent: {IGNORED_AGENT_PROPERTIES[prop.key]}",
                    prop.key_span,
                    Severity.HINT,
                    unnecessary=True,
                )
            )
            continue
        guess = _did_you_mean(prop.key, AGENT_PROPERTIES)
        message = f"`{prop.key}` is not an agent property the runtime reads; it is ignored"
        fixes: tuple[Fix, ...] = ()
        if guess is not None:
            message += f"; did you mean `{guess}`?"
            fixes = (
                Fix(
                    f"Change to `{guess}`",
                    (TextEdit(prop.key_span, guess),),
                    safe=False,
                    why_unsafe=f"the runtime starts reading the value as `{guess}`",
                ),
            )
        out.append(Diagnostic("NX120", message, prop.key_span, Severity.WARNING, fixes))
    for block in agent.context_blocks:
        for entry in block.entries:
            spec = CONTEXT_PROPERTIES.get(entry.key)
            if spec is not None:
                out.extend(_check_property(entry, spec, "context property", "in `context { }`"))
                continue
            guess = _did_you_mean(entry.key, CONTEXT_PROPERTIES)
            message = (
                f"`{entry.key}` is not a context property (use " + ", ".join(f"`{k}`" for k in CONTEXT_PROPERTIES) + ")"
            )
            fixes = ()
            if guess is not None:
                message += f"; did you mean `{guess}`?"
                fixes = (
                    Fix(
                        f"Change to `{guess}`",
                        (TextEdit(entry.key_span, guess),),
                        safe=False,
                        why_unsafe=f"the runtime starts reading the value as `{guess}`",
                    ),
                )
            out.append(Diagnostic("NX123", message, entry.key_span, Severity.WARNING, fixes))
    return out


def _chunk_property_diagnostics(chunk: ParsedChunk) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for item in chunk.items:
        if isinstance(item, t.AgentDecl):
            out.extend(_agent_property_diagnostics(item))
    return out


_PROPERTY_DIAGNOSTICS: ChunkCache[list[Diagnostic]] = ChunkCache(_chunk_property_diagnostics)


# ---------------------------------------------------------------------- names across the file

_ROLE_CODES = {
    RefRole.RUN_RECEIVER: ("NX101", "agent", (DeclKind.AGENT,)),
    RefRole.AGENT: ("NX101", "agent", (DeclKind.AGENT,)),
    RefRole.USES: ("NX102", "tool", (DeclKind.TOOL, DeclKind.AGENT)),
    RefRole.PROTOCOL: ("NX103", "protocol", (DeclKind.PROTOCOL,)),
    RefRole.HANDLER: ("NX104", "agent or flow", (DeclKind.AGENT, DeclKind.FLOW)),
}


def _describe(symbol: Symbol) -> str:
    where = f" (from {symbol.include.include.name})" if symbol.include is not None else ""
    return f"{symbol.kind.value}{where}"


def _undefined(analysis: Analysis, name: str, span: t.Span, role: RefRole) -> Diagnostic:
    code, what, kinds = _ROLE_CODES[role]
    candidates = [s.name for s in analysis.symbols(kinds)]
    guess = _did_you_mean(name, candidates)
    scope = "this file or the files it includes" if analysis.includes else "this file"
    message = f"undefined {what} `{name}`: no {what} of that name is declared in {scope}"
    fixes: tuple[Fix, ...] = ()
    if guess is not None:
        message += f"; did you mean `{guess}`?"
        fixes = (
            Fix(
                f"Change to `{guess}`",
                (TextEdit(span, guess),),
                safe=False,
                why_unsafe=f"`{name}` may be declared in a file that includes this one",
            ),
        )
    return Diagnostic(code, message, span, Severity.WARNING, fixes)


class _RefProblems:
    """The references of one chunk that resolve badly, for one set of visible declarations."""

    __slots__ = ("problems", "signature")

    def __init__(self) -> None:
        self.signature: int | None = None
        self.problems: list[NameRef] = []


_REF_PROBLEMS: ChunkCache[_RefProblems] = ChunkCache(lambda _chunk: _RefProblems())


def _is_problem(analysis: Analysis, ref: NameRef) -> bool:
    info = _ROLE_CODES.get(ref.role)
    if info is None:
        return False
    symbol = analysis.lookup(ref.name)
    return symbol is None or symbol.kind not in info[2]


def _problem_refs(analysis: Analysis) -> Iterator[NameRef]:
    """References that are undefined or of the wrong kind. Per chunk, the answer is kept
    until a declared name or kind changes, so an edit inside a body re-checks that body only."""
    signature = analysis.signature
    for chunk in analysis.source.chunks:
        memo = _REF_PROBLEMS.get(chunk)
        if memo.signature != signature:
            memo.problems = [ref for ref in chunk_facts(chunk).refs if _is_problem(analysis, ref)]
            memo.signature = signature
        yield from memo.problems


def _reference_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for ref in _problem_refs(analysis):
        symbol = analysis.lookup(ref.name)
        if symbol is None:
            out.append(_undefined(analysis, ref.name, ref.span, ref.role))
            continue
        if ref.role is RefRole.USES:
            out.append(
                Diagnostic(
                    "NX150",
                    f"`uses {ref.name}`: `{ref.name}` is {_a(_describe(symbol))}; an agent uses tools, "
                    'other agents, `std.*` namespaces, skill files ("path.md") and `mcp:"uri"` servers',
                    ref.span,
                    Severity.ERROR,
                    related=_related(symbol),
                )
            )
        elif ref.role is RefRole.RUN_RECEIVER:
            out.append(
                Diagnostic(
                    "NX151",
                    f"`{ref.name}` is {_a(_describe(symbol))}, not an agent: only agents have run entries "
                    "(`.run`, `.execute`, `.continue`, `.resume`)",
                    ref.span,
                    Severity.ERROR,
                    related=_related(symbol),
                )
            )
        elif ref.role is RefRole.PROTOCOL:
            out.append(
                Diagnostic(
                    "NX152",
                    f"`implements {ref.name}`: `{ref.name}` is {_a(_describe(symbol))}, not a protocol",
                    ref.span,
                    Severity.ERROR,
                    related=_related(symbol),
                )
            )
    return out


def _related(symbol: Symbol) -> tuple[Related, ...]:
    if symbol.include is not None:
        return ()
    return (Related(symbol.name_span, f"`{symbol.name}` is declared here"),)


def _declaration_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for name, decls in analysis.file.declarations.items():
        first = decls[0]
        for later in decls[1:]:
            out.append(
                Diagnostic(
                    "NX110",
                    f"`{name}` is already declared in this file (as {_a(_kind_of(first))}); rename one of them",
                    later.name_span,
                    Severity.ERROR,
                    related=(Related(first.name_span, "first declared here"),),
                )
            )
        outside = [s for s in analysis.scope.get(name, ()) if s.include is not None]
        if outside:
            other = outside[0]
            assert other.include is not None
            out.append(
                Diagnostic(
                    "NX111",
                    f'`{name}` is also declared in the included file "{other.include.include.name}" '
                    f"(as {_a(other.kind.value)}); both declarations end up in one program",
                    first.name_span,
                    Severity.WARNING,
                )
            )
    return out


def _kind_of(decl: t.Decl) -> str:
    kind = declared_kind(decl)
    return kind.value if kind is not None else "declaration"


def _include_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for inc in analysis.includes:
        if inc.missing:
            out.append(
                Diagnostic(
                    "NX140",
                    f'included file "{inc.include.name}" not found (looked next to this file and in stdlib/)',
                    inc.include.span,
                    Severity.ERROR,
                )
            )
    return out


def _unused_tool_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    own = analysis.file
    tools = [d for decls in own.declarations.values() for d in decls if isinstance(d, t.ToolDecl | t.ToolFunction)]
    if not tools:
        return []
    agents = list(analysis.symbols((DeclKind.AGENT,)))
    if not any(isinstance(d, t.AgentDecl) for decls in own.declarations.values() for d in decls):
        return []  # a file without agents is a tool library for the files that include it
    used: set[str] = {ref.name for ref in own.refs}
    for inc in analysis.includes:
        if inc.symbols is not None:
            used.update(ref.name for ref in inc.symbols.refs)
    auto_attach = any(isinstance(s.decl, t.AgentDecl) and not s.decl.uses for s in agents)
    out: list[Diagnostic] = []
    for tool in tools:
        if tool.name in used or (auto_attach and isinstance(tool, t.ToolFunction)):
            continue
        out.append(
            Diagnostic(
                "NX130",
                f"tool `{tool.name}` is never used: no agent lists it after `uses` and no flow calls it",
                tool.name_span,
                Severity.WARNING,
                unnecessary=True,
            )
        )
    return out


def analysis_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    """Every semantic diagnostic of an analysed file."""
    out: list[Diagnostic] = []
    for chunk in analysis.source.chunks:
        out.extend(_PROPERTY_DIAGNOSTICS.get(chunk))
    out.extend(_include_diagnostics(analysis))
    out.extend(_declaration_diagnostics(analysis))
    out.extend(_reference_diagnostics(analysis))
    out.extend(_unused_tool_diagnostics(analysis))
    return out


def semantic_diagnostics(source: SourceFile, includes: IncludeResolver | None = None) -> list[Diagnostic]:
    """Diagnostics that need names resolved across the file and its includes."""
    locate = locator_from_resolver(includes) if includes is not None else None
    return analysis_diagnostics(analyze(source, None, locate))


__all__ = [
    "AGENT_PROPERTIES",
    "CONTEXT_PROPERTIES",
    "IGNORED_AGENT_PROPERTIES",
    "TOOL_PROPERTIES",
    "PropertySpec",
    "analysis_diagnostics",
    "file_symbols",
    "semantic_diagnostics",
]
