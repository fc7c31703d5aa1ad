"""The runtime's one redaction module: text, run states, URLs, and the HTTP log filter."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from loopback import LoopbackServer, chat_text
from runtime_helpers import call, scripted

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.providers import HttpOptions, OpenAIChatProvider
from nexa_lsp.runtime.redaction import (
    LOG_FILTER,
    REDACTED,
    SecretLogFilter,
    is_secret_name,
    redact_state,
    redact_url,
    scrub,
    secrets_of,
    url_secrets,
)
from nexa_lsp.runtime.run_state import Approval, JournalEntry, RunError, ToolCall

SECRET = "sk-秘密-0123456789abcdef"
KEY = "sk-live-0123456789abcdef"  # HTTP headers carry ASCII only


def test_scrub_and_secret_names() -> None:
    assert scrub(f"key {SECRET}, again {SECRET}", [SECRET]) == f"key {REDACTED}, again {REDACTED}"
    assert scrub("nothing here", [SECRET, ""]) == "nothing here"
    assert [n for n in ("OPENAI_API_KEY", "token", "DB_PASSWORD", "MODEL", "BASE_URL") if is_secret_name(n)] == [
        "OPENAI_API_KEY",
        "token",
        "DB_PASSWORD",
    ]


def test_the_secrets_of_settings_are_the_secret_named_values_and_keys_long_enough() -> None:
    settings = {"OPENAI_API_KEY": SECRET, "MODEL": "gpt-秘密-model", "DB_PASSWORD": "密码12", "TOKEN": "abc"}
    assert secrets_of(settings, [KEY, None, ""]) == {SECRET, KEY, "密码12"}
    assert secrets_of(settings, [KEY], minimum=6) == {SECRET, KEY}


def test_a_state_loses_every_copy_of_the_secret_and_nothing_else(tmp_path: Path) -> None:
    agent = NexaAgent("A", prompt="p", tools=[lambda to: f"sent {to}"])
    state = agent.execute(f"写给 {SECRET}", provider=scripted(call("<lambda>", to=SECRET), {"text": "done"}))
    state = state.evolve(
        output=f"output {SECRET}",
        error=RunError("NXR030", f"failed with {SECRET}"),
        approvals=(Approval("c1", "t", f'{{"k": "{SECRET}"}}', "pending", 1.0),),
        journal=(*state.journal, JournalEntry("c2", "t", SECRET, "completed", 1.0, 2.0, SECRET)),
    )
    assert SECRET in state.to_json()
    cleaned = redact_state(state, [SECRET])
    assert SECRET not in cleaned.to_json()
    assert cleaned.updated_at == state.updated_at and cleaned.run_id == state.run_id
    assert cleaned.history[0].content == f"写给 {REDACTED}"
    assert redact_state(cleaned, [SECRET]) is cleaned, "a clean state is returned as it is"
    assert redact_state(state, []) is state


def test_urls_show_no_password_and_no_token() -> None:
    url = "https://user:hunter2-pass@host.invalid/v1?api_key=tok-123456&model=m"
    shown = redact_url(url)
    assert "hunter2" not in shown and "tok-123456" not in shown and "model=m" in shown
    secrets = url_secrets(url)
    assert "hunter2-pass" in secrets and "tok-123456" in secrets
    assert url_secrets("https://host.invalid/v1") == ()


def test_the_log_filter_forgets_secrets_when_the_requests_end(loopback: LoopbackServer) -> None:
    """Secrets are registered only while a request uses them: the set does not grow with runs."""
    loopback.answers.append(chat_text("ok"))
    provider = OpenAIChatProvider(HttpOptions(base_url=loopback.url, api_key=KEY), name="p", default_model="m")
    for _ in range(3):
        state = NexaAgent("A", provider=provider).execute("go")
        assert state.output == "ok", state.error
    assert len(loopback.requests) == 3 and loopback.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert LOG_FILTER.secrets == ()


def test_the_log_filter_is_safe_while_threads_register_and_log() -> None:
    """Registering, releasing and filtering from many threads at once: no error, every record clean."""
    log_filter = SecretLogFilter()
    logger = logging.getLogger("nexa-test-redaction")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    seen: list[str] = []
    lock = threading.Lock()

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            with lock:
                seen.append(record.getMessage())

    handler = Collect()
    handler.addFilter(log_filter)
    logger.addHandler(handler)
    errors: list[BaseException] = []

    def worker(number: int) -> None:
        try:
            for round_ in range(200):
                secret = f"secret-{number}-{round_ % 7}-value"
                with log_filter.hiding([secret]):
                    logger.info("request to %s", secret)
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    logger.removeHandler(handler)
    assert errors == []
    assert len(seen) == 8 * 200
    assert all(message == f"request to {REDACTED}" for message in seen)
    assert log_filter.secrets == ()


def test_a_secret_used_by_two_requests_stays_hidden_until_both_end() -> None:
    log_filter = SecretLogFilter()
    with log_filter.hiding([SECRET]):
        with log_filter.hiding([SECRET]):
            pass
        assert log_filter.secrets == (SECRET,)
    assert log_filter.secrets == ()


def test_tool_call_arguments_are_scrubbed() -> None:
    agent = NexaAgent("A", prompt="p")
    state = agent.execute("go", provider=scripted({"text": "x"}))
    message = state.history[-1]
    with_call = state.evolve(
        history=(*state.history[:-1], message.__class__(role="assistant", tool_calls=(ToolCall("c", "t", SECRET),)))
    )
    assert SECRET not in redact_state(with_call, [SECRET]).to_json()
