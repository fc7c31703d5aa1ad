"""HTTP for providers: retries with backoff on 429/5xx, timeouts, size limits, clear errors,
and ``HttpProvider``, the one request/answer path of the HTTP providers."""

from __future__ import annotations

import json
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx

from nexa_lsp.runtime.errors import (
    NexaRuntimeError,
    ProviderAuthError,
    ProviderConfigError,
    ProviderError,
    ProviderNotFoundError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderResponseTooLargeError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from nexa_lsp.runtime.events import CancelToken
from nexa_lsp.runtime.providers.base import ProviderReply, ProviderRequest, missing_model_error
from nexa_lsp.runtime.redaction import LOG_FILTER, MIN_SECRET, REDACTED, redact_url, scrub, url_secrets

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
DEFAULT_ANSWER_TIMEOUT = 900.0
# errors a reader of a provider answer raises when the answer has an unexpected shape
ANSWER_SHAPE_ERRORS = (KeyError, IndexError, TypeError, AttributeError, ValueError, RecursionError)


class ProviderCancelled(Exception):
    """The run was cancelled while the provider call was in flight."""


@dataclass(frozen=True)
class HttpOptions:
    """Connection settings of one provider endpoint. The key is never logged or stored."""

    base_url: str = field(repr=False)  # may hold a password or a token
    api_key: str | None = field(default=None, repr=False)
    request_timeout: float = 60.0
    connect_timeout: float = 10.0
    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 20.0
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    answer_timeout: float = DEFAULT_ANSWER_TIMEOUT
    """Seconds for a whole answer, first byte to last: a server that keeps sending a little
    (so no read ever times out) but never finishes is stopped (NXR035)."""


def secrets_of(options: HttpOptions) -> tuple[str, ...]:
    """The secret strings of an endpoint (its key, and a password or secret values in its URL)."""
    key = (options.api_key,) if options.api_key and len(options.api_key) >= MIN_SECRET else ()
    return key + url_secrets(options.base_url)


def bearer_headers(options: HttpOptions) -> dict[str, str]:
    """``authorization: Bearer <key>`` (the OpenAI protocols), or nothing without a key."""
    return {"authorization": f"Bearer {options.api_key}"} if options.api_key else {}


def _excerpt(body: bytes, limit: int = 300) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            text = str(data["error"].get("message") or text)
        elif isinstance(data, dict) and isinstance(data.get("error"), str):
            text = data["error"]
    except ValueError:
        pass
    return text[:limit]


@dataclass
class StreamedResponse:
    """An open response: ``event_stream`` is true for SSE answers."""

    event_stream: bool
    lines: Iterator[str]


class HttpTransport:
    """POSTs JSON to one provider and hands back the answer's lines, retrying when sensible."""

    def __init__(self, provider_name: str, options: HttpOptions, headers: Mapping[str, str]) -> None:
        self.provider_name = provider_name
        self.options = options
        self._headers = dict(headers)
        self._client: httpx.Client | None = None
        self._secrets = secrets_of(options)
        self._secret_bytes = tuple(secret.encode("utf-8") for secret in self._secrets)

    def redact(self, text: str) -> str:
        """``text`` with this endpoint's key and URL secrets replaced by ``[redacted]``."""
        return scrub(text, self._secrets)

    def _redact_bytes(self, data: bytes) -> bytes:
        for secret in self._secret_bytes:
            if secret in data:
                data = data.replace(secret, REDACTED.encode())
        return data

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Around reading an answer: shape errors become NXR036, and no error text carries a secret."""
        try:
            yield
        except NexaRuntimeError as exc:
            exc.message = self.redact(exc.message)
            exc.args = (exc.message,)
            raise
        except ANSWER_SHAPE_ERRORS as exc:
            detail = self.redact(f"{type(exc).__name__}: {str(exc)[:200]}")
            raise ProviderResponseError(
                f"{self.provider_name} sent an answer of an unexpected shape ({detail}); "
                "check that BASE_URL points to an endpoint of this provider's protocol"
            ) from None

    def _get_client(self) -> httpx.Client:
        if self._client is None:
            timeout = httpx.Timeout(self.options.request_timeout, connect=self.options.connect_timeout)
            self._client = httpx.Client(timeout=timeout, headers=self._headers)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def url(self, path: str) -> str:
        return self.options.base_url.rstrip("/") + "/" + path.lstrip("/")

    def shown_url(self, url: str) -> str:
        """The URL as error messages show it (no secrets)."""
        return self.redact(redact_url(url))

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            retry_after = response.headers.get("retry-after")
            if retry_after:
                try:
                    return min(float(retry_after), self.options.max_backoff)
                except ValueError:
                    pass
        base = self.options.backoff * (2**attempt)
        return float(min(base + random.uniform(0, self.options.backoff / 2), self.options.max_backoff))

    @contextmanager
    def post(self, path: str, body: Mapping[str, Any], cancel: CancelToken) -> Iterator[StreamedResponse]:
        """Open the answer to a JSON POST (after retries); the connection closes on exit."""
        started = time.monotonic()
        with LOG_FILTER.hiding(self._secrets):  # httpx logs each request's URL
            response = self._open(self.url(path), body, cancel)
            try:
                content_type = response.headers.get("content-type", "")
                lines = self._limited_lines(response, cancel, started + self.options.answer_timeout)
                yield StreamedResponse("text/event-stream" in content_type, lines)
            finally:
                response.close()

    def _open(self, url: str, body: Mapping[str, Any], cancel: CancelToken) -> httpx.Response:
        last_problem = ""
        shown = self.shown_url(url)
        self._check_url(url, shown)
        client = self._get_client()
        for attempt in range(self.options.max_retries + 1):
            if cancel.cancelled:
                raise ProviderCancelled()
            response: httpx.Response | None = None
            try:
                response = client.send(client.build_request("POST", url, json=body), stream=True)
            except httpx.TimeoutException as exc:
                last_problem = f"timed out ({type(exc).__name__})"
                if attempt == self.options.max_retries:
                    raise ProviderTimeoutError(
                        f"{self.provider_name} did not answer within {self.options.request_timeout:g}s "
                        f"at {shown} after {attempt + 1} attempt(s); "
                        "raise the request timeout or check the endpoint"
                    ) from exc
            except httpx.TransportError as exc:
                last_problem = self.redact(f"network error: {exc}")
            except httpx.HTTPError as exc:  # e.g. an invalid URL: retrying cannot help
                raise ProviderRequestError(
                    self.redact(f"{self.provider_name} request to {shown} failed: {exc}; check BASE_URL")
                ) from None
            if response is not None:
                if response.status_code < 400:
                    return response
                try:
                    error_body = self._read_limited(response)
                finally:
                    response.close()
                if response.status_code not in RETRYABLE_STATUS:
                    raise self._status_error(response.status_code, error_body, shown)
                last_problem = f"HTTP {response.status_code}: {_excerpt(error_body)}"
            if attempt < self.options.max_retries and cancel.wait(self._delay(attempt, response)):
                raise ProviderCancelled()
        raise ProviderUnavailableError(
            f"{self.provider_name} failed {self.options.max_retries + 1} time(s) at {shown} ({last_problem}); "
            "try again later or check the provider's status"
        )

    def _check_url(self, url: str, shown: str) -> None:
        """A URL that can never work is a configuration error (NXR031), not a network failure to retry."""
        problem = ""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            problem = str(exc)
        else:
            if parsed.scheme not in ("http", "https"):
                problem = "it does not start with http:// or https://"
            elif not parsed.host:
                problem = "it names no host"
        if problem:
            raise ProviderConfigError(
                self.redact(
                    f"{self.provider_name} has an unusable BASE_URL ({shown}: {problem}); "
                    f"set {self.provider_name.upper().replace('-', '_')}_BASE_URL or BASE_URL to the endpoint's URL"
                )
            )

    def _status_error(self, status: int, body: bytes, url: str) -> ProviderError:
        detail = _excerpt(body)
        name = self.provider_name
        if status in (401, 403):
            return ProviderAuthError(
                f"{name} refused the credentials (HTTP {status}: {detail}); set a valid API key for "
                f"provider {name!r} ({name.upper().replace('-', '_')}_API_KEY or API_KEY in a .nxs file or "
                "the environment)"
            )
        if status == 404:
            return ProviderNotFoundError(
                f"{name} answered HTTP 404 at {url} ({detail}); check BASE_URL and the model id"
            )
        return ProviderRequestError(f"{name} rejected the request (HTTP {status}: {detail})")

    def _read_limited(self, response: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.options.max_response_bytes:
                break
            chunks.append(chunk)
        return self._redact_bytes(b"".join(chunks))

    def _limited_lines(self, response: httpx.Response, cancel: CancelToken, deadline: float) -> Iterator[str]:
        """The answer's lines (secrets of this endpoint replaced), within the size and time limits."""
        size = 0
        buffer = b""
        try:
            for chunk in response.iter_bytes():
                if cancel.cancelled:
                    raise ProviderCancelled()
                if time.monotonic() > deadline:
                    raise ProviderTimeoutError(
                        f"{self.provider_name} kept sending for more than {self.options.answer_timeout:g}s without "
                        "finishing its answer; raise ANSWER_TIMEOUT for this provider if that is expected"
                    )
                size += len(chunk)
                if size > self.options.max_response_bytes:
                    raise ProviderResponseTooLargeError(
                        f"{self.provider_name} answer exceeded {self.options.max_response_bytes} bytes; "
                        "raise MAX_RESPONSE_BYTES for this provider if that is expected"
                    )
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                for line in complete:
                    yield self._redact_bytes(line.rstrip(b"\r")).decode("utf-8", "replace")
        except httpx.TimeoutException as exc:
            raise ProviderTimeoutError(
                f"{self.provider_name} stopped sending for {self.options.request_timeout:g}s mid-answer"
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderUnavailableError(
                self.redact(f"{self.provider_name} connection broke mid-answer: {exc}")
            ) from exc
        if buffer:
            yield self._redact_bytes(buffer).decode("utf-8", "replace")


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    """Server-sent events as ``(event, data)``; ``event`` is ``""`` when the server names none."""
    event = ""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            event = value
        elif key == "data":
            data.append(value)
    if data:
        yield event, "\n".join(data)


def parse_json(text: str, provider: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise ProviderResponseError(f"{provider} sent malformed JSON in {what}: {text[:200]!r}") from None


def native_json(item: Any) -> str:
    """A provider's native item as JSON text kept for replay: readable (non-ASCII as is) unless
    the item holds a lone surrogate, which UTF-8 cannot store or send; then ``\\u`` escapes,
    which the provider reads back as the same item."""
    text = json.dumps(item, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(item)
    return text


def require_dict(value: Any, provider: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProviderResponseError(f"{provider} sent {what} that is not a JSON object: {str(value)[:200]!r}")
    return value


class HttpProvider(ABC):
    """Base of the providers that talk HTTP: one request/answer path for all of them.

    A provider names its endpoint ``path`` and its ``auth_headers``, builds the JSON
    ``request_body`` of a turn and reads the answer either as a server-sent event stream
    (``read_stream``) or as one JSON object (``read_whole``); the base connects, posts,
    picks the reader and keeps every error inside the transport's guard (``complete``).
    """

    #: The endpoint, relative to the provider's base URL.
    path: ClassVar[str]
    name: str
    default_model: str | None
    transport: HttpTransport

    def __init__(self, options: HttpOptions, name: str, default_model: str | None) -> None:
        self.name = name
        self.default_model = default_model
        self.transport = self.connect(options)

    def connect(self, options: HttpOptions) -> HttpTransport:
        """The transport to the endpoint, sending JSON with this provider's headers."""
        return HttpTransport(self.name, options, {"content-type": "application/json", **self.auth_headers(options)})

    @abstractmethod
    def auth_headers(self, options: HttpOptions) -> dict[str, str]:
        """The headers carrying the key (none without one) and the protocol version."""

    def model_of(self, request: ProviderRequest) -> str:
        """The model to ask: the request's, else the provider's default (NXR030 without one)."""
        model = request.model or self.default_model
        if not model:
            raise missing_model_error(self.name)
        return model

    @abstractmethod
    def request_body(self, request: ProviderRequest) -> dict[str, Any]:
        """The JSON body of one turn."""

    @abstractmethod
    def read_stream(self, lines: Iterator[str], on_text: Callable[[str], None]) -> ProviderReply:
        """The reply from a server-sent event stream, calling ``on_text`` per text delta."""

    @abstractmethod
    def read_whole(self, data: dict[str, Any], on_text: Callable[[str], None]) -> ProviderReply:
        """The reply from one JSON answer (``on_text`` gets its whole text)."""

    def complete(self, request: ProviderRequest, on_text: Callable[[str], None], cancel: CancelToken) -> ProviderReply:
        """Answer one turn: the body is built, posted and its answer read, all inside the
        transport's error guard."""
        with self.transport.guard():
            body = self.request_body(request)
            with self.transport.post(self.path, body, cancel) as response:
                if response.event_stream:
                    return self.read_stream(response.lines, on_text)
                answer = parse_json("\n".join(response.lines), self.name, "the answer")
                return self.read_whole(require_dict(answer, self.name, "the answer"), on_text)

    def close(self) -> None:
        """Release the connection pool."""
        self.transport.close()
