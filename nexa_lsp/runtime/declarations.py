"""Build a ``NexaAgent`` from an ``agent`` declaration of a parsed ``.nx`` file.

Mapping (Nexa 2.x semantics where they exist):

* system prompt = ``prompt`` with ``Role: <role>. `` before it; ``model`` (first primary
  entry of a model list; ``provider/model`` ids choose the provider);
* tools = the ``uses`` entries that name a ``tool`` block or an ``@tool`` function of the
  file (without ``uses``: every ``@tool`` function, as in 2.x). A tool's implementation
  follows the one rule of ``tool_modules.implementation_for``: ``implementations[name]``,
  else its ``python: "module.function"``, else the tool modules (``tool_modules``: the
  CLI's ``--tools`` or the editor's setting, then ``TOOL_MODULES`` of the ``.nxs`` files);
  nothing is imported while building; a tool without one fails the run with NXR041
  (saying where it was looked for) if the model calls it. ``std.*``, ``mcp:`` and
  skill entries are not available in this runtime and are reported through ``on_warning``;
* ``approval: "required"`` on a tool (and ``requires_approval: true`` on an ``@tool``)
  makes it approval-required on the Nexa 3.0 path; on the 2.4 path it has no effect,
  as the language spec says;
* ``@timeout(seconds=N)`` -> ``RunConfig.timeout`` (run deadline);
  ``@limit(max_tokens=N)`` and ``max_tokens: N`` -> ``max_output_tokens``;
  ``max_tool_calls: N`` -> ``tool_call_budget``; ``@retry(max_attempts=N)`` and
  ``retry: N`` -> ``max_retries`` (provider retries); ``use config NAME;`` ->
  ``config_name``. ``@temperature`` and the per-call ``timeout`` property are ignored.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.errors import AgentDeclarationError
from nexa_lsp.runtime.run_state import RunConfig
from nexa_lsp.runtime.tool_modules import CLI_OPTION, ToolModules, implementation_for, settings_tool_modules
from nexa_lsp.runtime.tools import Tool, as_tool
from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Severity
from nexa_lsp.syntax.source import SourceFile
from nexa_lsp.syntax.version import VersionPath

Warn = Callable[[str], None]
_Finder = Callable[[str, str | None], Callable[..., Any]]

_TYPE_NAMES = {
    "string": "string",
    "str": "string",
    "int": "integer",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "array": "array",
    "dict": "object",
    "object": "object",
}


def _schema_for(type_text: str | None) -> dict[str, Any]:
    if type_text is None:
        return {}
    kind = _TYPE_NAMES.get(type_text.strip().lower())
    if kind is not None:
        return {"type": kind}
    return {"type": "string", "description": type_text}


def _object_schema(params: list[tuple[str, str | None, bool]]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: _schema_for(type_text) for name, type_text, _ in params},
        "required": [name for name, _, required in params if required],
    }


def _tool_from_block(decl: t.ToolDecl, approvals: bool, find: _Finder) -> Tool:
    python = decl.get_property("python")
    dotted = python.value.text if python is not None else None
    function = find(decl.name, dotted)
    description = decl.description or (f"python: {dotted}" if dotted else decl.name)
    parameters = _object_schema([(name, type_text, True) for name, type_text in decl.parameters])
    return Tool(decl.name, description, parameters, function, approvals and decl.approval == "required")


def _tool_from_function(decl: t.ToolFunction, approvals: bool, find: _Finder) -> Tool:
    python = next((p for p in decl.config if p.key == "python"), None)
    dotted = python.value.text if python is not None else None
    function = find(decl.name, dotted)
    parameters = _object_schema([(p.name, p.type_text, p.default is None) for p in decl.params])
    return Tool(decl.name, decl.description or decl.name, parameters, function, approvals and decl.requires_approval)


@dataclasses.dataclass(frozen=True)
class _SourceIndex:
    """What every agent of a file needs from it, computed once per parsed file (a language
    server builds every agent of a file: per agent, a scan of all items was quadratic)."""

    blocks: dict[str, t.ToolDecl] = dataclasses.field(default_factory=dict)
    functions: dict[str, t.ToolFunction] = dataclasses.field(default_factory=dict)
    agents: frozenset[str] = frozenset()
    config_name: str | None = None


_INDEX_CACHE: list[tuple[SourceFile, list[t.TopItem], int, _SourceIndex]] = []
_INDEX_LOCK = threading.Lock()
_INDEX_SIZE = 4


def _index_of(source: SourceFile | None) -> _SourceIndex:
    if source is None:
        return _SourceIndex()
    items = source.items
    with _INDEX_LOCK:
        for cached, cached_items, size, index in _INDEX_CACHE:
            if cached is source and cached_items is items and size == len(items):
                return index
    blocks: dict[str, t.ToolDecl] = {}
    functions: dict[str, t.ToolFunction] = {}
    agents: set[str] = set()
    config_name: str | None = None
    use_seen = False
    for item in items:
        if isinstance(item, t.ToolDecl):
            blocks[item.name] = item
        elif isinstance(item, t.ToolFunction):
            functions[item.name] = item
        elif isinstance(item, t.AgentDecl):
            agents.add(item.name)
        elif isinstance(item, t.UseConfig) and not use_seen:
            use_seen = True
            config_name = item.name or None
    index = _SourceIndex(blocks, functions, frozenset(agents), config_name)
    with _INDEX_LOCK:
        _INDEX_CACHE.insert(0, (source, items, len(items), index))
        del _INDEX_CACHE[_INDEX_SIZE:]
    return index


def _number(args: list[t.Property], key: str) -> float | None:
    for prop in args:
        if prop.key == key and isinstance(prop.value.value, int | float) and not isinstance(prop.value.value, bool):
            return float(prop.value.value)
    return None


def _defaults_of(decl: t.AgentDecl, source: SourceFile | None) -> RunConfig:
    values: dict[str, Any] = {}
    for decorator in decl.decorators:
        if decorator.name == "timeout" and (seconds := _number(decorator.args, "seconds")) is not None:
            values["timeout"] = seconds
        elif decorator.name == "limit" and (tokens := _number(decorator.args, "max_tokens")) is not None:
            values["max_output_tokens"] = int(tokens)
        elif decorator.name == "retry" and (attempts := _number(decorator.args, "max_attempts")) is not None:
            values["max_retries"] = int(attempts)
    for key, field in (
        ("max_tokens", "max_output_tokens"),
        ("max_tool_calls", "tool_call_budget"),
        ("retry", "max_retries"),
    ):
        prop = decl.get_property(key)
        if prop is not None and isinstance(prop.value.value, int) and not isinstance(prop.value.value, bool):
            values.setdefault(field, prop.value.value)
    config_name = _index_of(source).config_name
    if config_name:
        values["config_name"] = config_name
    return RunConfig(**values)


def agent_from_declaration(
    decl: t.AgentDecl,
    source: SourceFile | None = None,
    *,
    path: str | Path | None = None,
    implementations: Mapping[str, Callable[..., Any] | Tool] | None = None,
    tool_modules: Sequence[Path] | ToolModules = (),
    on_warning: Warn | None = None,
) -> NexaAgent:
    """A ``NexaAgent`` for ``decl`` (``source`` is the parsed file it is in, ``path`` its location).

    Builds only data: no user code is imported until a tool is actually called, so a
    language server can use this to compute fingerprints and definition drift.
    """
    warn = on_warning or (lambda _message: None)
    implementations = dict(implementations or {})
    folder = Path(path).resolve().parent if path is not None else None
    source_name = str(path) if path is not None else "the source"
    approvals = source is not None and source.path is VersionPath.NEXA_30
    index = _index_of(source)
    blocks, functions, agents = index.blocks, index.functions, index.agents

    named = tool_modules if isinstance(tool_modules, ToolModules) else ToolModules(CLI_OPTION, tuple(tool_modules))
    places: list[ToolModules] = []

    def find(name: str, dotted: str | None) -> Callable[..., Any]:
        item = implementations.get(name)
        explicit = item.function if isinstance(item, Tool) else item
        if explicit is None and not dotted and not places:  # the .nxs files are read only when needed
            places.extend((named, settings_tool_modules(folder, index.config_name)))
        return implementation_for(
            name, explicit=explicit, python=dotted, folder=folder, places=places, source=source_name
        )

    tools: list[Tool] = []
    names = [u.text for u in decl.uses if u.kind == "name"] if decl.uses else list(functions)
    for use in decl.uses:
        if use.kind != "name":
            warn(f"agent {decl.name}: `uses {use.text}` ({use.kind}) is not available in this runtime; skipped")
    for name in names:
        if name in blocks:
            tools.append(_tool_from_block(blocks[name], approvals, find))
        elif name in functions:
            tools.append(_tool_from_function(functions[name], approvals, find))
        elif isinstance(implementations.get(name), Tool) or name in implementations:
            tools.append(as_tool(implementations[name]))
        elif name in agents:
            warn(f"agent {decl.name}: using agent {name} as a tool is not supported by this runtime; skipped")
        else:
            warn(f"agent {decl.name}: `uses {name}` names no tool declared in {source_name}; skipped")
    if decl.implements:
        warn(f"agent {decl.name}: `implements {decl.implements}` output validation is not applied by this runtime")
    return NexaAgent(
        decl.name,
        prompt=decl.prompt or "",
        model=decl.model,
        tools=tools,
        role=decl.role,
        defaults=_defaults_of(decl, source),
        source=str(Path(path).resolve()) if path is not None else None,
    )


def load_agent(
    path: str | Path,
    name: str,
    *,
    implementations: Mapping[str, Callable[..., Any] | Tool] | None = None,
    tool_modules: Sequence[Path] | ToolModules = (),
    on_warning: Warn | None = None,
) -> NexaAgent:
    """Read ``path``, parse it, and build its agent ``name``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentDeclarationError(f"cannot read {path}: {exc}") from exc
    source = parse_source(text)
    declared = [i for i in source.items if isinstance(i, t.AgentDecl)]
    decl = next((d for d in declared if d.name == name), None)
    if decl is None:
        available = ", ".join(d.name for d in declared) or "none"
        raise AgentDeclarationError(f"{path} declares no agent {name!r} (agents: {available})")
    errors = [
        d
        for d in source.diagnostics
        if d.severity is Severity.ERROR and decl.span.start <= d.span.start < decl.span.end
    ]
    if errors:
        first = errors[0]
        line = source.lines.line_of(first.span.start) + 1
        raise AgentDeclarationError(
            f"agent {name} in {path} has syntax errors (line {line}: {first.code} {first.message}); "
            f"run `nexa-lsp check {path}`"
        )
    return agent_from_declaration(
        decl, source, path=path, implementations=implementations, tool_modules=tool_modules, on_warning=on_warning
    )
