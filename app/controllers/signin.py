"""Signing in and out: the sign-in page, the flow per provider, the local link, sign-out.

- ``GET /signin?next=/papers/…`` lists the configured providers (a form each) or explains the local
  link; nothing is stored for a visitor who only looks.
- ``POST /signin/<provider>`` starts the flow: ``state``, ``nonce`` and the PKCE verifier go into
  this browser's server-side session under ``state`` (at most a few pending, each ≤ 10 minutes),
  and the browser is sent to the provider.
- ``GET /signin/<provider>/callback`` finishes it: the state must be one this session started
  *for this provider*, unexpired and unused (single use across processes); then the code is
  exchanged and the ID token checked. Only then is a person found or created, the session id
  replaced and the browser sent to ``next`` (same-site relative paths only).
- ``GET /signin/local?token=…`` the one-time local link; ``POST /signout`` ends the session.

Any failure is a 400 page that says what happened, with nothing signed in or created. Attempts
count against ``WOVEPAPER_LIMIT_SIGNIN`` per client address.
"""

from __future__ import annotations

import hashlib
import time
from typing import Annotated, Any

import anyio.to_thread
from litestar import Request, Response, get, post
from litestar.exceptions import HTTPException, NotFoundException
from litestar.params import FromPath, FromQuery, QueryParameter
from litestar.response import Redirect
from litestar.status_codes import HTTP_303_SEE_OTHER

from accounts import queries as accounts
from app.auth import csrf, local_link
from app.auth.oauth import SignInFailed
from app.auth.requester import SESSION_PERSON, requester
from app.auth.sessions import rotate_session
from app.auth.wiring import AuthState, auth_state, limit_signin, page_context, with_provider_forms
from app.rendering import AppPages, View
from app.routing import safe_next
from catalog.db import transaction

FLOWS = "signin_flows"  # session key: {state: {provider, nonce, verifier, next, link, started}}
FLOW_SECONDS = 600  # RFC 9700: short-lived; a flow older than this is refused
MAX_PENDING = 5


NextPath = Annotated[str | None, QueryParameter(name="next", max_length=1000)]


class SignInError(HTTPException):
    status_code = 400


def _flows(request: Request[Any, Any, Any]) -> dict[str, dict[str, Any]]:
    flows = request.session.get(FLOWS)
    return flows if isinstance(flows, dict) else {}


def _signin_view(state: AuthState, request: Request[Any, Any, Any], next_path: str) -> View:
    return View(
        template="signin",
        title="Sign in",
        description="Sign in to follow researchers, chat with papers and create API tokens.",
        path="/signin",
        context={
            "providers": list(state.providers.values()),
            "local_link": state.local_link,
            "next": next_path,
            "form_csrf": csrf.csrf_token(request) if request.session else None,
        },
        indexable=False,
        cacheable=False,
    )


@get("/signin", include_in_schema=False)
async def signin_page(
    request: Request[Any, Any, Any], pages: AppPages, next_path: NextPath = None
) -> Response[bytes]:
    state = auth_state(request)
    view = _signin_view(state, request, safe_next(next_path))
    return with_provider_forms(pages.render(view, "html", page_context(request)).response(), state)


@post("/signin/{provider:str}", include_in_schema=False, status_code=HTTP_303_SEE_OTHER)
async def signin_start(request: Request[Any, Any, Any], provider: FromPath[str]) -> Redirect:
    await limit_signin(request)
    state = auth_state(request)
    chosen = state.providers.get(provider)
    if chosen is None:
        raise NotFoundException(detail=f"There is no sign-in provider {provider!r} here.")
    form = await request.form()
    next_value = form.get("next")
    try:
        started = await chosen.start(state.callback_url(provider))
    except SignInFailed as error:
        raise SignInError(detail=str(error)) from error
    now = time.time()
    flows = {s: f for s, f in _flows(request).items() if now - float(f.get("started", 0)) < FLOW_SECONDS}
    flows = dict(sorted(flows.items(), key=lambda item: item[1]["started"])[-(MAX_PENDING - 1) :])
    actor = requester(request)
    flows[started.state] = {
        "provider": provider,
        "nonce": started.nonce,
        "verifier": started.verifier,
        "next": safe_next(next_value if isinstance(next_value, str) else None),
        "link": actor.person_id if actor is not None and actor.via == "session" else None,
        "started": now,
    }
    request.session[FLOWS] = flows
    return Redirect(started.url, status_code=HTTP_303_SEE_OTHER)


@get("/signin/{provider:str}/callback", include_in_schema=False)
async def signin_callback(
    request: Request[Any, Any, Any],
    provider: FromPath[str],
    code: FromQuery[str | None] = None,
    state_value: Annotated[str | None, QueryParameter(name="state", max_length=200)] = None,
    error: FromQuery[str | None] = None,
    iss: FromQuery[str | None] = None,
) -> Redirect:
    state = state_value
    await limit_signin(request)
    auth = auth_state(request)
    chosen = auth.providers.get(provider)
    if chosen is None:
        raise NotFoundException(detail=f"There is no sign-in provider {provider!r} here.")
    flows = _flows(request)
    flow = flows.pop(state, None) if state else None
    if flows or FLOWS in request.session:
        request.session[FLOWS] = flows  # the state is used up whatever happens next
    if flow is None:
        raise SignInError(
            detail="This sign-in was not started in this browser, or was already used. Start again."
        )
    if flow["provider"] != provider:
        raise SignInError(
            detail="This sign-in was started with another provider (mix-up refused). Start again."
        )
    if time.time() - float(flow["started"]) > FLOW_SECONDS:
        raise SignInError(detail="This sign-in took too long. Start again.")
    assert state is not None and auth.limiter is not None
    once = await auth.limiter.hit(
        "signin-state:" + hashlib.sha256(state.encode()).hexdigest(), 1, FLOW_SECONDS
    )
    if not once.allowed:
        raise SignInError(detail="This sign-in answer was already used. Start again.")
    if error is not None or not code:
        raise SignInError(detail=f"{chosen.title} did not sign you in ({error or 'no code'}).")
    try:
        profile = await chosen.finish(
            code=code,
            redirect_uri=auth.callback_url(provider),
            nonce=flow["nonce"],
            verifier=flow["verifier"],
            issuer=iss,
        )
    except SignInFailed as failure:
        raise SignInError(detail=str(failure)) from failure
    link_to = flow.get("link")
    signed = await _sign_in(request, profile, link_to if isinstance(link_to, int) else None)
    return Redirect("/account" if signed.linked else flow["next"], status_code=HTTP_303_SEE_OTHER)


@get("/signin/local", include_in_schema=False)
async def signin_local(request: Request[Any, Any, Any], token: FromQuery[str] = "") -> Redirect:
    auth = auth_state(request)
    if not auth.local_link:
        raise NotFoundException(detail="The local sign-in link is off on this server.")
    await limit_signin(request)
    assert auth.store is not None and auth.limiter is not None
    minutes = auth.settings.auth.local_signin_minutes
    if not await local_link.redeem(auth.store, auth.limiter, token, minutes):
        raise SignInError(
            detail="This sign-in link was already used or has expired. Restart the server for a new one."
        )
    profile = accounts.Profile("local", local_link.ISSUER, local_link.SUBJECT, "Local reader", None)
    await _sign_in(request, profile, None)
    return Redirect("/", status_code=HTTP_303_SEE_OTHER)


async def _sign_in(
    request: Request[Any, Any, Any], profile: accounts.Profile, link_to: int | None
) -> accounts.SignedIn:
    """Find or create the person, then start their session under a fresh id."""
    engine = request.app.state.services.engine

    def write() -> accounts.SignedIn:
        with transaction(engine) as db:
            return accounts.sign_in(db, profile, link_to=link_to)

    try:
        signed = await anyio.to_thread.run_sync(write)
    except accounts.AccountError as error:
        raise SignInError(detail=str(error)) from error
    request.session.clear()
    request.session[SESSION_PERSON] = signed.person_id
    csrf.csrf_token(request)  # a new token with the new session
    rotate_session(request)
    return signed


@post("/signout", include_in_schema=False, status_code=HTTP_303_SEE_OTHER)
async def signout(request: Request[Any, Any, Any]) -> Redirect:
    request.clear_session()
    return Redirect("/", status_code=HTTP_303_SEE_OTHER)


ROUTE_HANDLERS = [signin_page, signin_start, signin_callback, signin_local, signout]
