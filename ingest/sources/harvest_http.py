"""Polite HTTP for arXiv's machine interfaces (the Atom API and OAI-PMH), shared by both clients.

arXiv's terms ask for no more than one request every three seconds and a single connection at a
time, across all of its APIs. So every request to a host passes one process-wide :class:`RequestGate`
for that host (whichever client or thread sends it), which keeps the delay between the end of one
request and the start of the next, and requests that fail for reasons that may pass
(429, 5xx, timeouts, refused or dropped connections) are retried with exponential backoff, honouring
the server's ``Retry-After`` (OAI-PMH's flow control is a 503 with ``Retry-After``).
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from settings import HarvestSettings

log = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class HarvestError(RuntimeError):
    """A harvest could not go on; the message says which request and why."""


class FetchFailed(HarvestError):
    """A request still failed after every retry (or the server asked us to wait too long)."""

    def __init__(self, url: str, reason: str, attempts: int) -> None:
        super().__init__(f"{url}: {reason} (after {attempts} attempt{'s' if attempts != 1 else ''})")
        self.url = url
        self.reason = reason
        self.attempts = attempts


class RequestGate:
    """One request at a time, at least ``interval`` seconds from the end of one to the start of the
    next: measured from the end, the gap holds as the server sees it whatever the latency.

    The gate is held for the whole request, so concurrent callers queue up behind it; the interval is
    given per call so that every client in the process shares one gate per host whatever delay it
    was configured with.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_end = float("-inf")

    @contextmanager
    def slot(self, interval: float) -> Iterator[float]:
        """Wait for our turn; yields the seconds spent waiting."""
        with self._lock:
            waited = max(0.0, self._last_end + interval - time.monotonic())
            if waited:
                time.sleep(waited)
            try:
                yield waited
            finally:
                self._last_end = time.monotonic()


_GATES: dict[str, RequestGate] = {}
_GATES_LOCK = threading.Lock()


def gate_for(url: str) -> RequestGate:
    """The process-wide gate of ``url``'s host."""
    host = (httpx.URL(url).host or "").lower()
    with _GATES_LOCK:
        return _GATES.setdefault(host, RequestGate())


@dataclass(frozen=True, slots=True)
class Politeness:
    """How a client paces and retries its requests (from :class:`settings.HarvestSettings`)."""

    delay: float = 3.0
    timeout: float = 30.0
    retries: int = 4
    backoff: float = 2.0
    max_wait: float = 300.0
    user_agent: str = "wovepaper"

    @classmethod
    def from_settings(cls, settings: HarvestSettings) -> Politeness:
        return cls(
            delay=settings.harvest_delay_seconds,
            timeout=settings.harvest_timeout_seconds,
            retries=settings.harvest_retries,
            backoff=settings.harvest_backoff_seconds,
            max_wait=settings.harvest_max_wait_seconds,
            user_agent=settings.harvest_user_agent,
        )


class PoliteClient:
    """A synchronous httpx client that waits its turn and retries what may pass."""

    def __init__(self, politeness: Politeness, *, transport: httpx.BaseTransport | None = None) -> None:
        self.politeness = politeness
        self._http = httpx.Client(
            timeout=httpx.Timeout(politeness.timeout),
            headers={"User-Agent": politeness.user_agent},
            follow_redirects=True,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PoliteClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def get(self, url: str, params: Mapping[str, str]) -> httpx.Response:
        """GET ``url``; returns the first response that is not worth retrying (any status)."""
        p = self.politeness
        gate = gate_for(url)
        target = str(httpx.URL(url, params=params))  # named in errors: which page failed
        attempts = p.retries + 1
        for attempt in range(1, attempts + 1):
            wait = p.backoff * 2 ** (attempt - 1)
            with gate.slot(p.delay):
                try:
                    response = self._http.get(url, params=params)
                except httpx.TransportError as exc:  # timeouts, refused and dropped connections
                    problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                else:
                    if response.status_code not in RETRYABLE_STATUS:
                        return response
                    problem = f"HTTP {response.status_code}"
                    asked = retry_after(response.headers.get("Retry-After"))
                    if asked is not None:
                        if asked > p.max_wait:
                            raise FetchFailed(
                                target,
                                f"{problem}; the server asks to retry after {asked:g} s, longer than "
                                f"the {p.max_wait:g} s we wait (WOVEPAPER_HARVEST_MAX_WAIT_SECONDS)",
                                attempt,
                            )
                        wait = asked
            if attempt == attempts:
                raise FetchFailed(target, problem, attempt)
            wait = min(wait, p.max_wait) + random.uniform(0, p.backoff / 2)
            log.warning("%s: %s; retry %d of %d in %.1f s", target, problem, attempt, p.retries, wait)
            time.sleep(wait)
        raise AssertionError("unreachable")  # the loop returns or raises


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())
