"""Start-up: ``initialize`` is answered before the syntax, analysis and ide layers load, and a
document opened right after still gets its diagnostics."""

from __future__ import annotations

import json
import subprocess
import sys

#: Builds a server with every feature module except runs (whose light ``register`` is the runs
#: feature's own contract), answers one ``initialize``, lists the heavy modules then loaded, and
#: checks that a document opened right after gets its diagnostics.
SCRIPT = """
import asyncio, json, sys
from nexa_lsp.server import document_info, features, session, sync
from nexa_lsp.server.app import NexaLanguageServer

class Writer:
    def __init__(self): self.data = []
    def write(self, data): self.data.append(data)
    def close(self): pass

async def main():
    server = NexaLanguageServer()
    for module in (session, sync, features, document_info):
        module.register(server)
    writer = Writer()
    server.protocol.set_writer(writer)
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": None, "rootUri": None, "capabilities": {}}}
    server.protocol.handle_message(json.loads(json.dumps(request), object_hook=server.protocol.structure_message))
    heavy = ("lark", "httpx", "nexa_lsp.syntax", "nexa_lsp.analysis", "nexa_lsp.ide.", "nexa_lsp.runtime")
    answered = b'"capabilities"' in b"".join(writer.data)
    loaded = sorted(m for m in sys.modules if m.startswith(heavy))
    # then a document opens at once: its diagnostics arrive (the layers load on the way)
    opened = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///tmp/start.nx", "languageId": "nexa", "version": 1,
        "text": 'flow main {\\n    x = Nobody.run("y")\\n}\\n'}}}
    server.protocol.handle_message(json.loads(json.dumps(opened), object_hook=server.protocol.structure_message))
    for _ in range(600):
        await asyncio.sleep(0.05)
        if b"publishDiagnostics" in b"".join(writer.data):
            break
    sent = b"".join(writer.data).decode()
    print(json.dumps({"answered": answered, "loaded": loaded, "published": "NX101" in sent}))

asyncio.run(main())
"""


def test_initialize_is_answered_with_only_the_server_glue_loaded() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["answered"]
    assert found["loaded"] == ["nexa_lsp.ide.legend"]  # the semantic token legend, a table of names
    assert found["published"], out.stderr


#: Builds the full server (every feature, the runs feature included) and lists the parser
#: and transport modules its registration loaded.
FULL_SCRIPT = """
import json, sys
from nexa_lsp.server.main import create_server
create_server()
heavy = ("lark", "httpx", "nexa_lsp.syntax.source", "nexa_lsp.syntax.grammar", "nexa_lsp.syntax.builder",
         "nexa_lsp.analysis.engine", "nexa_lsp.analysis.migration", "nexa_lsp.analysis.semantic")
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))))
"""


def test_registering_every_feature_loads_no_parser() -> None:
    out = subprocess.run([sys.executable, "-c", FULL_SCRIPT], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_the_syntax_package_still_exports_its_names() -> None:
    import nexa_lsp.syntax as syntax
    from nexa_lsp.syntax.source import parse_source

    assert syntax.parse_source is parse_source
    assert syntax.SourceFile.__name__ == "SourceFile"
    assert syntax.Severity.ERROR.name == "ERROR"
    assert sorted(syntax.__all__) == sorted(name for name in syntax.__all__ if hasattr(syntax, name))


#: Builds the full server, answers ``initialize``, and prints the announced capabilities and the
#: runs-feature modules then loaded.
RUNS_SCRIPT = """
import json, sys
from nexa_lsp.server.main import create_server
server = create_server()
class Writer:
    def __init__(self): self.data = []
    def write(self, data): self.data.append(data)
    def close(self): pass
writer = Writer()
server.protocol.set_writer(writer)
request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"processId": None, "rootUri": None, "capabilities": {}}}
server.protocol.handle_message(json.loads(json.dumps(request), object_hook=server.protocol.structure_message))
sent = b"".join(writer.data).decode()
answer = json.loads(sent[sent.index("{"):])
heavy = ("nexa_lsp.runtime", "nexa_lsp.ide.runs", "nexa_lsp.ide.run_commands", "nexa_lsp.syntax.tree",
         "nexa_lsp.server.runs.")
loaded = sorted(m for m in sys.modules if m.startswith(heavy) and m != "nexa_lsp.server.runs.protocol")
print(json.dumps({"capabilities": answer["result"]["capabilities"], "loaded": loaded}))
"""


def test_registering_the_runs_feature_imports_none_of_its_implementation() -> None:
    out = subprocess.run([sys.executable, "-c", RUNS_SCRIPT], capture_output=True, text=True, timeout=60, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["loaded"] == []  # no runtime/, ide/runs, syntax.tree, server/runs modules
    capabilities = found["capabilities"]
    assert capabilities["codeLensProvider"] == {"resolveProvider": False}
    assert "source.nexa.run" in capabilities["codeActionProvider"]["codeActionKinds"]
    commands = capabilities["executeCommandProvider"]["commands"]
    expected = ["nexa.execute", "nexa.resume", "nexa.continue", "nexa.approve", "nexa.deny", "nexa.cancel"]
    assert all(name in commands for name in [*expected, "nexa.recover", "nexa.showRun", "nexa.listRuns"])


def test_the_runs_tables_name_what_the_implementation_serves() -> None:
    from nexa_lsp.ide.run_commands import RUN_ACTION_KIND
    from nexa_lsp.server import runs
    from nexa_lsp.server.runs.commands import RunCommands
    from nexa_lsp.server.runs.details import RUN_DETAILS
    from nexa_lsp.server.runs.features import RunFeatures

    assert runs.RUN_ACTION_KIND == RUN_ACTION_KIND
    assert runs.RUN_DETAILS == RUN_DETAILS
    assert runs.RunFeatures is RunFeatures
    for name in ("execute", "resume", "continue_", "decide", "cancel", "recover", "show_run", "list_runs"):
        assert callable(getattr(RunCommands, name))


def test_the_features_load_turns_garbage_collection_back_on() -> None:
    """``nexa-lsp serve`` starts with collection off (cli/serve.py); the second load turns it on."""
    import gc

    from nexa_lsp.server.main import create_server
    from nexa_lsp.server.startup import StartUp

    startup = StartUp(create_server())
    gc.disable()
    try:
        startup._run("checks", lambda: None)
        assert not gc.isenabled()
        startup._run("features", lambda: None)
        assert gc.isenabled()
        gc.disable()
        startup._run("features", _failing_load)
        assert gc.isenabled()
    finally:
        gc.enable()


def _failing_load() -> None:
    raise ImportError("no such module")
