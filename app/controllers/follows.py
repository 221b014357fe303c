"""Following researchers, and the private feed of their new papers.

Follow and unfollow are POST forms on the researcher page (CSRF token in the form); with
JavaScript, ``static/follow.js`` sends the same request by ``fetch`` (token in ``X-CSRF-Token``,
``Accept: application/json``) and flips the button without a reload. The home page of a signed-in
person lists the newest papers of the researchers they follow, and ``/feeds/<token>.xml`` serves
the same as RSS to whoever holds the unguessable, revocable token (made on the account page).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio.to_thread
from litestar import Request, Response, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect
from litestar.status_codes import HTTP_200_OK, HTTP_303_SEE_OTHER

from accounts import queries as accounts
from app.auth.guards import actor_of, signed_in
from app.feeds import papers_feed
from app.ids import path_id
from app.negotiation import accept_qualities
from app.rendering import AppPages
from app.routing import PRIVATE, safe_next
from app.services import in_transaction
from catalog.researchers import researcher_name
from catalog.urls import researcher_path


async def _set_follow(request: Request[Any, Any, Any], researcher_id: int, follow: bool) -> Response[Any]:
    actor = actor_of(request)

    def change(db: Any) -> str | None:
        name = researcher_name(db, researcher_id)
        if name is None:
            return None
        if follow:
            accounts.follow(db, actor.person_id, researcher_id)
        else:
            accounts.unfollow(db, actor.person_id, researcher_id)
        return name

    name = await in_transaction(request, change)
    if name is None:
        raise NotFoundException(detail=f"There is no researcher with id {researcher_id}.")
    qualities = accept_qualities(request.headers.get("accept", ""))
    if qualities.get("application/json", 0.0) > qualities.get("text/html", 0.0):
        return Response({"researcher_id": researcher_id, "following": follow})
    form = await request.form()
    target = form.get("next")
    back = safe_next(target if isinstance(target, str) else None)
    return Redirect(
        back if back != "/" else researcher_path(researcher_id, name), status_code=HTTP_303_SEE_OTHER
    )


# Follow and unfollow are the same kind of route. 200, not POST's default 201: following or
# unfollowing creates no resource (a form gets a 303).
_follow_post = partial(
    post, include_in_schema=False, guards=[signed_in], opt=PRIVATE, status_code=HTTP_200_OK
)


@_follow_post("/researchers/{researcher_id:str}/follow")
async def follow(request: Request[Any, Any, Any], researcher_id: FromPath[str]) -> Response[Any]:
    return await _set_follow(request, path_id(researcher_id, "researcher"), True)


@_follow_post("/researchers/{researcher_id:str}/unfollow")
async def unfollow(request: Request[Any, Any, Any], researcher_id: FromPath[str]) -> Response[Any]:
    return await _set_follow(request, path_id(researcher_id, "researcher"), False)


@get("/feeds/{name:str}", include_in_schema=False)
async def private_feed(
    request: Request[Any, Any, Any], pages: AppPages, name: FromPath[str]
) -> Response[bytes]:
    sessions = request.app.state.services.sessions
    token = name.removesuffix(".xml")

    def build() -> Response[bytes] | None:
        with sessions() as db:
            owner = accounts.feed_owner(db, token) if name.endswith(".xml") else None
            if owner is None:
                return None
            papers = accounts.followed_papers(db, owner, limit=pages.settings.pages.feed_items)
        rendered = papers_feed(
            pages.site,
            title=f"{pages.site.name}: new papers by the researchers you follow",
            page="/",
            self_path=f"/feeds/{name}",
            description="The newest papers by the researchers you follow (a private feed).",
            papers=papers,
        )
        response = rendered.response()
        response.headers.update({"cache-control": "private, no-store", "x-robots-tag": "noindex"})
        return response

    found = await anyio.to_thread.run_sync(build)
    if found is None:
        raise NotFoundException(detail="There is no such feed (it may have been replaced or revoked).")
    return found


ROUTE_HANDLERS = [follow, unfollow, private_feed]
