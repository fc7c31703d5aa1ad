"""Running a declared tool's Python function in a process of its own.

A tool that the runtime finds by name (``python: "module.function"`` on the tool, a tool
module from the settings, the CLI's ``--tools``) is called in a fresh Python process:

* its current directory is the run's working directory, so relative paths in the tool
  mean what the contract says (the run's working directory is part of its fingerprint),
  and concurrent runs in one process never race on ``os.chdir``;
* its ``print`` output goes to stderr, never into the caller's stdout (which is the
  language server's protocol stream);
* a crash, ``sys.exit`` or a hang in the tool cannot take the caller down with it;
* it imports the module anew on every call, so a changed file is picked up at once.

The arguments go in as JSON on stdin; the result (text, or JSON for other values, as
in ``Tool.call``) comes back as JSON on the process's own stdout. An exception in the
tool comes back as ``ToolRaised`` with its type name and message. A module that cannot
be imported, a missing function or a value that is not callable is a
``ToolDefinitionError`` (NXR041) naming where the tool was looked up.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexa_lsp.runtime.errors import ToolDefinitionError
from nexa_lsp.runtime.tools import working_directory

# The program of the tool process. Only the standard library: it runs in whatever
# environment the tool needs, without importing nexa-lsp.
_RUNNER = r"""
import importlib, importlib.util, json, os, sys
reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)  # the tool's own output goes to stderr
request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
sys.path[:0] = request["path"]

def answer(**data):
    reply.write(json.dumps(data, ensure_ascii=False))
    reply.flush()
    sys.exit(0)

try:
    if request["file"]:
        spec = importlib.util.spec_from_file_location(request["module"], request["file"])
        module = importlib.util.module_from_spec(spec)
        sys.modules[request["module"]] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(request["module"])
except BaseException as exc:
    answer(problem="import", type=type(exc).__name__, message=str(exc))
function = getattr(module, request["function"], None)
if function is None:
    answer(problem="missing")
if not callable(function):
    answer(problem="not_callable", type=type(function).__name__)
try:
    result = function(**request["arguments"])
except BaseException as exc:
    answer(raised=type(exc).__name__, message=str(exc))
if not isinstance(result, str):
    result = json.dumps(result, ensure_ascii=False, default=str)
answer(result=result)
"""


class ToolRaised(Exception):
    """The tool's function raised; ``type_name`` is the exception's class name in the tool process."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.message = message


@dataclass(frozen=True)
class ToolImplementation:
    """Where a declared tool's function is: ``function`` in a module that is either the
    file ``module_file`` or the import name ``module`` (searched in ``search_path`` first).
    ``origin`` says which rule found it, for messages."""

    tool: str
    function: str
    module: str
    module_file: Path | None = None
    search_path: tuple[str, ...] = ()
    origin: str = ""

    @property
    def shown(self) -> str:
        """``module.function`` (or ``file.py:function``) as messages show it."""
        where = str(self.module_file) if self.module_file is not None else self.module
        separator = ":" if self.module_file is not None else "."
        return f"{where}{separator}{self.function}"

    def _problem(self, text: str) -> ToolDefinitionError:
        found = f" ({self.origin})" if self.origin else ""
        return ToolDefinitionError(f"tool {self.tool}: {text}{found}")

    def __call__(self, **arguments: Any) -> str:
        """The tool's function, called in the working directory of the run calling it."""
        return self.call(arguments, working_directory())

    def call(self, arguments: Mapping[str, Any], directory: str | Path) -> str:
        """Run the function with ``arguments`` in a new process whose current directory is ``directory``."""
        request = {
            "file": str(self.module_file) if self.module_file is not None else None,
            "module": self.module,
            "function": self.function,
            "path": list(self.search_path),
            "arguments": dict(arguments),
        }
        try:
            finished = subprocess.run(
                [sys.executable, "-c", _RUNNER],
                input=json.dumps(request, ensure_ascii=False).encode("utf-8"),
                stdout=subprocess.PIPE,
                cwd=directory,
                check=False,
            )
        except OSError as exc:
            raise self._problem(f"cannot start a Python process for {self.shown} in {directory}: {exc}") from exc
        try:
            reply = json.loads(finished.stdout.decode("utf-8", "replace"))
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise ToolRaised(
                "ToolProcessError",
                f"the process running {self.shown} ended with exit code {finished.returncode} without a result "
                "(its output is on stderr)",
            )
        if "result" in reply:
            return str(reply["result"])
        if "raised" in reply:
            raise ToolRaised(str(reply["raised"]), str(reply.get("message", "")))
        problem = reply.get("problem")
        if problem == "import":
            raise self._problem(
                f"cannot import {self.module_file or self.module} ({reply.get('type')}: {reply.get('message')})"
            )
        if problem == "missing":
            raise self._problem(f"{self.module_file or self.module} has no function {self.function!r}")
        raise self._problem(f"{self.shown} is not callable (it is a {reply.get('type')})")
