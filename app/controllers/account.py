"""The account page and what a signed-in person does with their account: link and unlink sign-in
providers, create and revoke API tokens, the private feed, download their data, delete it all.

Every route needs a signed-in session (``guards=[signed_in]``) and every change is a POST form
with the session's CSRF token; everything is looked up by the signed-in person's id, so another
person's token or identity id is simply "not found". Secrets (a new token, a new feed URL) are
shown once, in the answer to the POST that made them, and never stored in the clear.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from litestar import Request, Response, get, post
from litestar.exceptions import HTTPException, NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect
from litestar.status_codes import HTTP_303_SEE_OTHER

from accounts import queries as accounts
from app.auth.guards import InsufficientScope, SignInRequired, actor_of, session_or_token, signed_in
from app.auth.wiring import auth_state, page_context, with_provider_forms
from app.ids import path_id
from app.rendering import AppPages, View
from app.routing import PRIVATE
from app.services import in_transaction


class FormError(HTTPException):
    status_code = 400


async def _account_page(
    request: Request[Any, Any, Any], pages: AppPages, *, status: int = 200, **shown: Any
) -> Response[bytes]:
    actor = actor_of(request)
    auth = auth_state(request)
    sessions = request.app.state.services.sessions

    def load() -> dict[str, Any] | None:
        with sessions() as db:
            person = accounts.person(db, actor.person_id)
            if person is None:
                return None
            return {
                "person": person,
                "identities": accounts.identities(db, actor.person_id),
                "tokens": accounts.tokens(db, actor.person_id),
                "follows": accounts.followed(db, actor.person_id),
            }

    context = await anyio.to_thread.run_sync(load)
    if context is None:
        raise NotFoundException(detail="Your account no longer exists.")
    linked = {i.provider for i in context["identities"]}
    context.update(
        {
            "providers": [p for p in auth.providers.values() if p.name not in linked],
            "scopes": accounts.SCOPES,
            "new_token": None,
            "new_feed_url": None,
            "error": None,
            **shown,
        }
    )
    view = View(
        template="account",
        title="Your account",
        description="Sign-in providers, followed researchers, API tokens and your data.",
        path="/account",
        context=context,
        indexable=False,
        status=status,
        cacheable=False,
    )
    return with_provider_forms(pages.render(view, "html", page_context(request)).response(), auth)


@get("/account", include_in_schema=False, guards=[signed_in], opt=PRIVATE)
async def account(request: Request[Any, Any, Any], pages: AppPages) -> Response[bytes]:
    return await _account_page(request, pages)


def _expiry(days: str | None) -> dt.datetime | None:
    if not days:
        return None
    try:
        count = int(days)
    except ValueError as error:
        raise FormError(detail="The expiry must be a number of days.") from error
    if not 1 <= count <= 3650:
        raise FormError(detail="The expiry must be between 1 and 3650 days, or empty for none.")
    return dt.datetime.now(dt.UTC) + dt.timedelta(days=count)


@post("/account/tokens", include_in_schema=False, guards=[signed_in], opt=PRIVATE, status_code=201)
async def create_token(request: Request[Any, Any, Any], pages: AppPages) -> Response[bytes]:
    actor = actor_of(request)
    form = await request.form()
    name, days = form.get("name"), form.get("expires_days")
    scopes = {s for s in form.getall("scope") if isinstance(s, str)} if "scope" in form else set()
    try:
        expires = _expiry(days if isinstance(days, str) else None)
        secret, token = await in_transaction(
            request,
            lambda db: accounts.create_token(
                db,
                actor.person_id,
                name=name if isinstance(name, str) else "",
                scopes=scopes,
                expires_at=expires,
            ),
        )
    except (accounts.AccountError, FormError) as error:
        message = error.detail if isinstance(error, FormError) else str(error)
        return await _account_page(request, pages, status=400, error=message)
    return await _account_page(request, pages, status=201, new_token={"secret": secret, "token": token})


@post("/account/tokens/{token_id:str}/revoke", include_in_schema=False, guards=[signed_in], opt=PRIVATE)
async def revoke_token(request: Request[Any, Any, Any], token_id: FromPath[str]) -> Redirect:
    actor = actor_of(request)
    token = path_id(token_id, "token")
    if not await in_transaction(request, lambda db: accounts.revoke_token(db, actor.person_id, token)):
        raise NotFoundException(detail="You have no such token.")
    return Redirect("/account#tokens", status_code=HTTP_303_SEE_OTHER)


@post(
    "/account/identities/{identity_id:str}/unlink", include_in_schema=False, guards=[signed_in], opt=PRIVATE
)
async def unlink_identity(
    request: Request[Any, Any, Any], pages: AppPages, identity_id: FromPath[str]
) -> Response[bytes] | Redirect:
    actor = actor_of(request)
    identity = path_id(identity_id, "sign-in")
    try:
        await in_transaction(request, lambda db: accounts.unlink_identity(db, actor.person_id, identity))
    except LookupError as error:
        raise NotFoundException(detail="You have no such sign-in.") from error
    except accounts.AccountError as error:
        return await _account_page(request, pages, status=400, error=str(error))
    return Redirect("/account#identities", status_code=HTTP_303_SEE_OTHER)


@post("/account/feed", include_in_schema=False, guards=[signed_in], opt=PRIVATE)
async def feed(request: Request[Any, Any, Any], pages: AppPages) -> Response[bytes] | Redirect:
    actor = actor_of(request)
    action = (await request.form()).get("action")
    if action == "revoke":
        await in_transaction(request, lambda db: accounts.revoke_feed(db, actor.person_id))
        return Redirect("/account#feed", status_code=HTTP_303_SEE_OTHER)
    if action != "new":
        raise FormError(detail="Choose a new feed address or revoke it.")
    secret = await in_transaction(request, lambda db: accounts.new_feed_token(db, actor.person_id))
    url = f"{auth_state(request).public_url}/feeds/{secret}.xml"
    return await _account_page(request, pages, new_feed_url=url)


@get("/account/export", include_in_schema=False, guards=[signed_in], opt=PRIVATE)
async def export(request: Request[Any, Any, Any]) -> Response[bytes]:
    actor = actor_of(request)
    sessions = request.app.state.services.sessions

    def read() -> dict[str, Any] | None:
        with sessions() as db:
            return accounts.export(db, actor.person_id)

    data = await anyio.to_thread.run_sync(read)
    if data is None:
        raise NotFoundException(detail="Your account no longer exists.")
    return Response(
        content=json.dumps(data, indent=2, ensure_ascii=False).encode(),
        media_type="application/json",
        headers={
            "content-disposition": 'attachment; filename="wovepaper-account.json"',
            "cache-control": "private, no-store",
        },
    )


@post("/account/delete", include_in_schema=False, guards=[signed_in], opt=PRIVATE)
async def delete_account(request: Request[Any, Any, Any], pages: AppPages) -> Response[bytes] | Redirect:
    actor = actor_of(request)
    if (await request.form()).get("confirm") != "delete":
        return await _account_page(
            request, pages, status=400, error="Type delete in the box to confirm that the account should go."
        )
    await in_transaction(request, lambda db: accounts.delete_person(db, actor.person_id))
    request.clear_session()
    return Redirect("/", status_code=HTTP_303_SEE_OTHER)


@dataclass(frozen=True)
class Whoami:
    person_id: int
    name: str
    via: str  # "session" or "token"
    scopes: list[str]


@get(
    "/api/account",
    guards=[session_or_token("read")],
    summary="Who the request is signed in as",
    description="The signed-in person or API-token owner and the scopes the request may use "
    "(send `Authorization: Bearer <token>`). 401 without a valid token or session.",
    raises=[SignInRequired, InsufficientScope],  # documented, so the schema states every answer
)
async def whoami(request: Request[Any, Any, Any]) -> Whoami:
    actor = actor_of(request)
    return Whoami(actor.person_id, actor.name, actor.via, sorted(actor.scopes))


ROUTE_HANDLERS = [whoami, account, create_token, revoke_token, unlink_identity, feed, export, delete_account]
