"""CSRF, in one place (datasette's ``csrf.py`` idea), bound to the server-side session.

The token is a random value kept *in the session* (Litestar's double-submit cookie is not bound to
anything, so a planted cookie would pass). Every unsafe request (POST, PUT, PATCH, DELETE) that
comes with a session must carry it: forms as the ``csrf_token`` field, ``fetch`` as the
``X-CSRF-Token`` header; templates get it as ``csrf_token``. Unsafe requests are also refused
when the browser says they come from another site (``Origin`` or ``Sec-Fetch-Site``). Requests
authenticated with a bearer token are exempt: they carry no ambient credentials. GET never
changes state, except completing a sign-in (the provider's callback and the one-time local link,
which carry their own single-use secret).
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any
from urllib.parse import urlsplit

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.exceptions import PermissionDeniedException

from app.auth.requester import requester

HEADER = "x-csrf-token"
FIELD = "csrf_token"
SESSION_KEY = "csrf"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


class CsrfRefused(PermissionDeniedException):
    pass


def csrf_token(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    """This session's token, created with the session's first write if it has none yet."""
    session = connection.scope.get("session")
    if not isinstance(session, dict):
        raise RuntimeError("CSRF tokens need the session middleware")
    token = session.get(SESSION_KEY)
    if not isinstance(token, str):
        token = session[SESSION_KEY] = secrets.token_urlsafe(32)
    return token


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


async def protect(request: Request[Any, Any, Any], public_url: str) -> None:
    """The app-wide ``before_request`` check; raises :class:`CsrfRefused` (403)."""
    if request.method in SAFE_METHODS:
        return
    actor = requester(request)
    if actor is not None and actor.via == "token":
        return
    origin = request.headers.get("origin")
    own = {_origin(public_url), f"{request.url.scheme}://{request.headers.get('host', '')}".lower()}
    if (origin is not None and origin.lower() not in own) or request.headers.get(
        "sec-fetch-site"
    ) == "cross-site":
        raise CsrfRefused(detail="Cross-site requests are refused. Use the form on this site.")
    session = request.scope.get("session")
    if not isinstance(session, dict) or not session:
        return  # no session: nothing the request could act on behalf of
    expected = session.get(SESSION_KEY)
    sent = request.headers.get(HEADER)
    if sent is None and request.headers.get("content-type", "").startswith(_FORMS):
        value = (await request.form()).get(FIELD)
        sent = value if isinstance(value, str) else None
    if not isinstance(expected, str) or not sent or not hmac.compare_digest(expected, sent):
        raise CsrfRefused(
            detail="This form has expired or did not come from this site (missing or wrong CSRF token). "
            "Reload the page and try again."
        )
