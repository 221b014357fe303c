"""Downloading PDFs from arXiv, politely and safely.

- Only ``https`` URLs on arXiv's own hosts (``arxiv.org``, ``export.arxiv.org``), on the default
  port, without credentials, resolving to public addresses only. Redirects are followed by hand and
  every hop is checked again, so a redirect to ``file://``, another host or a private address is
  refused. (A DNS answer that changes between our check and httpx's connect is not re-checked: the
  allow-list of two arXiv hosts is the main defence.)
- Ids are parsed before they become URLs (``catalog.arxiv_ids``), so nothing injected in an id
  reaches a path or a query.
- At most one request per ``min_interval`` seconds across the whole process (arXiv's terms: one
  request every 3 s), shared by every thread through one limiter.
- A size cap (``Content-Length`` and the bytes actually read), a timeout per request, and retries
  with exponential backoff (honouring ``Retry-After``) on 429, 5xx and network errors only.
"""

from __future__ import annotations

import ipaddress
import logging
import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from catalog import arxiv_ids

log = logging.getLogger(__name__)

ARXIV_HOSTS = frozenset({"arxiv.org", "export.arxiv.org"})
PDF_BASE = "https://arxiv.org/pdf/"
MAX_REDIRECTS = 5
USER_AGENT = "wovepaper/0.1 (+https://github.com/wovepaper; polite PDF fetcher)"

Resolver = Callable[[str, int], list[str]]


class FetchError(RuntimeError):
    """A download failed; ``retryable`` says whether trying again later may help."""

    def __init__(self, reason: str, *, retryable: bool = False, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


class FetchRefused(FetchError):
    """The URL breaks the fetch policy (scheme, host, port, address); never retried."""


def resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"cannot resolve {host}: {exc}", retryable=True) from exc
    return sorted({str(info[4][0]) for info in infos})


@dataclass(frozen=True)
class UrlPolicy:
    """Which URLs may be fetched. The default is the production policy; tests that fetch from a
    loopback server build a wider one explicitly (and test this one directly)."""

    hosts: frozenset[str] = ARXIV_HOSTS
    schemes: frozenset[str] = frozenset({"https"})
    ports: frozenset[int] | None = frozenset({443})  # None: any port
    allow_private: bool = False
    resolver: Resolver = field(default=resolve, compare=False)

    def check(self, url: str) -> httpx.URL:
        """The parsed URL if it may be fetched; :class:`FetchRefused` with the reason otherwise."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError) as exc:
            raise FetchRefused(f"not a valid URL: {url!r}") from exc
        if parsed.scheme not in self.schemes:
            allowed = ", ".join(sorted(self.schemes))
            raise FetchRefused(
                f"refused {url!r}: scheme {parsed.scheme or 'none'!r} is not allowed ({allowed})"
            )
        if parsed.userinfo:
            raise FetchRefused(f"refused {url!r}: credentials in URLs are not allowed")
        host = (parsed.host or "").lower().rstrip(".")
        if host not in self.hosts:
            raise FetchRefused(f"refused {url!r}: host {host or 'none'!r} is not an arXiv host")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        if self.ports is not None and port not in self.ports:
            raise FetchRefused(f"refused {url!r}: port {port} is not allowed")
        if not self.allow_private:
            for address in self._addresses(host, port):
                if not is_public(address):
                    raise FetchRefused(f"refused {url!r}: {host} resolves to a non-public address {address}")
        return parsed

    def _addresses(self, host: str, port: int) -> list[str]:
        try:
            return [str(ipaddress.ip_address(host.strip("[]")))]
        except ValueError:
            addresses = self.resolver(host, port)
        if not addresses:
            raise FetchError(f"{host} resolves to no address", retryable=True)
        return addresses


def is_public(address: str) -> bool:
    """True for a globally routable unicast address (not loopback, private, link-local, CGNAT,
    multicast, reserved, or an IPv4-mapped form of one of those)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def pdf_url(arxiv_id: str, version: int | None = None) -> str:
    """``https://arxiv.org/pdf/<canonical id>[v<n>]``; raises ``InvalidArxivId`` for anything else."""
    parsed = arxiv_ids.parse(arxiv_id)
    if version is not None:
        if version < 1:
            raise arxiv_ids.InvalidArxivId(arxiv_id, f"version {version} is not a positive number")
        parsed = parsed.with_version(version)
    return PDF_BASE + parsed.versioned


class RateLimiter:
    """At most one request per ``interval`` seconds across every thread that shares it.

    Callers are admitted one at a time under a lock, each at least ``interval`` after the previous
    admission *as it actually happened* (a sleeper that wakes late pushes the next one back, so the
    spacing holds even on a busy machine)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._next = 0.0

    def wait(self) -> float:
        """Block until this caller may send; return the monotonic time it was admitted."""
        with self._lock:
            delay = self._next - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            admitted = time.monotonic()
            self._next = admitted + self.interval
            return admitted


_SHARED: dict[float, RateLimiter] = {}
_SHARED_LOCK = threading.Lock()


def arxiv_limiter(interval: float) -> RateLimiter:
    """The process-wide limiter for arXiv (one per interval setting, normally exactly one)."""
    with _SHARED_LOCK:
        return _SHARED.setdefault(interval, RateLimiter(interval))


class Fetcher:
    """Download PDFs under a :class:`UrlPolicy` and a shared :class:`RateLimiter`."""

    def __init__(
        self,
        *,
        policy: UrlPolicy | None = None,
        limiter: RateLimiter,
        max_bytes: int,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 2.0,
        max_backoff: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.policy = policy or UrlPolicy()
        self.limiter = limiter
        self.max_bytes = max_bytes
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._client = httpx.Client(
            timeout=timeout,
            follow_redirects=False,  # every hop is checked by the policy
            transport=transport,
            headers={"User-Agent": USER_AGENT, "Accept": "application/pdf"},
            trust_env=False,  # no proxy from the environment
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def fetch_pdf(self, arxiv_id: str, version: int | None = None) -> bytes:
        return self.get(pdf_url(arxiv_id, version))

    def get(self, url: str) -> bytes:
        """The body of ``url`` (a PDF), retrying transient failures with exponential backoff."""
        for attempt in range(self.retries + 1):
            try:
                return self._follow(url)
            except FetchError as exc:
                if not exc.retryable or attempt == self.retries:
                    raise
                delay = min(self.max_backoff, self.backoff * 2**attempt) * (0.5 + random.random() / 2)
                if exc.retry_after is not None:
                    delay = max(delay, min(exc.retry_after, self.max_backoff))
                log.info("fetching %s failed (%s); retry %d in %.1f s", url, exc.reason, attempt + 1, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _follow(self, url: str) -> bytes:
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            checked = self.policy.check(current)
            self.limiter.wait()
            try:
                with self._client.stream("GET", checked) as response:
                    if response.is_redirect:
                        location = response.headers.get("location")
                        if not location:
                            raise FetchError(f"{current}: redirect without a Location header")
                        current = str(response.url.join(location))
                        continue
                    return self._body(current, response)
            except httpx.TimeoutException as exc:
                raise FetchError(f"{current}: timed out", retryable=True) from exc
            except httpx.TransportError as exc:
                raise FetchError(f"{current}: network error: {exc}", retryable=True) from exc
        raise FetchRefused(f"{url}: more than {MAX_REDIRECTS} redirects")

    def _body(self, url: str, response: httpx.Response) -> bytes:
        status = response.status_code
        if status == 429 or status >= 500:
            raise FetchError(
                f"{url}: HTTP {status}", retryable=True, retry_after=_retry_after(response.headers)
            )
        if status != 200:
            raise FetchError(f"{url}: HTTP {status}")
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self.max_bytes:
            raise FetchError(f"{url}: {int(declared):,} bytes is over the {self.max_bytes:,}-byte limit")
        body = bytearray()
        for part in response.iter_bytes():
            body += part
            if len(body) > self.max_bytes:
                raise FetchError(f"{url}: more than the {self.max_bytes:,}-byte limit")
        if b"%PDF-" not in body[:1024]:  # readers accept a little junk before the header
            kind = response.headers.get("content-type", "unknown type")
            raise FetchError(f"{url}: the response is not a PDF ({kind}, {len(body):,} bytes)")
        return bytes(body)


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
