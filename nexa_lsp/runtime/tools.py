"""Tools: Python callables with a JSON schema, optionally requiring approval before each call."""

from __future__ import annotations

import hashlib
import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nexa_lsp.runtime.errors import ToolDefinitionError

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


@dataclass(frozen=True)
class Tool:
    """A callable the model may call by ``name`` with keyword arguments matching ``parameters``.

    ``approval_required`` tools stop the run in ``waiting_approval`` before every call;
    an approval never carries over to another run.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any] = field(compare=False)
    approval_required: bool = False

    def schema_fingerprint(self) -> str:
        """Stable text describing the tool's interface (not its implementation)."""
        return json.dumps(
            {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
                "approval_required": self.approval_required,
            },
            sort_keys=True,
            ensure_ascii=False,
        )

    def argument_problem(self, arguments: Mapping[str, Any]) -> str | None:
        """Why ``arguments`` cannot be passed to the function (missing, unexpected names), or ``None``."""
        try:
            signature = inspect.signature(self.function)
        except (TypeError, ValueError):  # a builtin or C function: nothing to check here
            return None
        try:
            signature.bind(**arguments)
        except TypeError as exc:
            problems: list[str] = []
            parameters = signature.parameters
            open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
            unexpected = [name for name in arguments if name not in parameters and not open_ended]
            missing = [
                name
                for name, p in parameters.items()
                if p.default is inspect.Parameter.empty
                and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
                and name not in arguments
            ]
            if unexpected:
                problems.append("unexpected " + ", ".join(repr(name) for name in unexpected))
            if missing:
                problems.append("missing " + ", ".join(repr(name) for name in missing))
            return "; ".join(problems) or str(exc)
        return None

    def call(self, arguments: Mapping[str, Any]) -> str:
        """Run the tool and return its result as text (non-strings are JSON-encoded)."""
        result = self.function(**arguments)
        if isinstance(result, str):
            return result
        return json.dumps(result, ensure_ascii=False, default=str)


def _json_schema_for(annotation: Any) -> dict[str, Any]:
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    origin = typing.get_origin(annotation)
    if origin in (list, tuple):
        args = typing.get_args(annotation)
        return {"type": "array", "items": _json_schema_for(args[0]) if args else {}}
    if origin is dict or annotation is dict:
        return {"type": "object"}
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return _json_schema_for(options[0])
    return {}


def schema_from_signature(function: Callable[..., Any]) -> dict[str, Any]:
    """A JSON object schema of the function's parameters, from its type hints."""
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # unresolvable annotations: fall back to untyped parameters
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in signature.parameters.items():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        properties[name] = _json_schema_for(hints.get(name, Any))
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required}


def tool(
    function: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    approval_required: bool = False,
) -> Any:
    """Make a ``Tool`` from a function; usable as ``@tool`` or ``@tool(approval_required=True)``."""

    def build(fn: Callable[..., Any]) -> Tool:
        if not callable(fn):
            raise ToolDefinitionError(f"{fn!r} is not callable; a tool needs a function")
        return Tool(
            name=name or fn.__name__,
            description=description if description is not None else inspect.getdoc(fn) or "",
            parameters=dict(parameters) if parameters is not None else schema_from_signature(fn),
            function=fn,
            approval_required=approval_required,
        )

    if function is None:
        return build
    return build(function)


def as_tool(item: Tool | Callable[..., Any]) -> Tool:
    """Accept a ``Tool`` or a plain function."""
    if isinstance(item, Tool):
        return item
    built: Tool = tool(item)
    return built


def tools_fingerprint(tools: tuple[Tool, ...]) -> str:
    text = "\n".join(sorted(t.schema_fingerprint() for t in tools))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
