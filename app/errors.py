"""Errors translated in one place: JSON for ``/api`` (and clients that prefer JSON), markdown for
agents that asked for it, an HTML page for browsers.

Handlers raise Litestar's HTTP exceptions with a ``detail`` written for the reader (what was wrong
and what to try); anything else is logged with its traceback and shown as a generic 500, and an
unreachable catalogue is a 503. The 404 page says where to look next and that new papers may simply
not be harvested yet.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlencode

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.handlers import BaseRouteHandler
from litestar.response import Redirect
from litestar.status_codes import (
    HTTP_303_SEE_OTHER,
    HTTP_429_TOO_MANY_REQUESTS,
    HTTP_500_INTERNAL_SERVER_ERROR,
    HTTP_503_SERVICE_UNAVAILABLE,
)
from sqlalchemy.exc import SQLAlchemyError

from app.auth.guards import SignInRequired
from app.auth.wiring import page_context
from app.negotiation import accept_qualities
from app.rendering import Pages, View, header_url, request_format
from app.routing import handler_parameters
from catalog.arxiv_ids import ArxivId
from coordination.limits import LimitExceeded
from coordination.redis import RedisError

log = logging.getLogger(__name__)

TITLES = {
    400: "That address isn’t valid",
    401: "Sign in to continue",
    403: "That isn’t allowed",
    429: "Too many requests",
    404: "This page isn’t here",
    405: "That method isn’t allowed here",
    503: "The catalogue is unavailable",
}
HARVEST_NOTE = (
    "The link may be mistyped, or the paper may not be in the corpus yet. New papers are harvested "
    "continuously, so the newest submissions can take a moment to appear."
)


class PaperNotHarvested(HTTPException):
    """A well-formed arXiv id that is not in the catalogue (yet)."""

    status_code = 404

    def __init__(self, arxiv_id: ArxivId) -> None:
        super().__init__(
            detail=f"arXiv:{arxiv_id.canonical} is not in this archive yet. New papers are harvested "
            f"continuously; meanwhile it may be on arXiv: https://arxiv.org/abs/{arxiv_id.versioned}"
        )


class MovedPermanently(HTTPException):
    """The request used another spelling of an address (``/about/``): 301 to the canonical one."""

    status_code = 301

    def __init__(self, target: str) -> None:
        super().__init__(detail=f"Moved permanently to {target}")
        self.location = header_url(target)


def _status_and_detail(
    request: Request[Any, Any, Any], exc: Exception
) -> tuple[int, str, list[Any] | None, dict[str, str]]:
    if isinstance(exc, LimitExceeded):
        return (
            HTTP_429_TOO_MANY_REQUESTS,
            f"Too many requests ({exc.what}); try again in {exc.retry_after_header} s.",
            None,
            {"Retry-After": exc.retry_after_header},
        )
    if isinstance(exc, HTTPException):
        extra = exc.extra if isinstance(exc.extra, list) else None
        detail = exc.detail
        if isinstance(exc, ValidationException) and (messages := _validation_messages(request, extra)):
            # Litestar's own detail only repeats the URL; say which parameter is wrong and how.
            detail = "Invalid parameter: " + "; ".join(messages)
        return exc.status_code, detail, extra, dict(exc.headers or {})
    if isinstance(exc, RecursionError):  # a JSON body nested deeper than any parser recurses
        return 400, "The request body is nested too deeply.", None, {}
    if isinstance(exc, RedisError):
        log.warning("redis unavailable: %s", exc)
        return (
            HTTP_503_SERVICE_UNAVAILABLE,
            "Sessions are unavailable right now (the shared store does not answer); try again shortly.",
            None,
            {"Retry-After": "5"},
        )
    if isinstance(exc, SQLAlchemyError):
        log.exception("catalogue error")
        return (
            HTTP_503_SERVICE_UNAVAILABLE,
            "The catalogue cannot be reached right now; try again shortly.",
            None,
            {},
        )
    log.exception("unhandled error", exc_info=exc)
    return HTTP_500_INTERNAL_SERVER_ERROR, "Internal Server Error", None, {}


def _wants_json(request: Request[Any, Any, Any]) -> bool:
    if request.url.path.startswith("/api/") or request.url.path == "/api":
        return True
    qualities = accept_qualities(request.headers.get("accept", ""))
    return qualities.get("application/json", 0.0) > max(
        qualities.get("text/html", 0.0), qualities.get("text/markdown", 0.0)
    )


def _validation_messages(request: Request[Any, Any, Any], extra: list[Any] | None) -> list[str]:
    """``from: Invalid RFC3339 encoded date``: each problem under the name the address uses."""
    handler = request.scope.get("route_handler")
    parameters = handler_parameters(handler) if isinstance(handler, BaseRouteHandler) else {}
    aliases = {
        name: alias
        for name, field in parameters.items()
        if (
            alias := getattr(field.kwarg_definition, "name", None)
            or getattr(field.kwarg_definition, "query", None)
        )
    }
    messages = []
    for item in extra or []:
        if isinstance(item, dict):
            key, message = item.get("key"), item.get("message")
            messages.append(f"{aliases.get(key, key)}: {message}" if key else str(message))
    return messages


def exception_to_response(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if isinstance(exc, MovedPermanently):
        return Response(content=b"", status_code=301, headers={"location": exc.location})
    status, detail, extra, headers = _status_and_detail(request, exc)
    if isinstance(exc, SignInRequired) and not exc.bearer_only and not _wants_json(request):
        # A browser reaching a page that needs a sign-in goes to the sign-in page and comes back.
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return Redirect(f"/signin?{urlencode({'next': target})}", status_code=HTTP_303_SEE_OTHER)
    if _wants_json(request):
        body: dict[str, Any] = {"status_code": status, "detail": detail}
        if extra:
            body["extra"] = extra
        return Response(content=body, status_code=status, media_type=MediaType.JSON, headers=headers)
    pages: Pages | None = getattr(request.app.state, "pages", None)
    if pages is None:  # only before the app is fully built; never for a served request
        return Response(
            content={"status_code": status, "detail": detail}, status_code=status, headers=headers
        )
    fmt, _suffix = request_format(request)
    messages = _validation_messages(request, extra) if isinstance(exc, ValidationException) else []
    view = View(
        template="error",
        title=TITLES.get(status, "Something went wrong" if status >= 500 else "That didn’t work"),
        description=detail,
        path=header_url(request.scope["path"]),  # the decoded path may hold anything
        context={
            "status": status,
            "detail": detail,
            "messages": messages,
            "harvest_note": status == 404,
            "not_harvested": isinstance(exc, PaperNotHarvested),
        },
        indexable=False,
        status=status,
        cacheable=False,
    )
    rendered = pages.render(view, fmt, page_context(request))
    response = rendered.response()
    response.headers.update(headers)
    return response
