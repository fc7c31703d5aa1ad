"""Hostile LSP traffic over stdio: the server keeps answering.

Malformed JSON-RPC (broken frames, invalid JSON, wrong types), unknown methods, positions
out of range, didChange for unopened or closed documents, out-of-order versions, huge and
binary documents. Every test ends with a normal round trip on a fresh document: its
diagnostics arrive and a hover answers. One server process is shared by the module (it
starts in seconds); a test that kills it fails its own round trip and the next test
gets a new one. Internal errors (JSON-RPC -32603) count as failures too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.robustness.lsp_wire import WireClient, frame

GOOD = 'agent Writer {\n  prompt: "Write clearly"\n  model: \n}\n\nflow main {\n  x = Writer.run("hi")\n}\n'
INTERNAL_ERROR = -32603


class Session:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = WireClient(root)
        self.client.initialize(root)
        self.counter = 0
        self.verified = False
        self.broken = False

    def uri(self, name: str = "doc") -> str:
        self.counter += 1
        return (self.root / f"{name}-{self.counter}.nx").as_uri()

    def internal_errors(self) -> list[dict[str, Any]]:
        return [r for r in self.client.responses.values() if r.get("error", {}).get("code") == INTERNAL_ERROR]

    def round_trip(self) -> None:
        """A fresh document with an error: diagnostics arrive and hover answers."""
        try:
            self._round_trip()
        except BaseException:
            self.broken = True
            raise
        self.verified = True

    def _round_trip(self) -> None:
        client = self.client
        uri = self.uri("check")
        mark = len(client.notifications)
        client.open(uri, GOOD)
        published = client.wait_notification(
            "textDocument/publishDiagnostics", lambda m: m["params"]["uri"] == uri, timeout=15, after=mark
        )
        codes = {d["code"] for d in published["params"]["diagnostics"]}
        assert "NX001" in codes, codes
        hover = client.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 8}}
        )
        assert "Writer" in json.dumps(hover.get("result")), hover
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Session]]:
    holder: dict[str, Session] = {}
    yield holder
    if "session" in holder:
        holder["session"].client.close()


@pytest.fixture
def session(shared: dict[str, Session], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    current = shared.get("session")
    if current is None or current.client.process.poll() is not None:
        current = Session(tmp_path_factory.mktemp("lsp-root"))
        shared["session"] = current
    errors_before = len(current.internal_errors())
    current.verified = False
    yield current
    try:
        if not current.broken and not current.verified:
            current.round_trip()
    finally:
        if current.broken:  # this server stopped answering: the next test gets a new one
            shared.pop("session", None)
            current.client.process.kill()
            current.client.close(timeout=5)
    new_errors = current.internal_errors()[errors_before:]
    assert not new_errors, f"internal errors: {new_errors}"


def hover_at(session: Session, uri: str, line: int, character: int) -> dict[str, Any]:
    return session.client.request(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
    )


# --- malformed JSON-RPC ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        b"{this is not json",
        b"",
        b"null",
        b"42",
        b'"a string"',
        b"[]",
        b'[{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}]',
        b'{"jsonrpc": "2.0"}',
        b'{"jsonrpc": "1.0", "id": 5, "method": "textDocument/hover"}',
        b'{"jsonrpc": "2.0", "id": {"nested": true}, "method": "textDocument/hover", "params": {}}',
        b'{"jsonrpc": "2.0", "id": 7, "method": 12345}',
        b'{"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover", "params": "not an object"}',
        b'{"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover", "params": {"textDocument": 3}}',
        b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": 1}}}',
        b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": null}',
        b'{"jsonrpc": "2.0", "id": 10, "result": "an answer to nothing"}',
        b'{"jsonrpc": "2.0", "id": 11, "error": {"code": 1, "message": "an error for nothing"}}',
        '{"jsonrpc": "2.0", "method": "x\u0000y", "params": {"\u0000": "\ud800"}}'.encode("utf-8", "surrogatepass"),
        b'{"jsonrpc": "2.0", "method": "\xff\xfe", "params": {}}',
        b'{"jsonrpc": "2.0", "id": 12, "method": "textDocument/hover", "params": {"textDocument": {"uri": "x"}, '
        b'"position": {"line": "one", "character": null}}}',
        b"[" * 100_000,
    ],
    ids=lambda p: p[:40].decode("utf-8", "replace"),
)
def test_malformed_messages(session: Session, payload: bytes) -> None:
    session.client.send_raw(frame(payload))


@pytest.mark.parametrize(
    "raw",
    [
        # S1 (docs/reliability.md): pygls' own stdio loop matched the header case-sensitively and took
        # the bytes after a frame without a usable length for headers, so every later message was lost
        pytest.param(b"Content-Length: abc\r\n\r\n{}", id="length-not-a-number"),
        pytest.param(b"Hello: there\r\n\r\n", id="no-length"),
        pytest.param(b"\r\n\r\n\r\n", id="empty-headers"),
        pytest.param(
            b"Content-Type: application/vscode-jsonrpc; charset=latin-1\r\nContent-Length: 2\r\n\r\n{}",
            id="latin-1",
        ),
        # header names are case-insensitive (vscode-jsonrpc lower-cases them)
        pytest.param(b"content-length: 2\r\n\r\n{}", id="lowercase"),
        pytest.param(b"garbage without a newline Content-Length: 2\r\n\r\n{}", id="stray-bytes-first"),
        pytest.param(b"Content-Length: -5\r\n\r\n", id="negative"),
        pytest.param(b"Content-Length: 0\r\n\r\n", id="zero"),
    ],
)
def test_broken_frames(session: Session, raw: bytes) -> None:
    session.client.send_raw(raw)
    session.round_trip()


def test_a_frame_delivered_a_byte_at_a_time(session: Session) -> None:
    uri = session.uri()
    message = frame(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "nexa", "version": 1, "text": GOOD}},
            }
        ).encode()
    )
    for index in range(0, len(message), 7):
        session.client.send_raw(message[index : index + 7])
        time.sleep(0.001)
    assert "Writer" in json.dumps(hover_at(session, uri, 6, 8)["result"])


# --- unknown methods ---------------------------------------------------------------------------


def test_unknown_request_gets_method_not_found(session: Session) -> None:
    answer = session.client.request("nexa/doesNotExist", {"x": 1})
    assert answer["error"]["code"] == -32601, answer


def test_unknown_notifications_are_ignored(session: Session) -> None:
    for method in ("nexa/whatever", "$/unknownThing", "textDocument/notAThing", "x" * 10_000):
        session.client.notify(method, {"payload": "ignored"})
    session.client.notify("$/cancelRequest", {"id": 999_999})
    session.client.notify("$/setTrace", {"value": "verbose"})


def test_duplicate_request_ids(session: Session) -> None:
    uri = session.uri()
    session.client.open(uri, GOOD)
    params = {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 8}}
    for _ in range(3):
        session.client.send({"jsonrpc": "2.0", "id": "same", "method": "textDocument/hover", "params": params})
    assert "result" in session.client.wait_response("same")


# --- positions out of range ----------------------------------------------------------------------

POSITIONS = [(0, 0), (6, 10_000), (10_000, 0), (2**31 - 1, 2**31 - 1), (8, 0), (9, 3)]
POSITION_METHODS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/documentHighlight",
    "textDocument/prepareRename",
    "textDocument/rename",
    "textDocument/signatureHelp",
]


@pytest.mark.parametrize("method", POSITION_METHODS)
def test_positions_out_of_range(session: Session, method: str) -> None:
    uri = session.uri()
    session.client.open(uri, GOOD + "// emoji 😀 here\n")
    for line, character in POSITIONS:
        params: dict[str, Any] = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        if method == "textDocument/references":
            params["context"] = {"includeDeclaration": True}
        if method == "textDocument/rename":
            params["newName"] = "Other"
        answer = session.client.request(method, params)
        assert "result" in answer or answer["error"]["code"] != INTERNAL_ERROR, (method, line, character, answer)


def test_ranges_out_of_range(session: Session) -> None:
    uri = session.uri()
    session.client.open(uri, GOOD)
    bad_ranges = [
        {"start": {"line": 5, "character": 0}, "end": {"line": 1, "character": 0}},
        {"start": {"line": 0, "character": 0}, "end": {"line": 99_999, "character": 99_999}},
        {"start": {"line": 2**31 - 1, "character": 0}, "end": {"line": 2**31 - 1, "character": 2**31 - 1}},
    ]
    for bad in bad_ranges:
        for method, extra in (
            ("textDocument/codeAction", {"context": {"diagnostics": []}}),
            ("textDocument/semanticTokens/range", {}),
            ("textDocument/inlayHint", {}),
        ):
            answer = session.client.request(method, {"textDocument": {"uri": uri}, "range": bad, **extra})
            assert "result" in answer or answer["error"]["code"] != INTERNAL_ERROR, (method, bad, answer)
    selection = session.client.request(
        "textDocument/selectionRange",
        {"textDocument": {"uri": uri}, "positions": [{"line": 99, "character": 99}, {"line": 0, "character": 500}]},
    )
    assert "result" in selection or selection["error"]["code"] != INTERNAL_ERROR


@pytest.mark.parametrize(
    "position",
    [{"line": -1, "character": -1}, {"line": 3, "character": -5}, {"line": "one", "character": None}, {}],
    ids=["negative", "negative-character", "wrong-types", "empty"],
)
def test_params_of_the_wrong_type_get_an_error_answer(session: Session, position: dict[str, Any]) -> None:
    """JSON-RPC: a request whose params are invalid is answered with -32602, not left waiting.

    S2 (docs/reliability.md): such requests used to get no answer at all, so the client waited forever.
    """
    uri = session.uri()
    session.client.open(uri, GOOD)
    answer = session.client.request(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": position}, timeout=5
    )
    assert answer["error"]["code"] == -32602, answer


def test_a_position_inside_a_surrogate_pair(session: Session) -> None:
    uri = session.uri()
    session.client.open(uri, '// 😀😀😀\nagent A { prompt: "😀x" }\n')
    for character in range(0, 12):
        hover_at(session, uri, 0, character)
        hover_at(session, uri, 1, character + 16)


# --- document lifecycle --------------------------------------------------------------------------


def change(uri: str, version: int, text: str, range_: dict[str, Any] | None = None) -> dict[str, Any]:
    content: dict[str, Any] = {"text": text}
    if range_ is not None:
        content["range"] = range_
    return {"textDocument": {"uri": uri, "version": version}, "contentChanges": [content]}


def test_change_of_a_document_never_opened(session: Session) -> None:
    uri = session.uri("never-opened")
    session.client.notify("textDocument/didChange", change(uri, 2, "agent X {}"))
    session.client.notify(
        "textDocument/didChange",
        change(uri, 3, "y", {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}),
    )
    session.client.notify("textDocument/didSave", {"textDocument": {"uri": uri}, "text": "agent X {}"})
    session.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    answer = hover_at(session, uri, 0, 0)
    assert "error" in answer or answer["result"] is None


def test_change_after_close_and_close_twice(session: Session) -> None:
    uri = session.uri()
    session.client.open(uri, GOOD)
    session.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    session.client.notify("textDocument/didChange", change(uri, 2, "agent Y {}"))
    session.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    hover_at(session, uri, 0, 7)
    # reopening starts from the new text
    session.client.open(uri, 'agent Fresh {\n  prompt: "p"\n}\n', version=1)
    assert "Fresh" in json.dumps(hover_at(session, uri, 0, 8)["result"])


def test_open_twice_with_different_text(session: Session) -> None:
    uri = session.uri()
    session.client.open(uri, GOOD, version=1)
    session.client.open(uri, 'agent Second {\n  prompt: "p"\n}\n', version=1)
    assert "Second" in json.dumps(hover_at(session, uri, 0, 8)["result"])


def test_out_of_order_versions_end_with_the_latest_text(session: Session) -> None:
    uri = session.uri()
    client = session.client
    client.open(uri, GOOD, version=5)
    client.notify("textDocument/didChange", change(uri, 3, 'agent Old {\n  prompt: "p"\n}\n'))
    client.notify("textDocument/didChange", change(uri, 3, 'agent Same {\n  prompt: "p"\n}\n'))
    client.notify("textDocument/didChange", change(uri, 1, "junk }}}"))
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": None}, "contentChanges": []})
    mark = len(client.notifications)
    client.notify("textDocument/didChange", change(uri, 9, 'agent Latest {\n  prompt: "p"\n}\n'))
    published = client.wait_notification(
        "textDocument/publishDiagnostics",
        lambda m: m["params"]["uri"] == uri and m["params"].get("version") == 9,
        after=mark,
        timeout=30,
    )
    errors = [d for d in published["params"]["diagnostics"] if d.get("severity") == 1]
    assert errors == [], "the diagnostics are those of the latest text"
    assert "Latest" in json.dumps(hover_at(session, uri, 0, 8)["result"])


def test_edits_with_ranges_outside_the_document(session: Session) -> None:
    uri = session.uri()
    client = session.client
    client.open(uri, GOOD)
    for version, range_ in enumerate(
        [
            {"start": {"line": 500, "character": 0}, "end": {"line": 501, "character": 0}},
            {"start": {"line": 2, "character": 900}, "end": {"line": 1, "character": 0}},
            {"start": {"line": -1, "character": -1}, "end": {"line": 0, "character": 3}},
            {"start": {"line": 0, "character": 0}, "end": {"line": 2**31 - 1, "character": 0}},
        ],
        start=2,
    ):
        client.notify("textDocument/didChange", change(uri, version, "X", range_))
    # a full replacement brings the document back to a known text
    client.notify("textDocument/didChange", change(uri, 50, GOOD))
    assert "Writer" in json.dumps(hover_at(session, uri, 6, 8)["result"])


def test_a_burst_of_a_thousand_edits(session: Session) -> None:
    uri = session.uri()
    client = session.client
    client.open(uri, "")
    text = ""
    for version in range(2, 1002):
        piece = GOOD[(version - 2) % len(GOOD)]
        line = text.count("\n")
        character = len(text) - (text.rfind("\n") + 1)
        position = {"line": line, "character": character}
        client.notify("textDocument/didChange", change(uri, version, piece, {"start": position, "end": position}))
        text += piece
    mark = len(client.notifications)
    client.notify("textDocument/didChange", change(uri, 2000, GOOD))
    client.wait_notification(
        "textDocument/publishDiagnostics",
        lambda m: m["params"]["uri"] == uri and m["params"].get("version") == 2000,
        after=mark,
        timeout=60,
    )


# --- huge and binary documents ---------------------------------------------------------------------


def open_and_time(session: Session, text: str, timeout: float = 120) -> float:
    uri = session.uri("huge")
    client = session.client
    mark = len(client.notifications)
    began = time.monotonic()
    client.open(uri, text)
    client.wait_notification(
        "textDocument/publishDiagnostics", lambda m: m["params"]["uri"] == uri, after=mark, timeout=timeout
    )
    elapsed = time.monotonic() - began
    hover_at(session, uri, 0, 7)
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    return elapsed


def test_a_five_megabyte_document(session: Session) -> None:
    unit = 'agent A{n} {{\n  prompt: "{filler}"\n  model: "m"\n}}\n\n'
    text = "".join(unit.format(n=n, filler=f"agent {n} " * 280) for n in range(2000))
    assert len(text.encode()) > 5_000_000
    elapsed = open_and_time(session, text)
    assert elapsed < 60, f"diagnostics of a 5 MB document took {elapsed:.1f}s"


def test_server_time_grows_linearly_with_the_number_of_agents(session: Session) -> None:
    """Regression: building every agent of a file scanned the whole file per agent (quadratic)."""
    unit = 'agent A{n} {{\n  prompt: "Agent number {n} does a small job"\n  model: "m"\n}}\n\n'
    small = open_and_time(session, "".join(unit.format(n=n) for n in range(1000)))
    large = open_and_time(session, "".join(unit.format(n=n) for n in range(8000)))
    # linear is ~8x; quadratic was ~64x. The margin absorbs a busy CI machine.
    assert large < 24 * max(small, 0.25) + 1, f"1,000 agents: {small:.2f}s; 8,000 agents: {large:.2f}s"


def test_a_single_two_megabyte_line(session: Session) -> None:
    uri = session.uri()
    session.client.open(uri, 'agent A { prompt: "' + "x" * 2_000_000 + '" }')
    hover_at(session, uri, 0, 1_000_000)
    session.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


@pytest.mark.parametrize(
    "text",
    [
        "\x00" * 1000,
        "".join(chr(c) for c in range(0, 0x250)),
        bytes(range(256)).decode("latin-1") * 40,
        "\ufeff\ufeffagent A {}\r\r\n\u2028\u2029\x85",
        'agent A { prompt: "\ud800\udfff\ud83d" }',
        "\U0001f600" * 5000,
        "{" * 4_000 + "}" * 4_000,
    ],
    ids=["nul", "control-and-latin", "binary-latin1", "bom-and-separators", "lone-surrogates", "emoji", "braces"],
)
def test_binary_and_strange_documents(session: Session, text: str) -> None:
    uri = session.uri("binary")
    client = session.client
    payload = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "nexa", "version": 1, "text": text}},
        }
    ).encode("utf-8")
    mark = len(client.notifications)
    client.send_raw(frame(payload))
    client.wait_notification(
        "textDocument/publishDiagnostics", lambda m: m["params"]["uri"] == uri, after=mark, timeout=60
    )
    for method in ("textDocument/documentSymbol", "textDocument/foldingRange", "textDocument/semanticTokens/full"):
        answer = client.request(method, {"textDocument": {"uri": uri}})
        assert "result" in answer or answer["error"]["code"] != INTERNAL_ERROR, (method, answer)
    hover_at(session, uri, 0, 3)
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


@pytest.mark.parametrize(
    "uri",
    [
        "untitled:Untitled-1",
        "file:///dev/zero",
        "file:///proc/self/mem",
        "file:///nonexistent/dir/with%20space/%E4%B8%AD.nx",
        "relative/path.nx",
        # S3: hover failed with OSError (ENAMETOOLONG) here; fixed in the server's documents.py
        pytest.param("file://" + "/a" * 3000 + ".nx", id="path-longer-than-PATH_MAX"),
        "http://example.invalid/x.nx",
        "",
    ],
)
def test_strange_document_uris(session: Session, uri: str) -> None:
    client = session.client
    client.open(uri, 'include "/dev/zero";\ninclude "../../../../etc/passwd";\n' + GOOD)
    hover_at(session, uri, 8, 8)
    client.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
