"""The outermost ASGI layer: what must happen before Litestar routes a request.

- The server's scope is never changed in place: uvicorn reads ``scope["method"]`` again while it
  writes the answer, so the rewrites below go into a copy.
- ``HEAD`` is answered by the ``GET`` handler with the body dropped (RFC 9110 §9.3.2), so every page
  supports it without a second handler (Litestar's ``@get`` does not answer ``HEAD`` itself). The
  server still sees ``HEAD``: it sends the GET's headers, expects no body and keeps the connection.
- ``<page>.md`` is the markdown variant of ``<page>`` (``/index.md`` of ``/``): the suffix is removed
  before routing and recorded in ``scope["state"]``; handlers that render pages honour it and every
  other route answers 404 for it (see :func:`checked_request`).
- One address per resource: a path with empty segments or a trailing slash (``/about/``, ``//about``)
  is routed as its canonical form and answered with a 301 to it (or the canonical form's 404).
- A path holding control characters (``%00``, ``%0A``) names nothing: 404 before any handler
  (the static-file handler would otherwise fail on ``embedded null byte``).
"""

from __future__ import annotations

import re
from typing import Any, cast

from litestar import Litestar, Request
from litestar.exceptions import NotFoundException
from litestar.types import HTTPScope, Message, Receive, Scope, Send

from app.errors import MovedPermanently
from app.negotiation import MD_SUFFIX_FLAG
from app.rendering import header_url

_NO_SUFFIX_PREFIXES = ("/static/", "/api/")
# Route handlers that render a page in both formats declare ``opt={PAGE_OPT: True}``.
PAGE_OPT = "page"
# Set in ``scope["state"]``: the canonical address of a request that used another spelling.
CANONICAL_FLAG = "canonical_path"
_EMPTY_SEGMENTS = re.compile(r"/{2,}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def strip_markdown_suffix(path: str) -> str | None:
    """``/papers/x.md`` → ``/papers/x``; ``/index.md`` → ``/``; None when there is no page suffix
    (``/papers/.md`` has none: a page's variant is ``/papers.md``)."""
    if not path.endswith(".md") or path.startswith(_NO_SUFFIX_PREFIXES):
        return None
    stripped = path[: -len(".md")]
    if stripped in ("/index", ""):
        return "/"
    return None if stripped.endswith("/") else stripped


def canonical_path(path: str) -> str:
    """``//about/`` → ``/about``: empty segments collapsed, no trailing slash (except ``/``)."""
    collapsed = _EMPTY_SEGMENTS.sub("/", path)
    return collapsed.rstrip("/") or "/"


class Wovepaper(Litestar):
    """Litestar with the request rewrites above applied before routing."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:  # type: ignore[override]
        if scope["type"] == "http":
            http = cast("HTTPScope", {**scope})  # a copy: the server keeps its own (see above)
            state = http["state"] = dict(scope.get("state") or {})
            path = http["path"]
            if (canonical := canonical_path(path)) != path:
                query = http.get("query_string", b"").decode("latin-1")
                state[CANONICAL_FLAG] = canonical + (f"?{query}" if query else "")
                path = canonical
            if (stripped := strip_markdown_suffix(path)) is not None:
                path = stripped
                state[MD_SUFFIX_FLAG] = True
            if path != http["path"]:
                http["path"] = path
                http["raw_path"] = header_url(path).encode("ascii")
            if http["method"] == "HEAD":
                http["method"] = "GET"
                state["head"] = True
                send = _without_body(send)
            scope = http
        await super().__call__(scope, receive, send)


def _without_body(send: Send) -> Send:
    async def send_headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    return send_headers_only


async def checked_request(request: Request[Any, Any, Any]) -> None:
    """App-wide ``before_request`` hook, after routing and before any parameter is parsed:

    - a path with control characters is 404;
    - a non-canonical spelling of a routed address is a 301 to the canonical one;
    - ``<url>.md`` exists only for routes that render pages.

    (A hook rather than a guard: Litestar copies the route handler for every guard call, which
    costs more than the rest of a cached page.)"""
    state = request.scope.get("state", {})
    if _CONTROL.search(request.scope["path"]):
        raise NotFoundException(detail="An address cannot contain control characters.")
    if (target := state.get(CANONICAL_FLAG)) is not None:
        # Raised, not returned: a hook's return value is serialised as the handler's own data.
        raise MovedPermanently(target)
    if state.get(MD_SUFFIX_FLAG) and not request.route_handler.opt.get(PAGE_OPT):
        raise NotFoundException(detail="there is no markdown variant of this address")
