"""Reading the argument of a ``nexa.*`` run command, and refusing a command in words.

Every run command takes one JSON object (docs/commands.md). Clients spell "no argument"
in several ways, all accepted: ``"arguments": [{...}]``, ``[]``, ``[[]]`` / ``{}`` (Lua
encodes an empty table ``{}`` as ``[]``) and no ``arguments`` at all.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from nexa_lsp.runtime.errors import NexaRuntimeError
from nexa_lsp.runtime.run_state import RunConfig

T = TypeVar("T")


class Refused(Exception):
    """A command the runtime (or the editor's rules) refuses; ``str`` is the reason."""


def command_argument(name: str, arguments: Sequence[object]) -> Mapping[str, Any]:
    """The one object argument of command ``name`` (empty when the client sent none)."""
    if not arguments:
        return {}
    if len(arguments) == 1:
        only = arguments[0]
        if isinstance(only, Mapping):
            return only
        if isinstance(only, Sequence) and not isinstance(only, str) and len(only) == 0:
            return {}  # an empty Lua table
    raise Refused(f"{name} takes one object argument (see docs/commands.md)")


def required_text(argument: Mapping[str, Any], key: str) -> str:
    value = argument.get(key)
    if not isinstance(value, str) or not value.strip():
        raise Refused(f'the command argument needs "{key}" (a non-empty string)')
    return value


def optional_text(argument: Mapping[str, Any], key: str) -> str | None:
    value = argument.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise Refused(f'"{key}" must be a string')
    return value


def run_config(value: object) -> RunConfig:
    """The ``config`` of a command (absent: the defaults)."""
    if value is None:
        return RunConfig()
    if not isinstance(value, Mapping):
        raise Refused('"config" must be an object (timeout, token_budget, tool_call_budget, model, provider, ...)')
    try:
        return RunConfig.from_dict(value)
    except (ValueError, TypeError) as exc:
        raise Refused(f"config: {exc}") from None


def guard(compute: Callable[[], T]) -> T:
    """Run a runtime call made before a run starts; its error becomes a refusal."""
    try:
        return compute()
    except (NexaRuntimeError, ValueError, OSError) as exc:
        raise Refused(str(exc)) from None


def editor_user() -> str:
    """Who decided, as recorded with an approval made in the editor."""
    try:
        return f"{getpass.getuser()} (editor)"
    except Exception:
        return "editor"
