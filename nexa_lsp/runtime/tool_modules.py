"""Finding the Python module that implements a declared tool, without running any of it.

Tool modules are read, not imported: ``defined_names`` parses a module's file and lists
what its top level binds (``def``, ``class``, assignments, imports), so a language server
can tell where each tool comes from while the user's code only ever runs in a tool
process (``tool_process``). A file is parsed again only when it changed.
"""

from __future__ import annotations

import ast
import os
import threading
from collections.abc import Sequence
from pathlib import Path

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
