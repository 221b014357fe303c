"""The search page's view, and the search request the page, the JSON API and the MCP tool build from
their parameters."""

from __future__ import annotations

import datetime as dt
import re

from litestar.exceptions import ServiceUnavailableException
from markupsafe import Markup, escape

from app.indexing_status import summary
from app.rendering import View, md_escape, query_string
from app.search_processes import SearchProcesses
from app.services import Services
from catalog.search_queries import SearchFilters
from catalog.urls import paper_path, reader_path, researcher_path
from retrieval.search import (
    MODES,
    SORTS,
    Mode,
    QueryError,
    SearchHit,
    SearchRequest,
    SearchResults,
    SearchService,
    Snippet,
    Sort,
)

EXAMPLES = (
    "adaptive estimates of lower-order moments for stochastic optimization",
    "retrieval-augmented generation for knowledge-intensive tasks",
    "attention is all you need",
    "scaling laws for language models",
)


def search_request(
    services: Services,
    q: str | None,
    category: str | None,
    date_from: dt.date | None,
    date_to: dt.date | None,
    researcher: int | None,
    sort: Sort,
    mode: Mode,
    page: int,
    size: int | None,
) -> SearchRequest:
    return SearchRequest(
        q=q or "",
        filters=SearchFilters(
            category=category or None, date_from=date_from, date_to=date_to, researcher_id=researcher
        ),
        sort=sort,
        page=page,
        size=size or services.settings.search.search_page_size,
        mode=mode,
    )


def search_service(services: Services) -> SearchService | SearchProcesses:
    """What searches for the page, the API and MCP: the search processes when they run."""
    if services.search is None:
        raise ServiceUnavailableException(detail="Search is not available on this server right now.")
    return services.search_processes or services.search


def _params(request: SearchRequest, **change: object) -> dict[str, object]:
    f = request.filters
    params: dict[str, object] = {
        "q": request.q,
        "category": f.category,
        "from": f.date_from.isoformat() if f.date_from else None,
        "to": f.date_to.isoformat() if f.date_to else None,
        "researcher": f.researcher_id,
        "sort": None if request.sort == "relevance" else request.sort,
        "mode": None if request.mode == "hybrid" else request.mode,
        "page": request.page,
    }
    params.update(change)
    return params


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")


def snippet_quote(snippet: Snippet) -> str:
    """The snippet's sentence that holds its first matched word (what the page reader highlights),
    without the ellipses that mark a cut; at most 300 characters."""
    text, at = snippet.text, snippet.highlights[0][0] if snippet.highlights else 0
    start = 0
    for sentence in _SENTENCE_BREAK.split(text):
        begin = text.find(sentence, start)
        if begin <= at < begin + len(sentence) or begin > at:
            text = sentence
            break
        start = begin + len(sentence)
    text = text.strip().strip("…").strip()
    return text if len(text) <= 300 else text[:301].rsplit(" ", 1)[0]


def snippet_reader(hit: SearchHit) -> str | None:
    """Our page reader at a full-text snippet's page, its sentence highlighted; None otherwise."""
    snippet = hit.snippet
    if snippet is None or snippet.kind != "body" or not snippet.page_start:
        return None
    return reader_path(hit.paper.arxiv_id, snippet.page_start, snippet_quote(snippet))


def highlight_html(snippet: Snippet) -> Markup:
    """The snippet, escaped, with the matched query words in ``<mark>``."""
    out, last = [], 0
    for start, end in snippet.highlights:
        out += [str(escape(snippet.text[last:start])), f"<mark>{escape(snippet.text[start:end])}</mark>"]
        last = end
    out.append(str(escape(snippet.text[last:])))
    return Markup("".join(out))  # noqa: S704 - every piece was escaped above


def _md_piece(text: str) -> str:
    """``md_escape`` trims a value's edge spaces; a piece between two matches needs its own."""
    if not text.strip():
        return " " if text else ""
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return lead + md_escape(text) + trail


def highlight_md(snippet: Snippet) -> Markup:
    """The snippet as markdown, the matched query words in bold."""
    out, last = [], 0
    for start, end in snippet.highlights:
        out += [_md_piece(snippet.text[last:start]), f"**{md_escape(snippet.text[start:end])}**"]
        last = end
    out.append(_md_piece(snippet.text[last:]))
    return Markup("".join(out))  # noqa: S704 - every piece was escaped by md_escape


def search_view(services: Services, wanted: SearchRequest, show_debug: bool = False) -> View:
    """The search page for ``wanted`` (blocking: run it through the search gate). A query that
    cannot run is the page with its error and status 400."""
    service = search_service(services)
    results: SearchResults | None = None
    error: str | None = None
    status = 200
    req = wanted
    try:
        req = service.validate(wanted)
        if req.q or req.filters.active:  # otherwise the landing page: examples, no results
            results = service.search(req)
    except QueryError as exc:
        error, status = str(exc), 400
    title = f"Search: {req.q}" if req.q else "Search"
    if results and results.researcher:
        title += f" — papers by {results.researcher}"
    if results and req.page > 1:
        title += f" — page {req.page}"
    description = (
        f"{results.total:,} papers for “{req.q}”" if results and req.q else "Search papers in wovepaper."
    )
    indexing = None
    if results is not None and not results.total:  # say so when the index is still filling up
        with services.sessions() as db:
            indexing = summary(db, services)
    return View(
        template="search",
        title=title,
        description=description,
        path="/search" + query_string(**_params(req)),
        context={
            "q": req.q,
            "request": req,
            "results": results,
            "indexing": indexing,
            "error": error,
            "debug": show_debug,
            "development": services.settings.debug_views,
            "examples": EXAMPLES,
            "modes": MODES,
            "sorts": SORTS,
            "search_link": lambda **change: "/search" + query_string(**_params(req, **change)),
            "page_query": lambda n: query_string(**_params(req, page=n)),
            "highlight": highlight_html,
            "highlight_md": highlight_md,
            "snippet_reader": snippet_reader,
            "paper_path": lambda p: paper_path(p.arxiv_id, p.title),
            "researcher_path": researcher_path,
        },
        crumbs=[("Search", "/search")],
        indexable=False,
        status=status,
        cacheable=not show_debug,
    )
