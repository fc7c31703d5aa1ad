"""``documentSymbol`` joined from per-chunk JSON equals pygls' own encoding of the symbols.

The server answers the outline as JSON text kept per chunk (``chunked_lsp.EncodedJson``),
written without pygls' cattrs pass. Decoded, it must equal what pygls writes for the same
symbols, after edits that keep, move and change chunks (non-ASCII text above them included).
The stdio tests (``test_features.py``, ``tests/fuzz/test_incremental_lsp.py``) read the same
answers through a real client.
"""

from __future__ import annotations

import io
import json
from typing import Any

from lsprotocol import types as lsp

from nexa_lsp.server import chunked_lsp
from nexa_lsp.server.from_lsp import ClientFacts
from nexa_lsp.server.main import create_server
from nexa_lsp.syntax import parse_source

TEXT = """tool Search { description: "查找", parameters: {"q": "string"} }
agent Writer uses Search { role: "作者", prompt: "写" }
agent Critic { prompt: "c" }
flow main {
    a = Writer.run("x")
    print(a)
}
"""

EDITS = [
    lambda s: s.replace('prompt: "写"', 'prompt: "写\\n第二行"'),  # a chunk grows: the ones below move
    lambda s: "// 注释 😀\n" + s,  # every chunk moves, columns in UTF-16 after non-ASCII
    lambda s: s.replace("agent Critic", "agent Judge"),  # one chunk changes
    lambda s: s + 'flow other { Judge.run("y") }\n',  # a chunk is added
]


def _pygls_json(server: object, symbols: object) -> object:
    """What pygls writes as the ``result`` of a response carrying ``symbols``."""
    converter = server.protocol._converter  # type: ignore[attr-defined]
    response = lsp.DocumentSymbolResponse(id=1, result=symbols)  # type: ignore[arg-type]
    return json.loads(json.dumps(converter.unstructure(response)))["result"]


def test_the_joined_json_equals_pygls_encoding_after_each_edit() -> None:
    server = create_server()
    converter = server.protocol._converter

    def encode(symbols: object) -> str:
        return json.dumps([converter.unstructure(s) for s in symbols])[1:-1]  # type: ignore[attr-defined]

    client = ClientFacts(hierarchical_symbols=True)
    text, previous = TEXT, None
    for step in range(len(EDITS) + 1):
        source = parse_source(text, previous)
        for _repeat in range(2):  # the second answer comes from the kept JSON
            encoded = chunked_lsp.chunked_document_symbols("file:///t.nx", source, client, encode)
            assert isinstance(encoded, chunked_lsp.EncodedJson)
            plain = chunked_lsp.chunked_document_symbols("file:///t.nx", parse_source(text), client)
            assert json.loads(encoded.text) == _pygls_json(server, plain), step
        assert json.loads(encoded.text)  # never an empty outline here
        if step < len(EDITS):
            previous, text = source, EDITS[step](text)


def captured_output(server: Any) -> io.BytesIO:
    """What ``server`` writes from now on (its protocol's writer replaced by a buffer)."""
    out = io.BytesIO()

    class Writer:
        def write(self, data: bytes) -> None:
            out.write(data)

        def close(self) -> None:
            pass

    server.protocol.set_writer(Writer())
    return out


def test_the_protocol_writes_an_encoded_answer_as_a_framed_response() -> None:
    server = create_server()
    out = captured_output(server)
    server.protocol._send_response(7, chunked_lsp.EncodedJson('[{"name": "中"}]'))
    header, body = out.getvalue().split(b"\r\n\r\n", 1)
    assert int(header.split(b"\r\n")[0].split(b": ")[1]) == len(body)
    assert json.loads(body) == {"id": 7, "result": [{"name": "中"}], "jsonrpc": "2.0"}
