"""The outermost ASGI layer: what must happen before Litestar routes a request.

- ``<page>.md`` is the markdown variant of ``<page>`` (``/index.md`` of ``/``): the suffix is removed
  before routing and recorded in ``scope["state"]``; handlers that render pages honour it and every
  other route answers 404 for it (see :func:`markdown_pages_only`).
- ``HEAD`` is answered by the ``GET`` handler with the body dropped (RFC 9110 §9.3.2), so every page
  supports it without a second handler (Litestar's ``@get`` does not answer ``HEAD`` itself).
"""

from __future__ import annotations

from typing import Any, cast

from litestar import Litestar, Request
from litestar.exceptions import NotFoundException
from litestar.types import HTTPScope, Message, Receive, Scope, Send

from app.negotiation import MD_SUFFIX_FLAG

_NO_SUFFIX_PREFIXES = ("/static/", "/api/")
# Route handlers that render a page in both formats declare ``opt={PAGE_OPT: True}``.
PAGE_OPT = "page"


def strip_markdown_suffix(path: str) -> str | None:
    """``/papers/x.md`` → ``/papers/x``; ``/index.md`` → ``/``; None when there is no page suffix."""
    if not path.endswith(".md") or path.startswith(_NO_SUFFIX_PREFIXES):
        return None
    stripped = path[: -len(".md")]
    if stripped in ("/index", ""):
        return "/"
    return stripped if stripped != "/" else None


class Wovepaper(Litestar):
    """Litestar with the two request rewrites above applied before routing."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:  # type: ignore[override]
        if scope["type"] == "http":
            http = cast("HTTPScope", scope)
            state = http.setdefault("state", {})
            if (stripped := strip_markdown_suffix(http["path"])) is not None:
                http["path"] = stripped
                http["raw_path"] = stripped.encode()
                state[MD_SUFFIX_FLAG] = True
            if http["method"] == "HEAD":
                http["method"] = "GET"
                state["head"] = True
                send = _without_body(send)
        await super().__call__(scope, receive, send)


def _without_body(send: Send) -> Send:
    async def send_headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    return send_headers_only


async def markdown_pages_only(request: Request[Any, Any, Any]) -> None:
    """App-wide ``before_request`` hook: ``<url>.md`` exists only for routes that render pages.

    (A hook rather than a guard: Litestar copies the route handler for every guard call, which
    costs more than the rest of a cached page.)"""
    if request.scope.get("state", {}).get(MD_SUFFIX_FLAG) and not request.route_handler.opt.get(PAGE_OPT):
        raise NotFoundException(detail="there is no markdown variant of this address")
