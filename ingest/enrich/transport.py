"""JSON over HTTP to one enrichment service, through the one polite client (:mod:`ingest.http`).

Each service keeps its own rate (``*_rate_limit`` requests per second, paced per host across every
process); retries, ``Retry-After``, timeouts and size limits are :class:`~ingest.http.PoliteClient`'s.
What is left becomes one of the narrow errors below, each naming the service, the URL and what the
service said.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from coordination.pacing import Pacer
from ingest.http import HttpError, PoliteClient, Politeness, Reply
from settings import EnrichmentSettings


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


def politeness(settings: EnrichmentSettings, rate_limit: float) -> Politeness:
    """The shared enrichment limits at one service's rate (requests per second)."""
    return Politeness(
        interval=1.0 / rate_limit,
        timeout=settings.enrichment_timeout,
        retries=settings.enrichment_max_retries,
        backoff=settings.enrichment_backoff,
        max_wait=settings.enrichment_max_wait,
    )


class JsonClient:
    """One service's JSON API: decoded bodies of 2xx answers, narrow errors for the rest."""

    def __init__(
        self,
        service: str,
        base_url: str,
        politeness: Politeness,
        pacer: Pacer,
        *,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.service = service
        self.http = PoliteClient(
            politeness,
            pacer,
            base_url=base_url,
            headers={"Accept": "application/json", **(headers or {})},
            params=params,
            sleep=sleep,
        )

    @property
    def requests(self) -> int:
        """Requests sent, retries included (for summaries and tests)."""
        return self.http.requests

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> JsonClient:
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
        try:
            reply = self.http.request(method, path, params=params, json=json)
        except HttpError as exc:
            if exc.reply is None:  # no answer: a timeout, a network error, or an oversized body
                raise ServiceUnavailable(self.service, exc.url, exc.detail, exc.status) from exc
            raise self._error(exc.reply, exc.detail) from exc
        if reply.ok:
            try:
                return reply.json()
            except ValueError as exc:
                raise ServiceUnavailable(
                    self.service, reply.url, f"answer is not JSON: {reply.text[:200]!r}", reply.status
                ) from exc
        raise self._error(reply)

    def _error(self, reply: Reply, detail: str = "") -> EnrichmentError:
        status, url = reply.status, reply.url
        message = "; ".join(m for m in (_message(reply), detail) if m)
        if status == 404:
            return NotFound(self.service, url, message or "not found", status)
        if status == 429:
            return RateLimited(self.service, url, message or "too many requests", status)
        if status >= 500:
            return ServiceUnavailable(self.service, url, message or "server error", status)
        return RequestRejected(self.service, url, message or reply.reason, status)


def _message(reply: Reply) -> str:
    """What the service said: its JSON ``error`` / ``message`` / ``errors`` or the start of the body."""
    try:
        body = reply.json()
    except ValueError:
        return " ".join(reply.text.split())[:300]
    if isinstance(body, dict):
        for key in ("error", "message", "errors", "detail"):
            value = body.get(key)
            if value:
                return "; ".join(map(str, value)) if isinstance(value, list) else str(value)
    return str(body)[:300]
