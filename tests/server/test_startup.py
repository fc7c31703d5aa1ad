"""Start-up: ``initialize`` is answered before the syntax, analysis and ide layers load."""

from __future__ import annotations

import json
import subprocess
import sys

#: Builds a server with every feature module except runs (whose light ``register`` is the runs
#: feature's own contract), answers one ``initialize`` and lists the heavy modules then loaded.
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
    print(json.dumps({
        "answered": b'"capabilities"' in b"".join(writer.data),
        "loaded": sorted(m for m in sys.modules if m.startswith(heavy)),
    }))

asyncio.run(main())
"""


def test_initialize_is_answered_with_only_the_server_glue_loaded() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["answered"]
    assert found["loaded"] == ["nexa_lsp.ide.legend"]  # the semantic token legend, a table of names
