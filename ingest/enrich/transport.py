"""The polite HTTP client every enrichment source uses: one rate limit, retries, clear errors.

Politeness: requests to one service start at least ``1 / rate_limit`` seconds apart (across threads);
a 429 or 5xx answer or a network error is retried up to ``max_retries`` times with exponential backoff
plus jitter, and a ``Retry-After`` header is obeyed. What is left becomes one of the narrow errors
below, each naming the service, the URL and what the service said.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_BACKOFF_SECONDS = 120.0
USER_AGENT = "wovepaper/0.1 (+https://github.com/wovepaper; enrichment)"


class EnrichmentError(Exception):
    """A request to an outside source failed; ``status`` is None for network errors."""

    def __init__(self, service: str, url: str, message: str, status: int | None = None) -> None:
        self.service = service
        self.url = url
        self.status = status
        self.message = message
        code = f" {status}" if status is not None else ""
        super().__init__(f"{service}{code}: {message} ({url})")


class NotFound(EnrichmentError):
    """The source has no such record (404)."""


class RequestRejected(EnrichmentError):
    """The source refused the request (400, 401, 403 …): a bad parameter or API key. Not retried."""


class RateLimited(EnrichmentError):
    """Still 429 after every retry: slow down (lower the rate limit or add an API key)."""


class ServiceUnavailable(EnrichmentError):
    """5xx, a timeout or a network error after every retry."""


class PoliteClient:
    """JSON over HTTP to one service, rate limited and retried."""

    def __init__(
        self,
        service: str,
        base_url: str,
        *,
        rate_limit: float,
        timeout: float,
        max_retries: int,
        backoff: float,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.service = service
        self.max_retries = max_retries
        self.backoff = backoff
        self._interval = 1.0 / rate_limit
        self._params = {k: v for k, v in (params or {}).items() if v}
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_start = 0.0
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            timeout=httpx.Timeout(timeout),
            headers={"User-Agent": USER_AGENT, "Accept": "application/json", **(headers or {})},
            follow_redirects=True,
        )
        self.requests = 0  # requests sent, retries included (for summaries and tests)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PoliteClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any, params: Mapping[str, Any] | None = None) -> Any:
        return self.request("POST", path, params=params, json=body)

    def request(
        self, method: str, path: str, *, params: Mapping[str, Any] | None = None, json: Any = None
    ) -> Any:
        """The decoded JSON body of a 2xx answer, or one of the errors above."""
        query = {**self._params, **{k: v for k, v in (params or {}).items() if v is not None}}
        url = str(self._http.build_request(method, path, params=query).url)
        attempt = 0
        while True:
            self._wait_turn()
            self.requests += 1
            try:
                response = self._http.request(method, path, params=query, json=json)
            except httpx.TransportError as exc:  # timeouts, refused connections, resets
                if attempt >= self.max_retries:
                    raise ServiceUnavailable(self.service, url, f"{type(exc).__name__}: {exc}") from exc
                self._back_off(attempt, None, f"{type(exc).__name__}")
                attempt += 1
                continue
            if response.is_success:
                return self._decode(response, url)
            status = response.status_code
            if status in RETRY_STATUSES and attempt < self.max_retries:
                self._back_off(attempt, response.headers.get("Retry-After"), str(status))
                attempt += 1
                continue
            raise self._error(response, url)

    # -- internals ------------------------------------------------------------------------------

    def _wait_turn(self) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next_start)
            self._next_start = start + self._interval
        if start > now:
            self._sleep(start - now)

    def _back_off(self, attempt: int, retry_after: str | None, why: str) -> None:
        delay = _retry_after_seconds(retry_after)
        if delay is None:
            delay = self.backoff * (2**attempt) * (1 + random.random() / 4)
        delay = min(delay, MAX_BACKOFF_SECONDS)
        log.info("%s: %s, retrying in %.1f s", self.service, why, delay)
        self._sleep(delay)

    def _decode(self, response: httpx.Response, url: str) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise ServiceUnavailable(
                self.service, url, f"answer is not JSON: {response.text[:200]!r}", response.status_code
            ) from exc

    def _error(self, response: httpx.Response, url: str) -> EnrichmentError:
        status = response.status_code
        message = _message(response)
        if status == 404:
            return NotFound(self.service, url, message or "not found", status)
        if status == 429:
            return RateLimited(self.service, url, message or "too many requests", status)
        if status >= 500:
            return ServiceUnavailable(self.service, url, message or "server error", status)
        return RequestRejected(self.service, url, message or response.reason_phrase, status)


def _message(response: httpx.Response) -> str:
    """What the service said: its JSON ``error`` / ``message`` / ``errors`` or the start of the body."""
    try:
        body = response.json()
    except ValueError:
        text = " ".join(response.text.split())
        return text[:300]
    if isinstance(body, dict):
        for key in ("error", "message", "errors", "detail"):
            value = body.get(key)
            if value:
                return "; ".join(map(str, value)) if isinstance(value, list) else str(value)
    return str(body)[:300]


def _retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds: either a number or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
