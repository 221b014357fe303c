"""Full text on request: ``GET`` and ``POST /api/papers/<id>/fulltext`` (:mod:`app.fulltext`).

``GET`` answers the paper's full-text state as JSON (anyone; the paper page polls it while a fetch
is under way). ``POST`` asks for the full text: a signed-in person (the paper page's form, or
``fetch`` with the CSRF header) or a bearer token with the ``fulltext`` scope. It answers 202 with
the state (``requested`` says whether this ask queued a fetch); asks for a paper already queued,
running or indexed coalesce into that one and cost nothing. The page's form (a form body, no
JavaScript) gets a 303 back to the paper page instead. 404 for an id that is not one or a paper
the catalogue does not have; 429 with ``Retry-After`` over the daily quota.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from litestar import HttpMethod, Request, Response, get, post, route
from litestar.exceptions import NotFoundException
from litestar.response import Redirect
from litestar.status_codes import HTTP_202_ACCEPTED, HTTP_204_NO_CONTENT, HTTP_303_SEE_OTHER

from app.auth.guards import InsufficientScope, SignInRequired, actor_of, session_or_token
from app.fulltext import SCOPE, FullTextState, read_state, request_full_text
from app.negotiation import accept_qualities
from app.params import Archive, ArxivId, Number
from app.services import AppServices

_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")
_ASK = (
    "Queue the paper's PDF to be fetched from arXiv, parsed and indexed. Needs a signed-in session "
    "(with the CSRF token) or a bearer token with the `fulltext` scope. 202 with the state (`queued` "
    "with its position, or the state of the fetch already under way or done: asks coalesce, and "
    "`requested` says whether this one queued a fetch); 429 with `Retry-After` over the daily quota."
)
_STATE = (
    "Whether the paper's full text is held, and where getting it has got: `none`, `queued` (with "
    "`position`), `fetching`, `parsing`, `indexing`, `indexed`, or `failed` with a `reason`."
)


async def _ask(request: Request[Any, Any, Any], services: AppServices, raw: str) -> Response[Any]:
    state, _queued = await request_full_text(request, services, actor_of(request), raw)
    if request.headers.get("content-type", "").startswith(_FORMS):
        qualities = accept_qualities(request.headers.get("accept", ""))
        if qualities.get("application/json", 0.0) <= qualities.get("text/html", 0.0):
            return Redirect(f"{state.paper_url}#full-text", status_code=HTTP_303_SEE_OTHER)
    return Response(state, status_code=HTTP_202_ACCEPTED)


# Each operation has a route per id style (``/api/papers/hep-th/9901001/fulltext``), alike but for
# the path and the summary.
_ask_post = partial(
    post,
    guards=[session_or_token(SCOPE)],
    tags=["papers"],
    description=_ASK,
    raises=[SignInRequired, InsufficientScope, NotFoundException],
    status_code=HTTP_202_ACCEPTED,
)
_state_get = partial(get, tags=["papers"], description=_STATE, raises=[NotFoundException])


@_ask_post("/api/papers/{arxiv_id:str}/fulltext", summary="Ask for a paper's full text")
async def ask_full_text(
    request: Request[Any, Any, Any], services: AppServices, arxiv_id: ArxivId
) -> Response[FullTextState]:
    return await _ask(request, services, arxiv_id)


@_ask_post(
    "/api/papers/{archive:str}/{number:str}/fulltext", summary="Ask for a paper's full text, by old-style id"
)
async def ask_old_style_full_text(
    request: Request[Any, Any, Any], services: AppServices, archive: Archive, number: Number
) -> Response[FullTextState]:
    return await _ask(request, services, f"{archive}/{number}")


@_state_get("/api/papers/{arxiv_id:str}/fulltext", summary="A paper's full-text state")
async def full_text_state(services: AppServices, arxiv_id: ArxivId) -> FullTextState:
    return await read_state(services, arxiv_id)


@_state_get(
    "/api/papers/{archive:str}/{number:str}/fulltext", summary="A paper's full-text state, by old-style id"
)
async def old_style_full_text_state(services: AppServices, archive: Archive, number: Number) -> FullTextState:
    return await read_state(services, f"{archive}/{number}")


# Litestar answers a path's automatic OPTIONS with the first handler registered for it (its Allow
# would name one method): these answer it themselves, registered first.
_ALLOW = {"Allow": "GET, OPTIONS, POST"}


@route("/api/papers/{arxiv_id:str}/fulltext", http_method=[HttpMethod.OPTIONS], include_in_schema=False)
async def full_text_options(arxiv_id: ArxivId) -> Response[None]:
    return Response(None, status_code=HTTP_204_NO_CONTENT, headers=_ALLOW)


@route(
    "/api/papers/{archive:str}/{number:str}/fulltext",
    http_method=[HttpMethod.OPTIONS],
    include_in_schema=False,
)
async def old_style_full_text_options(archive: Archive, number: Number) -> Response[None]:
    return Response(None, status_code=HTTP_204_NO_CONTENT, headers=_ALLOW)


ROUTE_HANDLERS = [
    full_text_options,
    old_style_full_text_options,
    ask_full_text,
    ask_old_style_full_text,
    full_text_state,
    old_style_full_text_state,
]
