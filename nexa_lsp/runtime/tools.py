"""Tools: Python callables with a JSON schema, optionally requiring approval before each call.

While a run calls a tool, ``working_directory()`` is that run's working directory. Tools
the runtime loads by name run in a process of their own with it as their current
directory (``tool_process``); a tool given as a Python object runs in the caller's
thread, where the process's current directory is left alone (changing it would race
with every other thread), so such a tool asks ``working_directory()`` instead.
"""

from __future__ import annotations

import contextvars
import hashlib
import inspect
import json
import os
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexa_lsp.runtime.errors import ToolDefinitionError

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_WORKING_DIRECTORY: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "nexa_tool_working_directory", default=None
)


def working_directory() -> Path:
    """The working directory of the run calling the current tool (else the process's own)."""
    return Path(_WORKING_DIRECTORY.get() or os.getcwd())


@contextmanager
def calling_in(directory: str | None) -> Iterator[None]:
    """Within the block, ``working_directory()`` is ``directory`` (for this thread only)."""
    token = _WORKING_DIRECTORY.set(directory)
    try:
        yield
    finally:
        _WORKING_DIRECTORY.reset(token)


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
        if all(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
            return self._schema_problem(arguments)  # a function run elsewhere: its schema says
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

    def _schema_problem(self, arguments: Mapping[str, Any]) -> str | None:
        """Missing required or unexpected names, judged by the parameter schema alone."""
        properties = self.parameters.get("properties")
        if not isinstance(properties, Mapping) or not properties:
            return None  # no parameters declared: nothing is known to check against
        required = self.parameters.get("required") or ()
        problems: list[str] = []
        unexpected = [name for name in arguments if name not in properties]
        missing = [name for name in required if name not in arguments]
        if unexpected:
            problems.append("unexpected " + ", ".join(repr(name) for name in unexpected))
        if missing:
            problems.append("missing " + ", ".join(repr(name) for name in missing))
        return "; ".join(problems) or None

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
