"""HTTP for providers: retries with backoff on 429/5xx, timeouts, size limits, clear errors."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from nexa_lsp.runtime.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderNotFoundError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderResponseTooLargeError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from nexa_lsp.runtime.events import CancelToken

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class ProviderCancelled(Exception):
    """The run was cancelled while the provider call was in flight."""


@dataclass(frozen=True)
class HttpOptions:
    """Connection settings of one provider endpoint. The key is never logged or stored."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    request_timeout: float = 60.0
    connect_timeout: float = 10.0
    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 20.0
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES


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
        response = self._open(self.url(path), body, cancel)
        try:
            content_type = response.headers.get("content-type", "")
            yield StreamedResponse("text/event-stream" in content_type, self._limited_lines(response, cancel))
        finally:
            response.close()

    def _open(self, url: str, body: Mapping[str, Any], cancel: CancelToken) -> httpx.Response:
        last_problem = ""
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
                        f"at {url} after {attempt + 1} attempt(s); "
                        "raise the request timeout or check the endpoint"
                    ) from exc
            except httpx.TransportError as exc:
                last_problem = f"network error: {exc}"
            if response is not None:
                if response.status_code < 400:
                    return response
                try:
                    error_body = self._read_limited(response)
                finally:
                    response.close()
                if response.status_code not in RETRYABLE_STATUS:
                    raise self._status_error(response.status_code, error_body, url)
                last_problem = f"HTTP {response.status_code}: {_excerpt(error_body)}"
            if attempt < self.options.max_retries and cancel.wait(self._delay(attempt, response)):
                raise ProviderCancelled()
        raise ProviderUnavailableError(
            f"{self.provider_name} failed {self.options.max_retries + 1} time(s) at {url} ({last_problem}); "
            "try again later or check the provider's status"
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
        return b"".join(chunks)

    def _limited_lines(self, response: httpx.Response, cancel: CancelToken) -> Iterator[str]:
        size = 0
        buffer = b""
        try:
            for chunk in response.iter_bytes():
                if cancel.cancelled:
                    raise ProviderCancelled()
                size += len(chunk)
                if size > self.options.max_response_bytes:
                    raise ProviderResponseTooLargeError(
                        f"{self.provider_name} answer exceeded {self.options.max_response_bytes} bytes; "
                        "raise MAX_RESPONSE_BYTES for this provider if that is expected"
                    )
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                for line in complete:
                    yield line.rstrip(b"\r").decode("utf-8", "replace")
        except httpx.TimeoutException as exc:
            raise ProviderTimeoutError(
                f"{self.provider_name} stopped sending for {self.options.request_timeout:g}s mid-answer"
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderUnavailableError(f"{self.provider_name} connection broke mid-answer: {exc}") from exc
        if buffer:
            yield buffer.decode("utf-8", "replace")


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
    except ValueError as exc:
        raise ProviderResponseError(f"{provider} sent malformed JSON in {what}: {text[:200]!r}") from exc


def require_dict(value: Any, provider: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProviderResponseError(f"{provider} sent {what} that is not a JSON object: {str(value)[:200]!r}")
    return value
