"""Hostile provider answers from a loopback server end runs with a truthful status and reason.

Truncated streams, invalid JSON, answers of the wrong shape, enormous bodies, tool calls
naming unknown tools or with invalid arguments, stalls past the deadline and servers
that trickle bytes forever: every run ends (never hangs), its status and reason say what
happened, the stored run says the same, and no tool runs on invalid input.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.run_loop.driver import MAX_REJECTED_TURNS
from nexa_lsp.runtime.run_state import RunConfig, RunState, RunStatus
from nexa_lsp.runtime.tools import tool
from tests.robustness.hostile_server import (
    Behaviour,
    Exchange,
    dribble,
    head,
    hostile_server,
    no_answer,
    send,
    send_then_stall,
)
from tests.robustness.streams import PROTOCOLS, answer, events_for, provider_for, sse_bytes


class Mailer:
    """A tool with a side effect that must only happen on valid calls."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def __call__(self, to: str, body: str = "") -> str:
        self.sent.append((to, body))
        return f"sent to {to}"


def run_against(
    tmp_path: Path,
    protocol: str,
    *behaviours: Behaviour,
    timeout: float | None = None,
    mailer: Mailer | None = None,
    **options: Any,
) -> tuple[RunState, float, RunState]:
    """Run one task against the server; return the final state, the seconds it took, the stored state."""
    mail = mailer or Mailer()
    send_mail = tool(
        mail,
        name="send_mail",
        parameters={"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}},
    )
    with hostile_server(*behaviours) as server, SQLiteCheckpointStore(tmp_path / "runs.sqlite3") as store:
        agent = NexaAgent(
            "Mailer", prompt="Send mail", tools=[send_mail], provider=provider_for(protocol, server.url, **options)
        )
        began = time.monotonic()
        state = agent.execute("Write to Li", config=RunConfig(timeout=timeout), save=store.save)
        elapsed = time.monotonic() - began
        stored = store.load(state.run_id)
    assert stored == state, "the store holds exactly the final state"
    assert state.settled
    return state, elapsed, stored


def assert_failed(state: RunState, code: str, *words: str) -> None:
    assert state.status is RunStatus.FAILED, (state.status, state.error)
    assert state.error is not None and state.error.code == code, state.error
    for word in words:
        assert word in state.error.message, state.error.message


def ok_answer(protocol: str, text: str = "Done.", turn: int = 2) -> Behaviour:
    return send(*answer(protocol, text, turn=turn))


# --- broken streams --------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_stream_cut_after_a_few_events(tmp_path: Path, protocol: str) -> None:
    chunks = answer(protocol, "Hello there, this answer will be cut short.")
    state, elapsed, _ = run_against(tmp_path, protocol, send(*chunks[:3]))
    assert_failed(state, "NXR036", "ended")
    assert elapsed < 5


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_stream_cut_in_the_middle_of_an_event(tmp_path: Path, protocol: str) -> None:
    chunks = answer(protocol, "Hello there")
    cut = b"".join(chunks)[: len(b"".join(chunks[:2])) + 17]
    state, _, _ = run_against(tmp_path, protocol, send(cut))
    assert_failed(state, "NXR036")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_invalid_json_in_a_stream_event(tmp_path: Path, protocol: str) -> None:
    chunks = answer(protocol, "Hello")
    chunks.insert(1, b"data: {not json at all\n\n")
    state, _, _ = run_against(tmp_path, protocol, send(*chunks))
    assert_failed(state, "NXR036", "malformed JSON")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_invalid_json_body(tmp_path: Path, protocol: str) -> None:
    state, _, _ = run_against(tmp_path, protocol, send(b'{"id": "x", "choices": [', content_type="application/json"))
    assert_failed(state, "NXR036", "malformed JSON")


@pytest.mark.parametrize(
    "body",
    [
        b"<html><body>502 Bad Gateway</body></html>",
        bytes(range(256)) * 64,
        b"\xff\xfe\x00garbage\x00" * 100,
        b"[" * 200_000,
    ],
    ids=["html", "binary", "not-utf8", "deep-nesting"],
)
def test_garbage_bodies(tmp_path: Path, body: bytes) -> None:
    state, elapsed, _ = run_against(tmp_path, "chat", send(body, content_type="application/json"))
    assert_failed(state, "NXR036")
    assert elapsed < 5


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "mangle",
    [
        lambda e: [1, 2, 3],
        lambda e: "a string",
        lambda e: {**e, "choices": ["not an object"]} if "choices" in e else {**e, "index": "nine"},
        lambda e: {**e, "usage": {"prompt_tokens": "many", "input_tokens": "many", "output_tokens": None}},
        lambda e: {**e, "response": {"id": 7, "output": "nope"}} if "response" in e else {**e, "delta": 5},
        lambda e: {"type": "content_block_delta", "index": 99, "delta": {"type": "text_delta", "text": "x"}},
    ],
    ids=["list", "string", "wrong-types", "bad-usage", "wrong-fields", "unknown-block"],
)
def test_events_of_the_wrong_shape(tmp_path: Path, protocol: str, mangle: Callable[[Any], Any]) -> None:
    events = events_for(protocol, "Hello there, friend")
    for position in range(1, len(events) - 1):
        if not isinstance(events[position], dict):
            continue
        broken = list(events)
        broken[position] = mangle(events[position])
        state, _, _ = run_against(tmp_path / str(position), protocol, send(*sse_bytes(broken, named=False)))
        # a mangled event is either irrelevant to the reply (ignored) or makes the answer unreadable
        if state.status is not RunStatus.COMPLETED:
            assert_failed(state, "NXR036")
            assert "NXR059" not in str(state.error)


# --- enormous answers ----------------------------------------------------------------------------


LIMIT = 256 * 1024


@pytest.mark.parametrize(
    "body",
    [
        [b"data: " + b"x" * (LIMIT * 3)],  # one enormous line
        [b'data: {"choices": []}\n\n' * (LIMIT // 10)],  # many small events
        [b"data: " + json.dumps({"choices": [{"delta": {"content": "y" * (LIMIT * 2)}}]}).encode() + b"\n\n"],
    ],
    ids=["one-line", "many-events", "one-huge-delta"],
)
def test_enormous_answers_stop_at_the_size_limit(tmp_path: Path, body: list[bytes]) -> None:
    state, elapsed, stored = run_against(tmp_path, "chat", send(*body), max_response_bytes=LIMIT)
    assert_failed(state, "NXR037", str(LIMIT), "MAX_RESPONSE_BYTES")
    assert elapsed < 10
    assert len(stored.to_json()) < LIMIT, "nothing of the oversized answer is kept"


def test_a_compressed_bomb_is_measured_after_decompression(tmp_path: Path) -> None:
    bomb = gzip.compress(b"data: " + b"0" * (LIMIT * 40))
    assert len(bomb) < LIMIT // 4
    state, elapsed, _ = run_against(
        tmp_path, "chat", send(bomb, extra="content-encoding: gzip\r\n"), max_response_bytes=LIMIT
    )
    assert_failed(state, "NXR037")
    assert elapsed < 10


def test_an_enormous_error_body_is_cut(tmp_path: Path) -> None:
    state, _, stored = run_against(
        tmp_path, "chat", send(b"e" * (LIMIT * 4), status=403, content_type="text/plain"), max_response_bytes=LIMIT
    )
    assert_failed(state, "NXR032")
    assert len(stored.to_json()) < 4096


# --- tool calls ----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_unknown_tools_and_invalid_arguments_are_refused_not_run(tmp_path: Path, protocol: str) -> None:
    calls = [
        ("c1", "delete_everything", "{}"),
        ("c2", "send_mail", "{not json"),
        ("c3", "send_mail", "[1, 2]"),
        ("c4", "send_mail", '{"recipient": "li"}'),
        ("c5", "send_mail", '{"to": "li", "body": "hi", "bcc": "all"}'),
        ("c6", "../../etc/passwd", '{"to": "x"}'),
        ("c7", "send_mail", '{"to": "li"}'),
    ]
    if protocol == "anthropic":  # tool input arrives as JSON pieces that must form an object
        calls = [c for c in calls if c[0] not in ("c2", "c3")]
    mailer = Mailer()
    state, _, _ = run_against(
        tmp_path,
        protocol,
        send(*answer(protocol, "Trying things.", calls)),
        ok_answer(protocol, "Sent the one valid mail."),
        mailer=mailer,
    )
    assert state.success and state.output == "Sent the one valid mail."
    assert mailer.sent == [("li", "")], "only the valid call ran"
    results = {m.tool_call_id: m for m in state.history if m.role == "tool"}
    assert set(results) == {c[0] for c in calls}, "every call has exactly one result"
    for call_id, message in results.items():
        assert message.is_error == (call_id != "c7"), (call_id, message.content)
    assert "no tool named 'delete_everything'" in results["c1"].content
    if "c4" in results:
        assert "invalid arguments" in results["c4"].content and "not executed" in results["c4"].content
    assert [e.call_id for e in state.journal] == ["c7"], "refused calls never reach the journal"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_model_that_only_makes_invalid_calls_ends_the_run(tmp_path: Path, protocol: str) -> None:
    answers = [send(*answer(protocol, "", [(f"c{n}", "no_such_tool", "{}")], turn=n)) for n in range(1, 30)]
    state, elapsed, _ = run_against(tmp_path, protocol, *answers)
    assert_failed(state, "NXR054", f"{MAX_REJECTED_TURNS} turns", "no tool named")
    assert elapsed < 10


def test_tool_call_ids_reused_by_the_endpoint_still_run_each_call(tmp_path: Path) -> None:
    """Some endpoints number calls call_0, call_1 ... afresh on every turn."""
    mailer = Mailer()
    state, _, _ = run_against(
        tmp_path,
        "chat",
        send(*answer("chat", "", [("call_0", "send_mail", '{"to": "li"}')])),
        send(*answer("chat", "", [("call_0", "send_mail", '{"to": "wang"}')])),
        ok_answer("chat"),
        mailer=mailer,
    )
    assert state.success
    assert mailer.sent == [("li", ""), ("wang", "")]
    assert [m.content for m in state.history if m.role == "tool"] == ["sent to li", "sent to wang"]


def test_responses_reusing_a_call_id_is_refused_as_malformed(tmp_path: Path) -> None:
    mailer = Mailer()
    state, _, _ = run_against(
        tmp_path,
        "responses",
        send(*answer("responses", "", [("call_0", "send_mail", '{"to": "li"}')], turn=1)),
        send(*answer("responses", "", [("call_0", "send_mail", '{"to": "wang"}')], turn=2)),
        mailer=mailer,
    )
    assert_failed(state, "NXR036", "call_0")
    assert mailer.sent == [("li", "")]


def test_text_with_invalid_unicode_is_kept_readable(tmp_path: Path) -> None:
    chunks = [
        b'data: {"choices": [{"delta": {"content": "bad \\ud800 surrogate "}}]}\n\n',
        b'data: {"choices": [{"delta": {"content": "and bytes \xff\xfe end"}}]}\n\n',
        b"data: [DONE]\n\n",
    ]
    state, _, stored = run_against(tmp_path, "chat", send(*chunks))
    assert state.success
    assert "\ufffd" in state.output and "\ud800" not in state.output
    state.output.encode("utf-8")
    assert stored.output == state.output


# --- stalls and trickles ---------------------------------------------------------------------------


def test_no_answer_at_all_past_the_run_deadline(tmp_path: Path) -> None:
    state, elapsed, _ = run_against(tmp_path, "chat", no_answer(), timeout=1.0, request_timeout=30.0)
    assert state.status is RunStatus.TIMED_OUT and state.error is not None and state.error.code == "NXR051"
    assert 0.9 < elapsed < 3


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stream_that_stalls_past_the_run_deadline(tmp_path: Path, protocol: str) -> None:
    first = answer(protocol, "Starting a long answer")[:3]
    state, elapsed, _ = run_against(tmp_path, protocol, send_then_stall(*first), timeout=1.0, request_timeout=30.0)
    assert state.status is RunStatus.TIMED_OUT and state.error is not None
    assert "deadline" in state.error.message
    assert 0.9 < elapsed < 3
    if protocol != "responses":  # Responses streams carry text only in delta events
        assert state.output, "the text streamed before the stall is kept"


def test_a_stall_without_a_run_deadline_ends_at_the_request_timeout(tmp_path: Path) -> None:
    first = answer("chat", "Starting")[:2]
    state, elapsed, _ = run_against(tmp_path, "chat", send_then_stall(*first), request_timeout=1.0)
    assert_failed(state, "NXR035", "stopped sending")
    assert 0.9 < elapsed < 4


def test_a_server_that_trickles_forever_ends_at_the_answer_timeout(tmp_path: Path) -> None:
    """A comment line every 0.2 s: no read ever times out, but the answer never finishes."""
    state, elapsed, _ = run_against(
        tmp_path, "chat", dribble(b": still thinking\n", 0.2), request_timeout=1.0, answer_timeout=1.5
    )
    assert_failed(state, "NXR035", "ANSWER_TIMEOUT")
    assert 1.4 < elapsed < 5


def test_a_trickle_past_the_run_deadline_times_the_run_out(tmp_path: Path) -> None:
    state, elapsed, _ = run_against(
        tmp_path, "anthropic", dribble(b": ping\n\n", 0.1), timeout=1.0, request_timeout=1.0
    )
    assert state.status is RunStatus.TIMED_OUT
    assert elapsed < 3


# --- status codes and connections -------------------------------------------------------------------


def hang_up(exchange: Exchange) -> None:
    """Close the connection without a word."""


def test_a_server_that_hangs_up_is_retried_then_reported(tmp_path: Path) -> None:
    state, elapsed, _ = run_against(tmp_path, "chat", hang_up, max_retries=2)
    assert_failed(state, "NXR034", "3 time(s)")
    assert elapsed < 5


def test_overload_answers_are_retried_then_reported(tmp_path: Path) -> None:
    overloaded = send(b'{"error": {"message": "overloaded"}}', status=503, content_type="application/json")
    state, _, _ = run_against(tmp_path, "chat", overloaded, max_retries=2)
    assert_failed(state, "NXR034", "overloaded")


def test_a_recovering_server_is_retried_until_it_answers(tmp_path: Path) -> None:
    overloaded = send(b"busy", status=503, content_type="text/plain")
    state, _, _ = run_against(
        tmp_path, "chat", overloaded, overloaded, ok_answer("chat", "Fine now.", 1), max_retries=3
    )
    assert state.success and state.output == "Fine now."


def test_a_status_line_that_is_not_http(tmp_path: Path) -> None:
    def nonsense(exchange: Exchange) -> None:
        exchange.send(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")

    state, elapsed, _ = run_against(tmp_path, "chat", nonsense, max_retries=1)
    assert_failed(state, "NXR034")
    assert elapsed < 5


def test_an_event_stream_with_a_wrong_content_type(tmp_path: Path) -> None:
    """SSE sent as text/plain is read as one JSON body: malformed, not a crash."""
    state, _, _ = run_against(tmp_path, "chat", send(*answer("chat", "hi"), content_type="text/plain"))
    assert_failed(state, "NXR036")


def test_headers_only_then_close(tmp_path: Path) -> None:
    def headers_only(exchange: Exchange) -> None:
        exchange.send(head(200))

    state, _, _ = run_against(tmp_path, "anthropic", headers_only)
    assert_failed(state, "NXR036", "ended without message_stop")


@pytest.mark.parametrize(
    "url", ["not a url", "http://[::1", "ftp://example.invalid/v1", "http://", "http://user:pw-secret@[::1/v1"]
)
def test_an_unusable_base_url_is_a_configuration_error_not_a_retry(url: str) -> None:
    """Found reviewing the transport: `http://[::1` ended as NXR059, a missing scheme as "try again later"."""
    agent = NexaAgent("A", provider=provider_for("chat", url, max_retries=3))
    began = time.monotonic()
    state = agent.execute("hi")
    assert_failed(state, "NXR031", "BASE_URL")
    assert "pw-secret" not in state.error.message if state.error else True
    assert time.monotonic() - began < 2, "nothing was retried"
