"""What the app's routes are, as the site documents them: the public route table (:data:`ROUTES`,
shown on the Developers page and in ``llms-full.txt``), the mark of a private route, and where a
request may send the browser back to."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from urllib.parse import urlsplit

from litestar import Litestar, get
from litestar.handlers import BaseRouteHandler
from litestar.typing import FieldDefinition

PRIVATE = {"private": True}  # needs sign-in: not in the public route list


def api_get(tag: str) -> partial[get]:
    """``@get`` for the JSON API's handlers under ``tag`` in the schema: they query the catalogue,
    so Litestar runs them in a worker thread."""
    return partial(get, sync_to_thread=True, tags=[tag])


@dataclass(frozen=True, slots=True)
class RouteDoc:
    path: str  # as in the app's route table, parameters without their types
    description: str  # markdown, written here (trusted)


ROUTES: tuple[RouteDoc, ...] = (
    RouteDoc("/", "Home: search box, newest papers, categories."),
    RouteDoc("/search", "Search papers (hybrid lexical and semantic); `q`, filters and sort."),
    RouteDoc("/papers", "Newest papers; `?category=cs.LG` lists one category, `?page=2` pages."),
    RouteDoc(
        "/papers/{ident}",
        "A paper: `/papers/<arxiv-id>-<title>`. The id alone works and redirects (301), e.g. "
        "`/papers/2401.01234`; a version suffix (`2401.01234v2`) shows that version.",
    ),
    RouteDoc(
        "/papers/{archive}/{number}",
        "Old-style ids: `/papers/astro-ph/9901001`, `/papers/math.GT/0309136` (redirect to the canonical "
        "page).",
    ),
    RouteDoc(
        "/papers/{ident}/pages/{n}",
        "Page n of a paper's PDF, drawn from the file this archive indexed: the page as an image "
        "(`/papers/<arxiv-id>/pages/<n>.png`) with `?quote=` highlighted where it stands, and the "
        "page's text beneath. Without a PDF here it links to arXiv's PDF at that page.",
    ),
    RouteDoc(
        "/papers/{archive}/{number}/pages/{n}",
        "The same page reader for old-style ids: `/papers/hep-th/9901001/pages/1`.",
    ),
    RouteDoc("/researchers", "Researchers, most papers first; `?q=` finds a name."),
    RouteDoc(
        "/researchers/{ident}",
        "A researcher: `/researchers/<id>-<name>`. The id alone works and redirects; ids come from search "
        "results and paper pages, not from names. `?category=cs.LG` filters their papers.",
    ),
    RouteDoc(
        "/institutions", "Institutions, most affiliated papers first; `?q=` finds a name, alias or acronym."
    ),
    RouteDoc(
        "/institutions/{ident}",
        "An institution: `/institutions/<id>-<name>`. An id, a ROR id (`ror:00013q465` or bare) or a name "
        "all resolve to the canonical page.",
    ),
    RouteDoc("/about", "What this is and where the data comes from."),
    RouteDoc("/about/researchers", "How papers are attributed to researchers."),
    RouteDoc("/contact", "Who runs this installation."),
    RouteDoc("/privacy", "What is stored about visitors."),
    RouteDoc("/developers", "This page."),
    RouteDoc("/llms.txt", "The guide for agents (llmstxt.org)."),
    RouteDoc("/llms-full.txt", "The guide for agents with this page and the newest papers."),
    RouteDoc("/robots.txt", "Crawling rules and the sitemap's address."),
    RouteDoc("/sitemap.xml", "Sitemap index."),
    RouteDoc(
        "/sitemaps/{name}",
        "Child sitemaps: `papers-1.xml`, `researchers-1.xml`, `institutions-1.xml`, `pages.xml`.",
    ),
    RouteDoc("/rss/{name}", "RSS 2.0: `latest.xml`, or `<category>.xml` such as `cs.LG.xml`."),
    RouteDoc("/openapi.json", "OpenAPI 3.1 description of the JSON API."),
    RouteDoc(
        "/mcp",
        "MCP over streamable HTTP for agents: search, papers, their pages' text, researchers and "
        "institutions (see *MCP for agents* below).",
    ),
    RouteDoc("/healthz", "Liveness: the process answers (JSON, never waits for the catalogue)."),
    RouteDoc("/readyz", "Readiness: the catalogue, the vector index and Redis answer (JSON; 503 when not)."),
    RouteDoc("/api/papers", "JSON: newest papers; `category`, `page`, `size`."),
    RouteDoc("/api/papers/{arxiv_id}", "JSON: one paper by arXiv id (new style, optional version)."),
    RouteDoc(
        "/api/papers/{archive}/{number}",
        "JSON: one paper by old-style id, e.g. `/api/papers/hep-th/9901001`.",
    ),
    RouteDoc(
        "/api/papers/{arxiv_id}/fulltext",
        "JSON: `GET` whether the paper's full text is held and where getting it has got; `POST` asks "
        "for it (signed in, or a token with the `fulltext` scope): fetched from arXiv and indexed.",
    ),
    RouteDoc("/api/papers/{archive}/{number}/fulltext", "JSON: the same by old-style id."),
    RouteDoc("/api/researchers", "JSON: researchers, most papers first; `q`, `page`, `size`."),
    RouteDoc(
        "/api/researchers/{researcher_id}",
        "JSON: one researcher with positions, fields, same-name and co-authors.",
    ),
    RouteDoc(
        "/api/researchers/{researcher_id}/papers", "JSON: a researcher's papers, newest first; `category`."
    ),
    RouteDoc("/api/institutions", "JSON: institutions, most affiliated papers first; `q`, `page`, `size`."),
    RouteDoc("/api/institutions/{ident}", "JSON: one institution by id, `ror:<id>`, bare ROR id or name."),
    RouteDoc("/api/institutions/{ident}/papers", "JSON: an institution's affiliated papers, newest first."),
    RouteDoc("/api/search", "JSON: search papers; `q` and filters."),
    RouteDoc(
        "/api/ingest/status",
        "JSON: indexing progress (abstracts embedded; PDFs queued, running, done, failed).",
    ),
    RouteDoc(
        "/api/ingest/status/{arxiv_id}", "JSON: one paper's full-text status, with the reason when it failed."
    ),
    RouteDoc("/api/ingest/status/{archive}/{number}", "JSON: the same by old-style id."),
    RouteDoc(
        "/api/chat/status",
        "JSON: the chat's language model: disabled, installing (with progress), starting, ready or down.",
    ),
    RouteDoc(
        "/api/account",
        "JSON: who a request is signed in as, and its scopes; send `Authorization: Bearer <token>` "
        "(tokens are made on the account page).",
    ),
    RouteDoc(
        "/api/chat",
        'POST a question (`{"question", "conversation_id", "papers"}`, a session with '
        "`X-CSRF-Token` or a token with the `chat` scope): the evidence passages first, then an answer "
        "streamed as server-sent events whose citations are checked; `Accept: application/json` or "
        "`text/markdown` for the finished answer.",
    ),
    RouteDoc("/api/chat/conversations", "JSON: your conversations, newest first."),
    RouteDoc(
        "/api/chat/conversations/{ref}",
        'JSON: one of your conversations (`<id>.md`: as markdown); `PATCH` `{"title"}` renames it, '
        "`DELETE` deletes it.",
    ),
    RouteDoc(
        "/signin",
        "Sign in (GitHub, Google, ORCID or the installation's OpenID provider); `?next=` returns there.",
    ),
    RouteDoc("/signin/{provider}", "POST: start signing in with that provider."),
    RouteDoc("/signin/{provider}/callback", "Where the provider sends you back (one address per provider)."),
    RouteDoc("/signin/local", "The one-time sign-in link `make run` prints when no provider is configured."),
    RouteDoc("/signout", "POST: sign out (the session is deleted on the server)."),
    RouteDoc(
        "/feeds/{name}",
        "Your private RSS feed of papers by the researchers you follow (address from your account page).",
    ),
)


def served_routes(app: Litestar) -> list[RouteDoc]:
    """:data:`ROUTES` that ``app`` actually serves (a route another module adds appears once it lands)."""
    paths = {route.path_format for route in app.routes}
    return [r for r in ROUTES if r.path in paths]


def handler_parameters(handler: BaseRouteHandler) -> dict[str, FieldDefinition]:
    """What a handler reads from the request: the parameters it declares and those its dependencies
    declare (the search parameters, :func:`app.controllers.search.wanted_search`), not the
    dependencies themselves."""
    signatures = [
        handler.parsed_fn_signature,
        *(p.parsed_fn_signature for p in handler.resolve_dependencies().values()),
    ]
    return {
        name: field
        for signature in signatures
        for name, field in signature.parameters.items()
        if not field.is_di_field
    }


def safe_next(value: str | None) -> str:
    """``next`` when it is a same-site relative path (``/papers/x?y``), else ``/``. Refuses
    ``https://evil``, ``//evil``, ``/\\evil``, ``javascript:`` and control characters."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")) or len(value) > 1000:
        return "/"
    if any(ord(c) < 0x20 or c == "\\" for c in value):
        return "/"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return "/"
    return value
