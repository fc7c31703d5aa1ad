"""The runs feature at start-up and at the edge of its commands: registering it loads no
provider code, and every spelling clients use for "one object argument" is accepted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.robustness.helpers import subprocess_env
from tests.robustness.lsp_wire import WireClient
from tests.server.test_runs_support import crashed_run, make_workspace

_IMPORTS = """
import json, sys
from nexa_lsp.server.app import NexaLanguageServer
from nexa_lsp.server import runs
server = NexaLanguageServer()
runs.register(server)
print(json.dumps({"modules": sorted(sys.modules), "commands": sorted(server.protocol.fm.commands)}))
"""

HEAVY = ("httpx", "nexa_lsp.runtime.agent", "nexa_lsp.runtime.providers", "nexa_lsp.runtime.declarations")


def test_registering_the_runs_feature_loads_no_agent_runtime_or_http() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS], capture_output=True, text=True, timeout=60, env=subprocess_env()
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    loaded = set(found["modules"])
    assert "nexa.execute" in found["commands"]  # the feature really registered
    assert not [m for m in loaded if m in HEAVY or m.startswith("httpx.")]


@pytest.mark.parametrize(
    "arguments",
    [[{}], [], [[]], {}, None],
    ids=["one-object", "empty-list", "lua-empty-table", "empty-object", "absent"],
)
def test_list_runs_accepts_every_spelling_of_no_argument(arguments: Any, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [])
    asks = [{"text": "x", "tool_calls": [{"id": "c", "name": "lookup"}]}]
    state = crashed_run(ws, "Analyst", "Analyze", asks, "asked")
    client = WireClient(ws.folder)
    try:
        client.initialize(ws.folder)
        params: dict[str, Any] = {"command": "nexa.listRuns"}
        if arguments is not None:
            params["arguments"] = arguments
        answer = client.request("workspace/executeCommand", params)
        assert "error" not in answer, answer
        assert [r["run_id"] for r in answer["result"]["runs"]] == [state.run_id]
    finally:
        client.close()


def test_an_argument_that_is_not_an_object_is_refused_in_words(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [])
    client = WireClient(ws.folder)
    try:
        client.initialize(ws.folder)
        answer = client.request("workspace/executeCommand", {"command": "nexa.listRuns", "arguments": ["Greeter"]})
        assert answer["error"]["message"] == "nexa.listRuns takes one object argument (see docs/commands.md)"
        answer = client.request("workspace/executeCommand", {"command": "nexa.listRuns", "arguments": [{}, {}]})
        assert "takes one object argument" in answer["error"]["message"]
    finally:
        client.close()
