"""Who the requester is, decided in one place for every request (datasette's
``actor_auth_cookie.py`` idea): handlers and guards only read the result.

:class:`RequesterMiddleware` runs after the session middleware and sets ``scope["user"]`` to an
:class:`Actor` or None:

- ``Authorization: Bearer <token>`` → the token's owner (``via="token"``, the token's scopes). A
  request with a bearer header is judged by the token alone: its cookies are ignored, and a
  malformed, unknown, expired or revoked token is a 401 at once (RFC 6750), whatever the route.
- otherwise a session that names a person who still exists → ``via="session"`` with every scope;
  a session naming a deleted person is emptied (the backend then deletes it).
- routes declared ``opt={AUTH_OPT: "bearer"}`` (the MCP endpoint) never look at the session.

Nothing here touches the catalogue for a request with neither header nor signed-in session, so
anonymous (cached) pages cost no query. Handlers call :func:`requester` (or use the guards in
:mod:`app.auth.guards`); :func:`client_address` names the client for limits.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio.to_thread
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.middleware.authentication import AbstractAuthenticationMiddleware, AuthenticationResult

from accounts import queries as accounts
from catalog.db import transaction

AUTH_OPT = "auth"  # route opt: "bearer" = cookies are never accepted on this route
SESSION_PERSON = "person_id"  # the session key naming the signed-in person
ALL_SCOPES = frozenset(accounts.SCOPES)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class Actor:
    """The signed-in person or API-token bearer behind a request.

    ``via`` says how they authenticated; ``scopes`` is what they may do (a session: everything; a
    token: what it was created with). ``token_id`` identifies the token (rate-limit keys)."""

    person_id: int
    name: str
    via: Literal["session", "token"]
    scopes: frozenset[str]
    token_id: int | None = None

    def can(self, scope: str) -> bool:
        return scope in self.scopes

    @property
    def limit_key(self) -> str:
        """The key limits count under: the person (a session) or the token."""
        return f"token:{self.token_id}" if self.via == "token" else f"person:{self.person_id}"


class InvalidToken(NotAuthorizedException):
    """A bearer token that is malformed, unknown, expired or revoked."""


def bearer_token(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """The token of an ``Authorization: Bearer`` header ("" when it is empty); None without one
    (other schemes are not ours to judge)."""
    header = connection.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def requester(connection: ASGIConnection[Any, Any, Any, Any]) -> Actor | None:
    """The actor the middleware found for this request (None: anonymous)."""
    actor = connection.scope.get("user")
    return actor if isinstance(actor, Actor) else None


class RequesterMiddleware(AbstractAuthenticationMiddleware):
    async def authenticate_request(
        self, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> AuthenticationResult:
        services = connection.scope["app"].state.services
        token = bearer_token(connection)
        if token is not None:
            actor = await anyio.to_thread.run_sync(_token_actor, services.engine, token)
            if actor is None:
                raise InvalidToken(
                    detail="The bearer token is not valid (unknown, expired or revoked). Create one on "
                    "your account page.",
                    headers={"WWW-Authenticate": 'Bearer realm="wovepaper", error="invalid_token"'},
                )
            return AuthenticationResult(user=actor, auth="token")
        handler = connection.scope.get("route_handler")
        if handler is not None and handler.opt.get(AUTH_OPT) == "bearer":
            return AuthenticationResult(user=None, auth=None)
        session = connection.scope.get("session")
        if not isinstance(session, dict):
            return AuthenticationResult(user=None, auth=None)
        person_id = session.get(SESSION_PERSON)
        if not isinstance(person_id, int):
            return AuthenticationResult(user=None, auth=None)
        actor = await anyio.to_thread.run_sync(_session_actor, services.sessions, person_id)
        if actor is None:  # the person was deleted (on another device): sign this session out
            session.clear()
            return AuthenticationResult(user=None, auth=None)
        return AuthenticationResult(user=actor, auth="session")


def _token_actor(engine: Any, token: str) -> Actor | None:
    with transaction(engine) as db:
        found = accounts.bearer(db, token)
        if found is None:
            return None
        person = accounts.person(db, found.person_id)
        if person is None:
            return None
        return Actor(person.id, person.display_name, "token", found.scopes, found.token_id)


def _session_actor(sessions: Any, person_id: int) -> Actor | None:
    with sessions() as db:
        person = accounts.person(db, person_id)
    return None if person is None else Actor(person.id, person.display_name, "session", ALL_SCOPES)


# -- the client's address ----------------------------------------------------------------------


def parse_networks(values: Sequence[str]) -> tuple[Network, ...]:
    """``["10.0.0.0/8", "127.0.0.1"]`` → networks; raises ValueError naming a bad entry."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError as error:
            raise ValueError(f"not an address or network: {value!r}") from error
    return tuple(networks)


def _within(address: str, networks: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_address(peer: str | None, forwarded_for: str | None, trusted_proxies: Sequence[Network]) -> str:
    """The client's address for limits and logs. ``X-Forwarded-For`` is believed only when the
    peer itself is a trusted proxy, and then only up to the first hop (from the right) that is
    not a trusted proxy: a client cannot choose its address by sending the header itself."""
    if not peer:
        return "unknown"
    if not forwarded_for or not _within(peer, trusted_proxies):
        return peer
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return peer  # a garbled header: fall back to what we know
        if not _within(hop, trusted_proxies):
            return hop
    return hops[0] if hops else peer
