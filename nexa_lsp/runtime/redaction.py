"""Keeping secrets (API keys, URL passwords and tokens) out of everything nexa-lsp writes.

* ``scrub(text, secrets)``: text with every secret replaced by ``[redacted]``;
* ``redact_state(state, secrets)``: a ``RunState`` with no secret in any of its texts;
* ``redact_url(url)`` / ``url_secrets(url)``: a URL as it may be shown, and its secret parts;
* ``is_secret_name(name)``: whether a setting's name says its value is a secret;
* ``secrets_of(settings, keys)``: the secret values of a settings mapping, plus keys;
* ``LOG_FILTER``: a logging filter on the HTTP libraries' loggers that removes the secrets
  of the requests in flight (``with LOG_FILTER.hiding(secrets): ...``). Secrets are
  registered only while a request uses them and counted, so the set stays as small as the
  requests in flight, and records are filtered against a snapshot taken under a lock, so
  threads may register and release while others log.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace

from nexa_lsp.runtime.run_state import RunState

REDACTED = "[redacted]"
MIN_SECRET = 4
"""Shorter strings are never treated as secrets: they would match ordinary text."""

#: Not Nexa syntax: secret-looking parameter names in URLs and provider messages.
_SECRET_QUERY = re.compile(r"(key|token|secret|password|passwd|pwd|sig|signature|auth|credential)", re.IGNORECASE)
_SECRET_NAME_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def is_secret_name(name: str) -> bool:
    """True for setting names such as ``OPENAI_API_KEY``, ``TOKEN`` or ``DB_PASSWORD``."""
    upper = name.upper()
    return any(word in upper for word in _SECRET_NAME_WORDS)


def secrets_of(
    settings: Mapping[str, str], keys: Iterable[str | None] = (), minimum: int = MIN_SECRET
) -> frozenset[str]:
    """The values of the secret-named ``settings`` plus ``keys``, those at least ``minimum``
    characters long (shorter ones would match ordinary text)."""
    found = {value for name, value in settings.items() if is_secret_name(name)}
    found.update(key for key in keys if key)
    return frozenset(s for s in found if len(s) >= minimum)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``[redacted]``."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_state(state: RunState, secrets: Iterable[str]) -> RunState:
    """``state`` with no secret in its texts (input, output, message contents, tool call
    arguments, journal, approvals, error); the same object when none occurs, and
    ``updated_at`` is never changed. Provider-native items are kept verbatim: the HTTP
    transport already removed the endpoint's secrets from every answer it read."""
    found = tuple(s for s in secrets if s)
    if not found:
        return state
    whole = state.to_json()
    if not any(s in whole for s in found):
        return state

    def clean(text: str) -> str:
        return scrub(text, found)

    history = tuple(
        replace(
            m,
            content=clean(m.content),
            tool_calls=tuple(replace(c, arguments=clean(c.arguments)) for c in m.tool_calls),
        )
        for m in state.history
    )
    journal = tuple(
        replace(e, arguments=clean(e.arguments), result=None if e.result is None else clean(e.result))
        for e in state.journal
    )
    approvals = tuple(replace(a, arguments=clean(a.arguments)) for a in state.approvals)
    error = None if state.error is None else replace(state.error, message=clean(state.error.message))
    return replace(
        state,
        input=clean(state.input),
        output=clean(state.output),
        history=history,
        journal=journal,
        approvals=approvals,
        error=error,
    )


def redact_url(url: str) -> str:
    """``url`` without a password and without the values of secret-looking query parameters."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user = userinfo.partition(":")[0]
        netloc = f"{user}:{REDACTED}@{host}" if ":" in userinfo else f"{REDACTED}@{host}"
    query = parts.query
    if query:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        query = "&".join(f"{key}={REDACTED if _SECRET_QUERY.search(key) else value}" for key, value in pairs)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> tuple[str, ...]:
    """The secret parts of a URL: its password (also as the HTTP Basic credentials an
    echoed header would carry) and the values of secret-looking query parameters."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return ()
    found: list[str] = []
    if parts.password and len(parts.password) >= MIN_SECRET:
        found.append(parts.password)
        userinfo = f"{urllib.parse.unquote(parts.username or '')}:{urllib.parse.unquote(parts.password)}"
        found.append(base64.b64encode(userinfo.encode("utf-8")).decode("ascii"))
    for key, value in urllib.parse.parse_qsl(parts.query):
        if _SECRET_QUERY.search(key) and len(value) >= MIN_SECRET:
            found.append(value)
    return tuple(found)


class SecretLogFilter(logging.Filter):
    """Removes the registered secrets from log records (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._snapshot: tuple[str, ...] = ()

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secrets registered right now."""
        return self._snapshot

    def _change(self, secrets: tuple[str, ...], step: int) -> None:
        with self._lock:
            for secret in secrets:
                count = self._counts.get(secret, 0) + step
                if count > 0:
                    self._counts[secret] = count
                else:
                    self._counts.pop(secret, None)
            self._snapshot = tuple(self._counts)

    @contextmanager
    def hiding(self, secrets: Iterable[str]) -> Iterator[None]:
        """Hide ``secrets`` from every filtered logger until the block ends."""
        registered = tuple(s for s in secrets if len(s) >= MIN_SECRET)
        self._change(registered, 1)
        try:
            yield
        finally:
            self._change(registered, -1)

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = self._snapshot  # a tuple: replaced whole, never changed in place
        if secrets:
            message = record.getMessage()
            cleaned = scrub(message, secrets)
            if cleaned != message:
                record.msg, record.args = cleaned, ()
        return True


LOG_FILTER = SecretLogFilter()
HTTP_LOGGERS = ("httpx", "httpcore", "httpcore.http11", "httpcore.http2", "httpcore.connection", "httpcore.proxy")
for _name in HTTP_LOGGERS:
    logging.getLogger(_name).addFilter(LOG_FILTER)
