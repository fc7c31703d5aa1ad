"""Keeping a run's provider keys out of everything the editor's runs write or send.

Seam: ``nexa_lsp.runtime.redaction`` (one redaction module for the CLI and the server)
replaces this module when it lands; the names used here (``scrub``, ``redact``,
``secrets_of``) are the ones the server's runs feature calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from nexa_lsp.runtime.run_state import RunState

#: Secrets shorter than this are not searched for (they would match ordinary text).
MIN_SECRET = 6
REDACTED = "[redacted]"


def is_secret_name(name: str) -> bool:
    """A setting whose value is a secret (``OPENAI_API_KEY``, ``..._TOKEN`` ...)."""
    upper = name.upper()
    return any(word in upper for word in ("KEY", "TOKEN", "SECRET", "PASSWORD"))


def secrets_of(settings: Mapping[str, str], keys: Iterable[str | None] = ()) -> frozenset[str]:
    """The secret values of ``settings`` plus ``keys``, long enough to search for."""
    found = {value for name, value in settings.items() if is_secret_name(name)}
    found.update(key for key in keys if key)
    return frozenset(s for s in found if len(s) >= MIN_SECRET)


def scrub(text: str, secrets: frozenset[str]) -> str:
    """``text`` with every secret replaced by ``[redacted]``."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact(state: RunState, secrets: frozenset[str]) -> RunState:
    """``state`` without any secret in its texts (same ``updated_at``); unchanged when clean."""
    if not secrets or not any(s in state.to_json() for s in secrets):
        return state

    def clean(text: str | None) -> str | None:
        return None if text is None else scrub(text, secrets)

    history = tuple(
        replace(
            m,
            content=scrub(m.content, secrets),
            tool_calls=tuple(replace(c, arguments=scrub(c.arguments, secrets)) for c in m.tool_calls),
        )
        for m in state.history
    )
    journal = tuple(replace(e, arguments=scrub(e.arguments, secrets), result=clean(e.result)) for e in state.journal)
    approvals = tuple(replace(a, arguments=scrub(a.arguments, secrets)) for a in state.approvals)
    error = None if state.error is None else replace(state.error, message=scrub(state.error.message, secrets))
    return replace(
        state,
        input=scrub(state.input, secrets),
        output=scrub(state.output, secrets),
        history=history,
        journal=journal,
        approvals=approvals,
        error=error,
    )
