"""Every outbound HTTP request goes through :class:`PoliteClient` (the one module that imports httpx).

The same politeness for arXiv (API, OAI-PMH, PDFs), OpenAlex, Semantic Scholar and ROR:

- **Pacing across processes.** Requests with one pace key (``arxiv`` for every arXiv endpoint, else
  the host) start at least ``interval`` seconds apart in every process of the deployment: each
  reserves a slot through :mod:`coordination.pacing` (Redis, or a lock file under the data dir)
  and sleeps until it. Every redirect hop and every retry takes a slot of its own.
- **One retry policy.** 408, 429, 5xx and network errors are retried up to ``retries`` times: after
  the server's ``Retry-After`` when it sends one, else after exponential backoff plus jitter. A
  ``Retry-After`` longer than ``max_wait`` fails at once, saying so.
- **Limits.** A timeout per connect and read; bodies are streamed and refused past ``max_bytes`` (a
  declared ``Content-Length`` over it before a byte is read); a User-Agent naming the project.
- **A URL policy** for URLs built from outside data (PDF downloads): checked before every request,
  every redirect hop included, and again on the address actually connected to (see
  :class:`UrlPolicy`).

What is left of a failure is one :class:`HttpError`, naming the URL, what went wrong, and whether
trying again later may help; any other status comes back as a :class:`Reply` for the caller to read.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import math
import random
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

from coordination.pacing import Pacer, PacingUnavailable, pacer
from settings import Settings

log = logging.getLogger(__name__)

Transport = httpx.BaseTransport  # tests hand a client an httpx.MockTransport through this seam
Resolver = Callable[[str, int], list[str]]

ARXIV = "arxiv"  # the pace key every arXiv endpoint shares: its terms are about arXiv as a whole
ARXIV_HOSTS = frozenset({"arxiv.org", "export.arxiv.org"})  # where PDFs may come from
USER_AGENT = "wovepaper/0.1 (+https://github.com/wovepaper)"
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
MAX_REDIRECTS = 5
MAX_BYTES = 32 * 1024 * 1024  # an API answer; PDF downloads use the parser's own limit
ERROR_BYTES = 64 * 1024  # read of an error answer: enough for what the server says


class HttpError(RuntimeError):
    """A request failed. ``retryable`` says whether trying again later may help; ``status`` is None
    when no answer came; ``reply`` is the last answer when there was one."""

    def __init__(
        self,
        url: str,
        problem: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        reply: Reply | None = None,
    ) -> None:
        super().__init__(problem)
        self.url = url
        self.problem = problem
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.reply = reply
        self.attempts = 1

    @property
    def detail(self) -> str:
        """What went wrong, and after how many attempts."""
        tries = f" (after {self.attempts} attempts)" if self.attempts > 1 else ""
        return self.problem + tries

    @property
    def reason(self) -> str:
        return f"{self.url}: {self.detail}"

    def __str__(self) -> str:
        return self.reason


class Refused(HttpError):
    """The URL breaks the :class:`UrlPolicy` (scheme, host, port, address, redirects); never retried."""

    def __init__(self, url: str, problem: str) -> None:
        super().__init__(url, problem)


class TooLarge(HttpError):
    """The body is over the client's ``max_bytes`` (declared, or as it streamed in); never retried."""


@dataclass(frozen=True, slots=True)
class Politeness:
    """How one client paces, retries and limits its requests (built from a settings section)."""

    interval: float = 0.0  # least seconds between the starts of two requests with one pace key
    timeout: float = 30.0
    retries: int = 3
    backoff: float = 2.0  # first backoff in seconds; doubles per retry, plus up to half of it as jitter
    max_wait: float = 300.0  # the longest Retry-After (or backoff) waited for
    max_bytes: int = MAX_BYTES
    user_agent: str = USER_AGENT


@dataclass(frozen=True, slots=True)
class Reply:
    """A complete answer (the body read within ``max_bytes``)."""

    url: str
    status: int
    reason: str
    headers: Mapping[str, str]  # case-insensitive
    content: bytes
    encoding: str = "utf-8"

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        return self.content.decode(self.encoding, errors="replace")

    def json(self) -> Any:
        """The decoded JSON body; ``ValueError`` when it is not JSON."""
        return json.loads(self.content)


# -- the URL policy ------------------------------------------------------------------------------


def resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise HttpError(host, f"cannot resolve {host}: {exc}", retryable=True) from exc
    return sorted({str(info[4][0]) for info in infos})


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


@dataclass(frozen=True)
class UrlPolicy:
    """Which URLs may be fetched: by default ``https`` on arXiv's hosts, on port 443, without
    credentials, resolving to public addresses only. Tests that fetch from a loopback server build
    a wider one explicitly (and test this one directly).

    A client with a policy checks it before every request, redirect hops included (so a redirect
    to ``file://``, another host or a private address is refused before it is followed), and
    connects only to an address it has just checked: the name is resolved once more at connect
    time and the connection goes to that checked address, so a DNS answer that changes between
    the check and the connect (DNS rebinding) cannot reach a private address. Environment proxies
    are ignored (through a proxy, the address checks would mean nothing)."""

    hosts: frozenset[str] = ARXIV_HOSTS
    schemes: frozenset[str] = frozenset({"https"})
    ports: frozenset[int] | None = frozenset({443})  # None: any port
    allow_private: bool = False
    resolver: Resolver = field(default=resolve, compare=False)

    def check(self, url: str | httpx.URL) -> httpx.URL:
        """The parsed URL if it may be fetched; :class:`Refused` with the reason otherwise."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError) as exc:
            raise Refused(str(url), "not a valid URL") from exc
        shown = repr(str(url))
        if parsed.scheme not in self.schemes:
            allowed = ", ".join(sorted(self.schemes))
            raise Refused(shown, f"scheme {parsed.scheme or 'none'!r} is not allowed ({allowed})")
        if parsed.userinfo:
            raise Refused(shown, "credentials in URLs are not allowed")
        host = (parsed.host or "").lower().rstrip(".")
        if host not in self.hosts:
            raise Refused(shown, f"host {host or 'none'!r} is not an arXiv host")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        if self.ports is not None and port not in self.ports:
            raise Refused(shown, f"port {port} is not allowed")
        self.addresses(host, port)
        return parsed

    def addresses(self, host: str, port: int) -> list[str]:
        """``host``'s addresses, every one of them allowed; :class:`Refused` otherwise."""
        try:
            found = [str(ipaddress.ip_address(host.strip("[]")))]
        except ValueError:
            found = self.resolver(host, port)
        if not found:
            raise HttpError(host, f"{host} resolves to no address", retryable=True)
        if not self.allow_private:
            for address in found:
                if not is_public(address):
                    raise Refused(host, f"{host} resolves to a non-public address {address}")
        return found


class _CheckedBackend(httpcore.SyncBackend):
    """Connects only to an address the policy has just allowed (TLS still verifies the name)."""

    def __init__(self, policy: UrlPolicy) -> None:
        self.policy = policy

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        failure: httpcore.ConnectError | None = None
        for address in self.policy.addresses(host, port):
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as exc:  # try the next address, as the default backend does
                failure = exc
        assert failure is not None  # addresses() returns at least one or raises
        raise failure


def _checked_transport(policy: UrlPolicy) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx has no public way to pass httpcore a network backend; its pool keeps it here.
    transport._pool._network_backend = _CheckedBackend(policy)
    return transport


# -- the client ----------------------------------------------------------------------------------


class PoliteClient:
    """A synchronous HTTP client that waits its turn, retries what may pass and reads within limits.

    ``pace_key`` None paces per host. ``base_url``, ``headers`` and ``params`` apply to every
    request (empty parameter values are left out). ``sleep`` is injectable so tests can record the
    waits instead of sleeping them."""

    def __init__(
        self,
        politeness: Politeness,
        pacer: Pacer,
        *,
        pace_key: str | None = None,
        policy: UrlPolicy | None = None,
        base_url: str = "",
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.politeness = politeness
        self.pacer = pacer
        self.pace_key = pace_key
        self.policy = policy
        self._params = {k: v for k, v in (params or {}).items() if v}
        self._sleep = sleep
        self.requests = 0  # requests sent, redirect hops and retries included
        hooks: list[Callable[[httpx.Request], None]] = [self._pace]
        if policy is not None:
            hooks.insert(0, self._check)
            transport = transport or _checked_transport(policy)
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            timeout=httpx.Timeout(politeness.timeout),
            headers={"User-Agent": politeness.user_agent, **(headers or {})},
            follow_redirects=False,  # followed below, one paced (and checked) hop at a time
            transport=transport,
            trust_env=policy is None,
            event_hooks={"request": hooks},
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PoliteClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def get(self, url: str, params: Mapping[str, Any] | None = None) -> Reply:
        return self.request("GET", url, params=params)

    def post(self, url: str, body: Any, params: Mapping[str, Any] | None = None) -> Reply:
        return self.request("POST", url, params=params, json=body)

    def request(
        self, method: str, url: str, *, params: Mapping[str, Any] | None = None, json: Any = None
    ) -> Reply:
        """The answer to ``url`` (relative to ``base_url``) after redirects and retries: any status
        that is not worth retrying comes back as a :class:`Reply`; what still fails after every
        retry raises :class:`HttpError`."""
        p = self.politeness
        query = {**self._params, **{k: v for k, v in (params or {}).items() if v is not None}}
        try:
            request = self._http.build_request(method, url, params=query, json=json)
        except httpx.InvalidURL as exc:
            raise HttpError(url, f"not a valid URL: {exc}") from exc
        attempt = 1
        while True:
            try:
                return self._follow(request)
            except HttpError as exc:
                exc.attempts = attempt
                asked = exc.retry_after
                if asked is not None and asked > p.max_wait:
                    exc.problem += (
                        f"; the server asks to retry after {asked:g} s, longer than the {p.max_wait:g} s "
                        "we wait"
                    )
                    raise
                if not exc.retryable or attempt > p.retries:
                    raise
                wait = asked if asked is not None else self._backoff(attempt)
                log.warning(
                    "%s: %s; retry %d of %d in %.1f s", exc.url, exc.problem, attempt, p.retries, wait
                )
            self._sleep(wait)
            attempt += 1

    # -- internals ------------------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        p = self.politeness
        return min(p.max_wait, p.backoff * 2 ** (attempt - 1)) + random.uniform(0, p.backoff / 2)

    def _check(self, request: httpx.Request) -> None:
        """Request hook: refuse a URL (first or redirected to) outside the policy, before its slot."""
        assert self.policy is not None
        self.policy.check(request.url)

    def _pace(self, request: httpx.Request) -> None:
        """Request hook: wait for this request's slot (after the policy hook allowed it)."""
        interval = self.politeness.interval
        if interval > 0:
            self._sleep(self.pacer.reserve(self.pace_key or request.url.host, interval))
        self.requests += 1

    def _follow(self, request: httpx.Request) -> Reply:
        url = str(request.url)
        for _hop in range(MAX_REDIRECTS + 1):
            try:
                response = self._http.send(request, stream=True)
            except PacingUnavailable as exc:
                raise HttpError(url, str(exc), retryable=True) from exc
            except httpx.UnsupportedProtocol as exc:
                raise HttpError(url, f"{type(exc).__name__}: {exc}") from exc
            except httpx.RequestError as exc:  # timeouts, refused and dropped connections
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                raise HttpError(url, problem, retryable=True) from exc
            try:
                if response.next_request is None:
                    return self._read(response)
                request = response.next_request  # read nothing of a redirect's body
            finally:
                response.close()
        raise Refused(url, f"more than {MAX_REDIRECTS} redirects")

    def _read(self, response: httpx.Response) -> Reply:
        url = str(response.url)
        status = response.status_code
        if status in RETRYABLE_STATUS:
            raise HttpError(
                url,
                f"HTTP {status}",
                status=status,
                retryable=True,
                retry_after=retry_after(response.headers.get("retry-after")),
                reply=self._reply(response, _head(response, ERROR_BYTES)),
            )
        limit = self.politeness.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise TooLarge(url, f"{int(declared):,} bytes is over the {limit:,}-byte limit", status=status)
        body = bytearray()
        try:
            for part in response.iter_bytes():
                body += part
                if len(body) > limit:
                    raise TooLarge(url, f"more than the {limit:,}-byte limit", status=status)
        except httpx.RequestError as exc:  # the connection broke, or the encoding is corrupt, mid-body
            raise HttpError(url, f"{type(exc).__name__}: {exc}", retryable=True) from exc
        return self._reply(response, bytes(body))

    @staticmethod
    def _reply(response: httpx.Response, content: bytes) -> Reply:
        return Reply(
            url=str(response.url),
            status=response.status_code,
            reason=response.reason_phrase,
            headers=response.headers,
            content=content,
            encoding=response.encoding or "utf-8",
        )


def _head(response: httpx.Response, size: int) -> bytes:
    """The first ``size`` bytes of a body we will not use beyond its error message."""
    body = bytearray()
    try:
        for part in response.iter_bytes():
            body += part
            if len(body) >= size:
                break
    except httpx.RequestError:
        pass  # what arrived is enough to say why
    return bytes(body[:size])


def retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - now()
    return max(0.0, seconds) if not math.isnan(seconds) else None


def arxiv_client(
    settings: Settings,
    *,
    policy: UrlPolicy | None = None,
    max_bytes: int | None = None,
    headers: Mapping[str, str] | None = None,
    transport: Transport | None = None,
) -> PoliteClient:
    """A client for arXiv (API, OAI-PMH or PDFs): arXiv's interval, retries and user agent, and
    the one pace key all of them share across the deployment."""
    conf = settings.arxiv
    politeness = Politeness(
        interval=conf.arxiv_interval_seconds,
        timeout=conf.arxiv_timeout_seconds,
        retries=conf.arxiv_retries,
        backoff=conf.arxiv_backoff_seconds,
        max_wait=conf.arxiv_max_wait_seconds,
        max_bytes=max_bytes or MAX_BYTES,
        user_agent=conf.arxiv_user_agent,
    )
    return PoliteClient(
        politeness, pacer(settings), pace_key=ARXIV, policy=policy, headers=headers, transport=transport
    )
