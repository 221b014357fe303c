"""One source of truth per page, two representations: HTML and markdown.

A handler builds a :class:`View` (the page's data plus its title, canonical path, breadcrumbs and
JSON-LD) or a :class:`Redirect`, and hands the builder to :meth:`Pages.serve`. The same view is
rendered by ``<template>.html`` (autoescaped HTML) or ``<template>.md`` (markdown, where every
printed value is markdown-escaped unless it was built as :class:`markupsafe.Markup`), depending on
the request (see :mod:`app.negotiation`). Rendered pages are kept in a small in-process LRU cache for
a few seconds, so a burst of requests for the same page costs one set of queries.

Reuse for a new page: write ``search.html`` extending ``base.html`` and
``search.md`` extending ``base.md``, declare an ``async`` route with ``opt={PAGE_OPT: True}``, and
return ``await pages.serve(request, lambda db: View(...))`` from it (``db`` is a catalogue session;
the builder runs in a worker thread, never on the event loop).
"""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import anyio.to_thread
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from litestar import Request, Response
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.response.base import ASGIResponse
from litestar.types import ASGIApp
from markupsafe import Markup, escape
from sqlalchemy.orm import Session

from app.auth.wiring import page_context
from app.negotiation import MD_SUFFIX_FLAG, Format, choose
from app.site import Site
from app.structured_data import JsonLd, graph
from retrieval import tokens
from settings import Settings

MARKDOWN_MEDIA_TYPE = "text/markdown"
HTML_MEDIA_TYPE = "text/html"
_BLANK_RUNS = re.compile(r"\n(?:[ \t]*\n){2,}")

# -- views -------------------------------------------------------------------------------------


@dataclass
class View:
    """Everything one page shows. ``path`` is the canonical path (query included when it matters)."""

    template: str  # "paper" → paper.html and paper.md
    title: str
    description: str
    path: str
    context: dict[str, Any] = field(default_factory=dict)
    crumbs: Sequence[tuple[str, str]] = ()  # (name, path) after "wovepaper" → "/"
    json_ld: Sequence[JsonLd] = ()
    og_type: str = "website"
    indexable: bool = True
    status: int = 200
    cacheable: bool = True


@dataclass(frozen=True, slots=True)
class Redirect:
    """A permanent move to the canonical address (``path`` may carry a query)."""

    path: str
    status: int = 301


Builder = Callable[[Session], "View | Redirect"]
# What page handlers return: the ASGIResponse of :meth:`Pages.serve` (Litestar passes it through).
PageAnswer = ASGIApp


@dataclass(frozen=True, slots=True)
class Rendered:
    status: int
    body: bytes
    media_type: str
    headers: tuple[tuple[str, str], ...] = ()

    def response(self) -> Response[bytes]:
        return Response(
            content=self.body, status_code=self.status, media_type=self.media_type, headers=dict(self.headers)
        )

    def asgi(self) -> ASGIResponse:
        """The low-level response: what a cached page is answered with (no per-request rework)."""
        return ASGIResponse(
            body=self.body, status_code=self.status, media_type=self.media_type, headers=self.headers
        )


# What may stay as it is in an address: RFC 3986's reserved and unreserved characters and ``%``
# (already an escape). Everything else — spaces, controls, non-ASCII — is percent-encoded as UTF-8.
_URL_SAFE = ":/?#[]@!$&'()*+,;=%-._~"


def header_url(path: str) -> str:
    """``path`` as it may appear in a header (``Location``, ``Link``): ASCII only, no controls.

    Request paths arrive percent-decoded (``/€``, ``/a\r\nb``); a header holding them as they are
    cannot be encoded (HTTP headers are Latin-1) or splits the answer. Lone surrogates and bytes
    that were not UTF-8 become U+FFFD first."""
    return quote(path, safe=_URL_SAFE, errors="replace")


def markdown_path(path: str) -> str:
    """The ``.md`` address of a page path: ``/a?b`` → ``/a.md?b``; ``/`` → ``/index.md``."""
    base, sep, query = path.partition("?")
    base = "/index" if base in ("", "/") else base.rstrip("/")
    return f"{base}.md{sep}{query}"


# -- markdown escaping -------------------------------------------------------------------------

# Characters that start inline markdown or raw HTML anywhere on a line; ``_`` only at word edges
# (an intraword underscore never makes emphasis, and LaTeX like ``x_i`` stays readable).
_INLINE = re.compile(r"([\\`*\[\]<>|~])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# Block syntax only matters at the start of a line: headings, quotes, list items, rules and setext
# underlines. Values may be printed at a line start, so a value that begins like one is escaped.
_BLOCK_START = re.compile(r"^(\s*)(#{1,6}(?=\s|$)|>|[-+](?=\s|$)|\d{1,9}[.)](?=\s|$)|[=-]+\s*$)")


def md_escape(value: object) -> str:
    """Text → markdown that renders as exactly that text (one line; no links, HTML or emphasis)."""
    text = " ".join(str(value).split())
    text = _INLINE.sub(lambda m: "\\" + m.group(0), text)
    return _BLOCK_START.sub(_escape_block_marker, text)


def _escape_block_marker(match: re.Match[str]) -> str:
    marker = match.group(2)
    if marker[0].isdigit():  # "1." → "1\." (a backslash before a digit is not an escape)
        return match.group(1) + marker[:-1] + "\\" + marker[-1]
    return match.group(1) + "\\" + marker


def md_code(value: object) -> Markup:
    """A code span holding ``value`` verbatim (fenced by more backticks than it contains)."""
    text = " ".join(str(value).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Markup(f"{fence}{pad}{text}{pad}{fence}")  # noqa: S704 - a code span shows text literally


def _md_finalize(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, Markup):
        return str(value)
    return md_escape(value)


def http_url(value: object) -> str | None:
    """``value`` when it is an http(s) URL, else None: no ``javascript:`` or ``data:`` links."""
    if isinstance(value, str) and value.lower().startswith(("https://", "http://")) and " " not in value:
        return value
    return None


def _md_url(url: str) -> str:
    # Inside ``<…>`` a destination may hold anything but ``<``, ``>`` and line breaks.
    return header_url(url)


# -- environments ------------------------------------------------------------------------------


def _number(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def _day(value: dt.date | dt.datetime | None) -> str:
    if value is None:
        return ""
    return f"{value.day} {value:%b %Y}"


def _plural(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count:,} {singular if count == 1 else (plural or singular + 's')}"


def environments(directory: Path, site: Site) -> tuple[Environment, Environment]:
    """The HTML environment (autoescaped) and the markdown one (escaped by ``finalize``)."""
    common: dict[str, Any] = {
        "loader": FileSystemLoader(directory),
        "undefined": StrictUndefined,
        "trim_blocks": True,
        "lstrip_blocks": True,
    }
    html = Environment(autoescape=select_autoescape(["html", "xml", "svg"]), **common)
    # Markdown is escaped by ``finalize`` (every printed value), not by HTML autoescaping.
    markdown = Environment(autoescape=False, finalize=_md_finalize, keep_trailing_newline=True, **common)  # noqa: S701
    for env in (html, markdown):
        env.globals.update(site=site, markdown_path=markdown_path, http_url=http_url)
        env.filters.update(number=_number, day=_day, plural=_plural)

    def md_link(text: object, target: str) -> Markup:
        url = site.url(target) if target.startswith("/") else target
        return Markup(f"[{md_escape(text)}](<{_md_url(url)}>)")  # noqa: S704 - text escaped above

    def md_url(target: str) -> Markup:
        url = site.url(target) if target.startswith("/") else target
        return Markup(f"<{_md_url(url)}>")  # noqa: S704 - percent-encoded above

    # ``nl`` ends a line whose last tag is a block tag (``trim_blocks`` would swallow a literal newline).
    markdown.globals.update(link=md_link, url=md_url, code=md_code, nl=Markup("\n"))
    return html, markdown


# -- tokens ------------------------------------------------------------------------------------


def count_tokens(text: str) -> int | None:
    """Tokens in ``text`` (cl100k_base), or None when the tokenizer cannot be loaded here."""
    try:
        return tokens.count_tokens(text)
    except (OSError, ValueError, tokens.TokenizerUnavailable):
        return None


# -- the cache ---------------------------------------------------------------------------------


class PageCache:
    """A thread-safe LRU of rendered pages that expire ``ttl`` seconds after rendering (by ``clock``)."""

    def __init__(self, ttl: float, entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.entries = entries
        self.clock = clock
        self._items: OrderedDict[Hashable, tuple[float, Rendered]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.ttl > 0 and self.entries > 0

    def get(self, key: Hashable) -> Rendered | None:
        if not self.enabled:
            return None
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            expires, rendered = found
            if expires < self.clock():
                del self._items[key]
                return None
            self._items.move_to_end(key)
            return rendered

    def put(self, key: Hashable, rendered: Rendered) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._items[key] = (self.clock() + self.ttl, rendered)
            self._items.move_to_end(key)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


# -- pages -------------------------------------------------------------------------------------


def request_format(request: Request[Any, Any, Any]) -> tuple[Format, bool]:
    """The representation the request asks for, and whether it used the ``.md`` suffix."""
    suffix = bool(request.scope.get("state", {}).get(MD_SUFFIX_FLAG))
    return choose(request.method, request.headers.get("accept"), suffix), suffix


class Pages:
    """Renders views in either format, answers redirects, and caches both.

    Page handlers are ``async`` and call :meth:`serve`: a cached page is answered on the event loop
    without touching the catalogue; otherwise the view is built in a worker thread with a catalogue
    session of its own, closed in that thread as soon as the view is built, so its connection is
    back in the pool before rendering starts (a request never holds a connection while it waits for
    the event loop)."""

    def __init__(
        self, site: Site, html: Environment, markdown: Environment, cache: PageCache, settings: Settings
    ) -> None:
        self.site = site
        self.html = html
        self.markdown = markdown
        self.cache = cache
        self.settings = settings

    async def serve(self, request: Request[Any, Any, Any], build: Builder) -> ASGIResponse:
        """The page for ``request``: from the cache, or built by ``build(session)`` (which may raise
        the HTTP errors :mod:`app.errors` translates)."""
        fmt, suffix = request_format(request)
        sessions = request.app.state.services.sessions
        if (personal := page_context(request)) is not None:
            # Signed in: built for this person, never from or into the shared cache.
            rendered, _ = await anyio.to_thread.run_sync(
                self._produce, sessions, build, fmt, suffix, personal
            )
            return rendered.asgi()
        key = (fmt, suffix, request.scope["path"], request.scope.get("query_string", b""))
        if (hit := self.cache.get(key)) is not None:
            return hit.asgi()
        rendered, keep = await anyio.to_thread.run_sync(self._produce, sessions, build, fmt, suffix, None)
        if keep:
            self.cache.put(key, rendered)
        return rendered.asgi()

    async def serve_with(
        self,
        request: Request[Any, Any, Any],
        build: Callable[[], View | Redirect],
        run: Callable[[Callable[[], tuple[Rendered, bool]]], Awaitable[tuple[Rendered, bool]]],
    ) -> ASGIResponse:
        """:meth:`serve` for a page that brings its own data (``build`` takes no session) and is
        built where ``run`` puts it (search: its :class:`app.admission.WorkGate`); a page in the
        cache is answered on the event loop without it."""
        fmt, suffix = request_format(request)
        if (personal := page_context(request)) is not None:
            # Signed in: built for this person (still through ``run``), never from or into the cache.
            rendered, _ = await run(lambda: self._finish(build(), fmt, suffix, personal))
            return rendered.asgi()
        key = (fmt, suffix, request.scope["path"], request.scope.get("query_string", b""))
        if (hit := self.cache.get(key)) is not None:
            return hit.asgi()
        rendered, keep = await run(lambda: self._finish(build(), fmt, suffix))
        if keep:
            self.cache.put(key, rendered)
        return rendered.asgi()

    def _produce(
        self,
        sessions: Callable[[], Session],
        build: Builder,
        fmt: Format,
        suffix: bool,
        personal: dict[str, Any] | None,
    ) -> tuple[Rendered, bool]:
        with sessions() as session:
            outcome = build(session)
        return self._finish(outcome, fmt, suffix, personal)

    def _finish(
        self, outcome: View | Redirect, fmt: Format, suffix: bool, personal: dict[str, Any] | None = None
    ) -> tuple[Rendered, bool]:
        """The rendered answer, and whether it may be cached (never when ``personal``)."""
        if isinstance(outcome, Redirect):
            return self.redirect(outcome, fmt, suffix), personal is None
        rendered = self.render(outcome, fmt, personal)
        return rendered, personal is None and rendered.status < 400 and outcome.cacheable

    async def document(
        self, request: Request[Any, Any, Any], build: Callable[[Session], Rendered]
    ) -> ASGIResponse:
        """A non-page document (feed, sitemap, llms.txt), cached like pages."""
        key = ("document", request.scope["path"], request.scope.get("query_string", b""))
        if (hit := self.cache.get(key)) is None:
            sessions = request.app.state.services.sessions
            hit = await anyio.to_thread.run_sync(_with_session, sessions, build)
            if hit.status < 400:
                self.cache.put(key, hit)
        return hit.asgi()

    def redirect(self, redirect: Redirect, fmt: Format, suffix: bool) -> Rendered:
        target = markdown_path(redirect.path) if suffix else redirect.path
        if fmt == "markdown":
            body, media_type = f"Moved permanently to <{self.site.url(target)}>.\n", MARKDOWN_MEDIA_TYPE
        else:
            href = escape(target)
            body, media_type = (
                f'<!doctype html><title>Moved</title><a href="{href}">{href}</a>\n',
                HTML_MEDIA_TYPE,
            )
        return Rendered(redirect.status, body.encode(), media_type, (("location", header_url(target)),))

    def _context(self, view: View, personal: dict[str, Any] | None) -> dict[str, Any]:
        return {
            **ANONYMOUS,
            **(personal or {}),
            **view.context,
            "view": view,
            "canonical_url": self.site.url(view.path),
            "markdown_url": markdown_path(view.path),
            "json_ld": graph(self.site, [("wovepaper", "/"), *view.crumbs], view.json_ld),
        }

    def markdown_text(self, view: View, personal: dict[str, Any] | None = None) -> str:
        """The page as markdown (what :meth:`render` answers, without the token count; MCP tools)."""
        text = self.markdown.get_template(f"{view.template}.md").render(self._context(view, personal))
        return _BLANK_RUNS.sub("\n\n", text).strip() + "\n"  # templates may leave extra blank lines

    def render(self, view: View, fmt: Format, personal: dict[str, Any] | None = None) -> Rendered:
        """``personal``: the requester's ``viewer`` and ``csrf_token`` (see
        :func:`app.auth.wiring.page_context`); such a page is marked ``private, no-store``."""
        if fmt == "markdown":
            text = self.markdown_text(view, personal)
            headers: tuple[tuple[str, str], ...] = ()
            if (tokens := count_tokens(text)) is not None:
                headers = (("x-markdown-tokens", str(tokens)),)
            return Rendered(view.status, text.encode(), MARKDOWN_MEDIA_TYPE, headers + _privacy(personal))
        context = self._context(view, personal)
        text = self.html.get_template(f"{view.template}.html").render(context)
        link = f'<{header_url(context["markdown_url"])}>; rel="alternate"; type="text/markdown"'
        return Rendered(view.status, text.encode(), HTML_MEDIA_TYPE, (("link", link), *_privacy(personal)))


# What templates see of the requester on an anonymous page (``base.html`` shows "Sign in").
ANONYMOUS: dict[str, Any] = {"viewer": None, "csrf_token": None}


def _privacy(personal: dict[str, Any] | None) -> tuple[tuple[str, str], ...]:
    return () if personal is None else (("cache-control", "private, no-store"),)


def _with_session(sessions: Callable[[], Session], build: Callable[[Session], Rendered]) -> Rendered:
    with sessions() as session:
        return build(session)


def provide_pages(state: State) -> Pages:
    pages: Pages = state.pages
    return pages


# What handlers declare: ``pages: AppPages``.
AppPages = NamedDependency[Pages]


def query_string(**params: object) -> str:
    """``?q=x&page=2`` from the parameters that differ from their defaults (None, "", page 1)."""
    kept = {k: v for k, v in params.items() if v is not None and v != "" and not (k == "page" and v == 1)}
    return f"?{urlencode(kept)}" if kept else ""
