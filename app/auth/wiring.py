"""Sign-in wired into the app: the session store, the middleware (sessions, then the requester),
the lifespan that owns the limiter and prints the local sign-in link, and the limits applied to
requests. ``create_app`` calls :func:`auth_parts`; handlers reach the state through
:func:`auth_state`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from litestar import Litestar, Request, Response
from litestar.connection import ASGIConnection
from litestar.middleware import DefineMiddleware
from litestar.openapi.spec import OpenAPI, OpenAPIHeader, OpenAPIMediaType, OpenAPIResponse, Schema
from litestar.openapi.spec.enums import OpenAPIType
from litestar.stores.base import Store

from app.auth import csrf, local_link
from app.auth.oauth import Provider, configured_providers
from app.auth.requester import Network, RequesterMiddleware, client_address, parse_networks, requester
from app.auth.sessions import STORE_NAME, session_config, session_store
from app.security import CONTENT_SECURITY_POLICY
from coordination.limits import Limiter, LimitExceeded, make_limiter
from coordination.redis import RedisError
from settings import LimitSettings, Settings

_EXCLUDE = ["^/static/"]
log = logging.getLogger(__name__)


@dataclass
class AuthState:
    settings: Settings
    providers: dict[str, Provider]
    trusted_proxies: tuple[Network, ...]
    limiter: Limiter | None = None  # set by the lifespan
    local_link: bool = False
    local_link_url: str | None = None  # the link printed at start-up (tests read it too)
    store: Store | None = field(default=None, repr=False)

    @property
    def public_url(self) -> str:
        return self.settings.public_url

    def callback_url(self, provider: str) -> str:
        return f"{self.public_url}/signin/{provider}/callback"


@dataclass(frozen=True)
class AuthParts:
    """What ``create_app`` passes to Litestar."""

    state: AuthState
    middleware: list[DefineMiddleware]
    stores: dict[str, Store]
    lifespan: Callable[[Litestar], AbstractAsyncContextManager[None]]


def auth_parts(settings: Settings) -> AuthParts:
    providers = configured_providers(settings)
    state = AuthState(
        settings,
        providers,
        parse_networks(settings.auth.trusted_proxies),
        local_link=local_link.available(settings, bool(providers)),
    )
    store = session_store(settings)
    state.store = store

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        limiter = make_limiter(settings, prefix=f"{settings.worker.worker_queue}:limits:")
        state.limiter = limiter
        if state.local_link:
            token = await local_link.mint(store, settings.auth.local_signin_minutes)
            state.local_link_url = f"{settings.public_url}{local_link.PATH}?token={token}"
            print(
                f"Sign in on this machine (one time, valid {settings.auth.local_signin_minutes} min): "
                f"{state.local_link_url}",
                file=sys.stderr,
                flush=True,
            )
        try:
            yield
        finally:
            await limiter.close()

    return AuthParts(
        state,
        [
            session_config(settings).middleware,
            DefineMiddleware(RequesterMiddleware, exclude=_EXCLUDE),
        ],
        {STORE_NAME: store},
        lifespan,
    )


def auth_state(connection: ASGIConnection[Any, Any, Any, Any]) -> AuthState:
    state: AuthState = connection.scope["app"].state.auth
    return state


# -- limits ------------------------------------------------------------------------------------


def client_of(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    client = connection.scope.get("client")
    return client_address(
        client[0] if client else None,
        connection.headers.get("x-forwarded-for"),
        auth_state(connection).trusted_proxies,
    )


async def enforce(connection: ASGIConnection[Any, Any, Any, Any], what: str, spec: str, key: str) -> None:
    """Count one request against the ``COUNT/SECONDS`` limit ``spec`` under ``key``; raises
    :class:`LimitExceeded` (a 429 with ``Retry-After``) when it is used up."""
    state = auth_state(connection)
    assert state.limiter is not None, "the auth lifespan has not run"
    count, seconds = LimitSettings.parse(spec)
    try:
        decision = await state.limiter.hit(f"{what}:{key}", count, seconds)
    except RedisError as error:
        # A request limit fails open: Redis being down must not take the public API with it.
        log.warning("limit %s not counted, Redis unavailable: %s", what, error)
        return
    if not decision.allowed:
        raise LimitExceeded(what, decision.retry_after)


async def limit_signin(connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Sign-in attempts (starts, callbacks, local links) per client address."""
    await enforce(
        connection, "signin", auth_state(connection).settings.limits.limit_signin, client_of(connection)
    )


async def before_request(request: Request[Any, Any, Any]) -> None:
    """App-wide, before every handler: the CSRF check and the JSON API limit (per token or person,
    else per client address)."""
    state = auth_state(request)
    await csrf.protect(request, state.public_url)
    if request.scope["path"].startswith("/api/"):
        actor = requester(request)
        key = actor.limit_key if actor is not None else f"client:{client_of(request)}"
        await enforce(request, "api", state.settings.limits.limit_api, key)


def document_api_limit(schema: OpenAPI) -> None:
    """Every ``/api/`` operation may answer 429 (:func:`before_request` counts them all): say so in
    the OpenAPI schema, with the ``Retry-After`` header, so the schema states every answer."""
    error = Schema(
        type=OpenAPIType.OBJECT,
        properties={
            "status_code": Schema(type=OpenAPIType.INTEGER),
            "detail": Schema(type=OpenAPIType.STRING),
        },
        required=["status_code", "detail"],
    )
    too_many = OpenAPIResponse(
        description="Too many requests from this token, person or address; try again after Retry-After.",
        headers={
            "Retry-After": OpenAPIHeader(schema=Schema(type=OpenAPIType.INTEGER), description="Seconds.")
        },
        content={"application/json": OpenAPIMediaType(schema=error)},
    )
    for path, item in (schema.paths or {}).items():
        if path.startswith("/api/"):
            for operation in (item.get, item.post, item.put, item.patch, item.delete):
                if operation is not None:
                    operation.responses = {**(operation.responses or {}), "429": too_many}


def page_context(connection: ASGIConnection[Any, Any, Any, Any]) -> dict[str, Any] | None:
    """What a page needs to show its requester (None: anonymous, the page may come from the
    shared cache). A signed-in page gets ``viewer`` and the session's ``csrf_token``."""
    actor = requester(connection)
    if actor is None:
        return None
    return {"viewer": actor, "csrf_token": csrf.csrf_token(connection) if actor.via == "session" else None}


def with_provider_forms(response: Response[bytes], state: AuthState) -> Response[bytes]:
    """``response`` (a page holding the providers' sign-in forms) with a CSP whose ``form-action``
    also allows the providers: Chromium checks it, with the form page's policy, against where the
    form's answer redirects (the provider), and blocks the sign-in otherwise."""
    origins = sorted(set().union(*(p.form_origins() for p in state.providers.values())))
    if origins:
        allowed = " ".join(["'self'", *origins])
        policy = CONTENT_SECURITY_POLICY.replace("form-action 'self'", f"form-action {allowed}")
        response.headers["content-security-policy"] = policy
    return response
