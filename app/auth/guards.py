"""Guards: what a route requires of its requester. The contract other areas build on:

- ``guards=[signed_in]`` — a signed-in person (session). Browsers without one are sent to
  ``/signin?next=<this page>`` (303); JSON clients get 401 with ``WWW-Authenticate``.
- ``guards=[session_or_token("chat")]`` — a signed-in person (the CSRF check applies, see
  :mod:`app.auth.csrf`) or an ``Authorization: Bearer`` token with that scope (no CSRF: bearer
  requests carry no ambient cookies). The chat API uses this.
- ``guards=[token_only("read")]`` plus ``opt={AUTH_OPT: "bearer"}`` — a bearer token with that
  scope and never a cookie (the MCP endpoint).

In the handler, :func:`app.auth.requester.requester` (or :func:`actor_of`) gives the
:class:`~app.auth.requester.Actor`. A missing sign-in raises :class:`SignInRequired` (401) and a
token without the scope :class:`InsufficientScope` (403); :mod:`app.errors` turns the first into a
redirect for browsers.
"""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler
from litestar.types import Guard

from app.auth.requester import Actor, requester

_REALM = 'Bearer realm="wovepaper"'


class SignInRequired(NotAuthorizedException):
    """No (acceptable) requester. ``bearer_only``: a redirect to the sign-in page would not help."""

    def __init__(self, detail: str, *, bearer_only: bool = False) -> None:
        super().__init__(detail=detail, headers={"WWW-Authenticate": _REALM})
        self.bearer_only = bearer_only


class InsufficientScope(PermissionDeniedException):
    def __init__(self, scope: str) -> None:
        super().__init__(
            detail=f"This token does not have the {scope!r} scope; create one that does on your "
            "account page.",
            headers={"WWW-Authenticate": f'{_REALM}, error="insufficient_scope", scope="{scope}"'},
        )


def actor_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Actor:
    """The requester of a guarded route (the guard has made sure there is one)."""
    actor = requester(connection)
    if actor is None:
        raise SignInRequired("Sign in to continue.")
    return actor


def signed_in(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    actor = requester(connection)
    if actor is None or actor.via != "session":
        raise SignInRequired("Sign in to continue.")


def session_or_token(scope: str) -> Guard:
    def guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
        actor = requester(connection)
        if actor is None:
            raise SignInRequired(f"Sign in, or send an API token with the {scope!r} scope.")
        if not actor.can(scope):
            raise InsufficientScope(scope)

    return guard


def token_only(scope: str) -> Guard:
    def guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
        actor = requester(connection)
        if actor is None or actor.via != "token":
            raise SignInRequired(
                f"Send an API token with the {scope!r} scope as 'Authorization: Bearer <token>' "
                "(cookies are not accepted here).",
                bearer_only=True,
            )
        if not actor.can(scope):
            raise InsufficientScope(scope)

    return guard
