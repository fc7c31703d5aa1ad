"""Where a declared tool's Python code comes from: one rule for the CLI and the editor.

``implementation_for`` is the rule, in this order (docs/runs.md, "Where a tool's Python
code comes from"):

1. an implementation the caller gives explicitly (``implementations=`` of the Python API);
2. the tool's own ``python: "module.function"`` (the module is imported from the ``.nx``
   file's folder first);
3. tool modules, in the order of the places naming them: the CLI's ``--tools FILE.py`` or
   the editor setting ``nexa.runs.toolModules``, then ``TOOL_MODULES = "a.py, b.py"`` in
   the ``.nxs`` files that apply to the ``.nx`` file's folder (paths relative to the
   ``.nxs`` file). The first module whose top level defines the tool's name wins.

A tool found nowhere fails with ``ToolDefinitionError`` (NXR041) when the model calls it;
the message lists every place looked at.

Tool modules are read, not imported: ``defined_names`` parses a module's file and lists
what its top level binds (``def``, ``class``, assignments, imports), so a language server
can tell where each tool comes from while the user's code only ever runs in a tool
process (``tool_process``). A file is parsed again only when it changed.
"""

from __future__ import annotations

import ast
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexa_lsp.runtime.errors import NexaRuntimeError, ToolDefinitionError
from nexa_lsp.runtime.settings import Settings
from nexa_lsp.runtime.tool_process import ToolImplementation

_CACHE: dict[Path, tuple[tuple[int, int], frozenset[str] | None]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 256
STAR = "*"
"""In ``defined_names``: the module does ``from x import *`` (it may define any name)."""


def _bound(statements: list[ast.stmt], names: set[str]) -> None:
    for node in statements:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names.add(STAR if alias.name == "*" else (alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.If | ast.Try | ast.With):
            _bound(node.body, names)
            _bound(getattr(node, "orelse", []), names)
            for handler in getattr(node, "handlers", []):
                _bound(handler.body, names)
            _bound(getattr(node, "finalbody", []), names)


def defined_names(path: Path) -> frozenset[str] | None:
    """The names a module file binds at its top level, or ``None`` when it cannot be read
    or parsed (the tool process will then report the real error)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    stamp = (info.st_mtime_ns, info.st_size)
    with _CACHE_LOCK:
        cached = _CACHE.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        found: frozenset[str] | None = None
    else:
        names: set[str] = set()
        _bound(tree.body, names)
        found = frozenset(names)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[path] = (stamp, found)
    return found


def implementation_in_files(tool: str, files: Sequence[Path], origin: str) -> ToolImplementation | None:
    """The first of ``files`` whose top level defines ``tool`` (a file with ``import *``
    counts), as the tool's implementation; ``None`` when none does."""
    for index, path in enumerate(files):
        names = defined_names(path)
        if names is not None and (tool in names or STAR in names):
            return ToolImplementation(
                tool=tool,
                function=tool,
                module=f"nexa_tool_module_{index}_{path.stem}",
                module_file=path.resolve(),
                search_path=(str(path.resolve().parent),),
                origin=f"{origin} {path}",
            )
    return None


# --- the rule -------------------------------------------------------------------------------

CLI_OPTION = "--tools"
EDITOR_SETTING = "setting nexa.runs.toolModules"
SETTINGS_KEY = "TOOL_MODULES"


@dataclass(frozen=True)
class ToolModules:
    """The tool module files one place names (``origin`` says which, for messages);
    ``problem`` says why that place could not be read."""

    origin: str
    files: tuple[Path, ...] = ()
    problem: str | None = None

    def looked_at(self, tool: str) -> str:
        """How NXR041 describes this place for ``tool``."""
        if self.problem is not None:
            return f"{self.origin}: {self.problem}"
        if not self.files:
            return f"{self.origin}: none named"
        shown = ", ".join(str(f) for f in self.files)
        return f"{self.origin}: {shown} (none defines {tool})"


def settings_tool_modules(folder: Path | None, config_name: str | None = None) -> ToolModules:
    """``TOOL_MODULES`` of the ``.nxs`` files that apply to ``folder`` (the ``.nx`` file's
    folder and its parents, nearest first), paths relative to the file setting it."""
    if folder is None:
        return ToolModules(f"{SETTINGS_KEY} in .nxs files", problem="the source has no folder")
    where = f"{SETTINGS_KEY} in .nxs files of {folder} and its parents"
    try:
        files, origin = Settings.load(folder, config_name, environ={}).paths(SETTINGS_KEY)
    except NexaRuntimeError as exc:  # a broken .nxs file: the run's settings will say so too
        return ToolModules(where, problem=str(exc))
    if origin is None:
        return ToolModules(where)
    return ToolModules(f"{SETTINGS_KEY} in {origin}", tuple(files))


def python_implementation(dotted: str, folder: Path | None, tool: str, source: str) -> Callable[..., Any]:
    """The function ``python: "module.function"`` names, run in a tool process (``tool_process``)."""
    module_name, _, function_name = dotted.rpartition(".")
    if not module_name or not function_name:

        def malformed(**_arguments: Any) -> Any:
            raise ToolDefinitionError(
                f'tool {tool} in {source}: python: {dotted!r} must be "module.function" (for example '
                f'"{tool}_tools.{tool}")'
            )

        return malformed
    return ToolImplementation(
        tool=tool,
        function=function_name,
        module=module_name,
        search_path=(str(folder),) if folder is not None else (),
        origin=f'python: "{dotted}" on tool {tool} in {source}',
    )


def implementation_for(
    tool: str,
    *,
    explicit: Callable[..., Any] | None,
    python: str | None,
    folder: Path | None,
    places: Sequence[ToolModules],
    source: str,
) -> Callable[..., Any]:
    """The implementation of declared tool ``tool`` by the rule of this module's docstring
    (``python`` is the tool's ``python:`` value, ``folder`` the ``.nx`` file's folder,
    ``source`` how messages name the file). Nothing is imported here."""
    if explicit is not None:
        return explicit
    if python:
        return python_implementation(python, folder, tool, source)
    for place in places:
        found = implementation_in_files(tool, place.files, place.origin)
        if found is not None:
            return found
    looked = [
        f"implementations= given by the caller (Python API): none for {tool}",
        '`python: "module.function"` on the tool: not set',
        *(p.looked_at(tool) for p in places),
    ]

    def missing(**_arguments: Any) -> Any:
        raise ToolDefinitionError(
            f"tool {tool} is declared in {source} but has no Python implementation here. Looked at: "
            + "; ".join(looked)
            + f'. Add `python: "module.function"` to the tool, or name a module defining {tool} in one of these '
            '(docs/runs.md, "Where a tool\'s Python code comes from")'
        )

    return missing
