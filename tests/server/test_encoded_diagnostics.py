"""Diagnostics joined from per-chunk JSON equal pygls' own encoding of the same diagnostics.

The server pushes ``publishDiagnostics`` and answers full ``textDocument/diagnostic`` reports
with JSON text kept per finding of each chunk (``chunked_lsp.chunked_diagnostics``), written
without pygls' cattrs pass. After seeded edit sequences (moved declarations, unbalanced braces,
version changes, Chinese text, CRLF) the decoded push params and pull report must equal what
pygls writes for the diagnostics of a fresh parse of the final text, and the result id must be
the fresh computation's. The stdio test ``tests/fuzz/test_incremental_lsp.py`` reads the same
answers through a real client.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from lsprotocol import types as lsp

from nexa_lsp.analysis.engine import check_source
from nexa_lsp.server import chunked_lsp, to_lsp
from nexa_lsp.server.from_lsp import ClientFacts
from nexa_lsp.server.main import create_server
from nexa_lsp.server.sync import checked
from nexa_lsp.syntax import SourceFile, parse_source
from nexa_lsp.syntax.diagnostics import Diagnostic, Severity
from tests.edit_loops import large_file_and_corpus_loop, small_workflow_loop
from tests.migration.test_incremental import BASE, _edit
from tests.server.test_encoded_symbols import captured_output

URI = "file:///work/中文/t.nx"
CLIENTS = [
    ClientFacts(related_information=True, unnecessary_tag=True),
    ClientFacts(),  # no related information, no tags
]

SERVER = create_server()


def _pygls_push(items: list[lsp.Diagnostic], version: int | None) -> Any:
    """What pygls writes as the params of ``publishDiagnostics`` for ``items``."""
    params = to_lsp.publish_diagnostics(URI, items, version)
    return json.loads(json.dumps(params, default=SERVER.protocol._serialize_message))


def _pygls_pull(items: list[lsp.Diagnostic], result_id: str) -> Any:
    """What pygls writes as the ``result`` of a full ``textDocument/diagnostic`` report."""
    report = to_lsp.document_report(items, result_id, None)
    response = lsp.DocumentDiagnosticResponse(id=1, result=report)
    return json.loads(json.dumps(SERVER.protocol._converter.unstructure(response)))["result"]


class _Seen:
    """Which kinds of LSP fields the compared diagnostics held (the test must cover them)."""

    def __init__(self) -> None:
        self.related = self.tags = self.data = self.non_ascii = 0

    def note(self, items: list[lsp.Diagnostic]) -> None:
        for d in items:
            self.related += bool(d.related_information)
            self.tags += bool(d.tags)
            self.data += bool(d.data)
            self.non_ascii += not d.message.isascii()


def _compare(client: ClientFacts, seen: _Seen, version: int = 3) -> Any:
    def check(source: SourceFile) -> None:
        fresh_source = parse_source(source.text)
        fresh = [to_lsp.diagnostic(d, URI, fresh_source.lines, client) for d in check_source(fresh_source)]
        fresh_result = checked(URI, version, fresh_source, check_source(fresh_source), client)
        seen.note(fresh)
        for _repeat in range(2):  # the second time every finding's JSON is the kept one
            result = checked(URI, version, source, check_source(source), client)
            assert result.lsp == fresh
            assert result.items_json is not None
            push = chunked_lsp.publish_diagnostics_json(URI, result.items_json, version)
            assert json.loads(push) == _pygls_push(fresh, version)
            assert json.loads(chunked_lsp.publish_diagnostics_json(URI, result.items_json, None)) == _pygls_push(
                fresh, None
            )
            assert result.result_id == fresh_result.result_id
            pull = chunked_lsp.full_report_json(result.items_json, result.result_id)
            assert json.loads(pull) == _pygls_pull(fresh, result.result_id)

    return check


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_small_workflow_edits_encode_as_pygls_does(seed: int) -> None:
    seen = _Seen()
    for client in CLIENTS:
        small_workflow_loop(_compare(client, seen), seed)
    assert seen.related and seen.tags and seen.data


def test_large_file_and_corpus_edits_encode_as_pygls_does() -> None:
    seen = _Seen()
    large_file_and_corpus_loop(_compare(CLIENTS[0], seen), 5)
    assert seen.related and seen.data


def test_crlf_edits_encode_as_pygls_does() -> None:
    seen = _Seen()
    check = _compare(CLIENTS[0], seen)
    rng = random.Random(9)
    text = BASE.replace("\n", "\r\n") + 'flow 中文 { x = "写" }\r\n'  # a finding whose message is Chinese
    previous = parse_source(text)
    check(previous)
    for _step in range(30):
        text = _edit(text, rng)
        current = parse_source(text, previous)
        check(current)
        previous = current
    assert "\r\n" in text and seen.related and seen.tags and seen.non_ascii


def test_provided_findings_are_merged_in_position_order() -> None:
    source = parse_source(BASE)
    base = check_source(source)
    anchor = base[len(base) // 2].span
    provided = [
        Diagnostic("NX900", "提供的 late", anchor, Severity.WARNING),
        Diagnostic("NX000", "first", base[0].span, Severity.HINT),
        Diagnostic("NX901", "at the same place", anchor, Severity.WARNING),
    ]
    merged = checked(URI, 1, source, list(base), CLIENTS[0], provided)
    expected = sorted([*base, *provided], key=lambda d: (d.span.start, d.span.end, d.code))
    assert merged.diagnostics == expected
    assert [d.code for d in merged.diagnostics] == [d.code for d in expected]
    fresh = [to_lsp.diagnostic(d, URI, source.lines, CLIENTS[0]) for d in expected]
    assert merged.items_json is not None
    assert json.loads("[" + merged.items_json + "]") == _pygls_push(fresh, 1)["diagnostics"]


def test_the_protocol_writes_an_encoded_notification_as_a_framed_message() -> None:
    server = create_server()
    out = captured_output(server)
    server.notify_encoded(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, '{"uri":"file:///中.nx","diagnostics":[]}')
    header, body = out.getvalue().split(b"\r\n\r\n", 1)
    assert int(header.split(b"\r\n")[0].split(b": ")[1]) == len(body)
    assert json.loads(body) == {
        "method": "textDocument/publishDiagnostics",
        "params": {"uri": "file:///中.nx", "diagnostics": []},
        "jsonrpc": "2.0",
    }
