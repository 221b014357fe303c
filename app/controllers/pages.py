"""The site's own pages: About, how papers are attributed to researchers, Contact, Privacy and Developers.

Their prose is written once, as markdown templates in ``templates/content/``; the markdown answer
is that text and the HTML page is the same text rendered by markdown-it (raw HTML disabled). The
Developers page's route table comes from :data:`ROUTES`, filtered to the routes this app serves, and a
docs test checks that every public route of the app is in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Litestar, Request, get
from markdown_it import MarkdownIt
from markupsafe import Markup

from app.asgi import PAGE_OPT
from app.rendering import AppPages, PageAnswer, Pages, View


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


_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")

# Where the researcher pages explain how their papers were attributed to them.
ATTRIBUTION_PATH = "/about/researchers"
# name (the path without its slash, and the template under content/) → title, description
_PAGES = {
    "about": ("About", "What wovepaper is and where its data comes from."),
    "about/researchers": (
        "How papers are attributed to researchers",
        "Which evidence joins an author on a paper to a researcher profile, and which keeps people "
        "of the same name apart.",
    ),
    "contact": ("Contact", "Who runs this installation and where corrections belong."),
    "privacy": ("Privacy", "What is stored about visitors: no cookies for browsing, no trackers."),
    "developers": (
        "Developers",
        "URL patterns, the JSON API, the MCP server, llms.txt, markdown negotiation, sitemap and RSS.",
    ),
}


def prose_view(pages: Pages, name: str, routes: list[RouteDoc]) -> View:
    title, description = _PAGES[name]
    text = pages.markdown.get_template(f"content/{name}.md").render(routes=routes)
    return View(
        template="prose",
        title=title,
        description=description,
        path=f"/{name}",
        context={"body": Markup(text), "body_html": Markup(_MARKDOWN.render(text))},  # noqa: S704 - html disabled
        crumbs=[*([("About", "/about")] if name.startswith("about/") else []), (title, f"/{name}")],
    )


async def _prose(request: Request[Any, Any, Any], pages: Pages, name: str) -> PageAnswer:
    return await pages.serve(request, lambda _db: prose_view(pages, name, served_routes(request.app)))


@get("/about", include_in_schema=False, opt={PAGE_OPT: True})
async def about(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "about")


@get(ATTRIBUTION_PATH, include_in_schema=False, opt={PAGE_OPT: True})
async def about_researchers(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "about/researchers")


@get("/contact", include_in_schema=False, opt={PAGE_OPT: True})
async def contact(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "contact")


@get("/privacy", include_in_schema=False, opt={PAGE_OPT: True})
async def privacy(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "privacy")


@get("/developers", include_in_schema=False, opt={PAGE_OPT: True})
async def developers(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "developers")
