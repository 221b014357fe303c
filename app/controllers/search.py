"""Search: the ``/search`` page (HTML or markdown, no sign-in) and ``/api/search`` (JSON).

Both call :class:`retrieval.search.SearchService` through the search gate (:mod:`app.admission`):
at most ``WOVEPAPER_SEARCH_CONCURRENCY`` searches run at once, ``WOVEPAPER_SEARCH_QUEUE`` more
wait, and the rest get a 503 with ``Retry-After`` (a cached search page skips the gate). A query
that cannot run (too long, a page size over the limit) gets a 400 with a sentence saying what to
change; parameters the framework cannot parse (``page=abc``, ``from=yesterday``, ``sort=oldest``)
get a 400 naming the parameter; a query that finds nothing (an empty date range included) is an
ordinary empty result. With the debug views on (``WOVEPAPER_DEBUG_VIEWS``, on in development)
``?debug=1`` shows how each hit was ranked: its lexical, dense and fused ranks and the chunks.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Request, get
from litestar.exceptions import ClientException, ServiceUnavailableException
from litestar.openapi.spec import OpenAPI, Schema
from litestar.openapi.spec import Parameter as OpenAPIParameter
from litestar.params import Parameter, QueryParameter
from markupsafe import Markup, escape

from app.asgi import PAGE_OPT
from app.controllers import ingest_status
from app.rendering import AppPages, PageAnswer, View, markdown_path, md_escape, query_string
from app.services import AppServices, Services
from catalog.queries import paper_path, researcher_path
from catalog.search_queries import SearchFilters
from retrieval.search import (
    MODES,
    SORTS,
    Mode,
    QueryError,
    SearchRequest,
    SearchResults,
    SearchService,
    Snippet,
    Sort,
)
from settings import Settings

# The query length and page size limits are settings: the framework checks the widest value a
# setting may take, the service the configured one, and :func:`document_limits` writes the
# configured one into the OpenAPI schema.
Query = Annotated[
    str | None, Parameter(description="What to look for: words, a phrase or a question.", max_length=10_000)
]
CategoryParam = Annotated[
    str | None,
    Parameter(
        description="Only papers in this arXiv category (`cs.LG`) or archive (`cs`).",
        max_length=32,
        pattern=r"^[A-Za-z-]+(\.[A-Za-z-]+)?$",
    ),
]
DateFrom = Annotated[
    dt.date | None,
    QueryParameter(
        name="from", description="Only papers active (announced or updated) on or after, YYYY-MM-DD."
    ),
]
DateTo = Annotated[
    dt.date | None, QueryParameter(name="to", description="Only papers active on or before, YYYY-MM-DD.")
]
Debug = Annotated[bool, QueryParameter(description="Development only: show how each hit was ranked.")]
ResearcherParam = Annotated[
    int | None, Parameter(ge=1, le=2_147_483_647, description="Only papers by this researcher id.")
]
SortParam = Annotated[Sort, Parameter(description="`relevance` (default) or `newest`.")]
ModeParam = Annotated[
    Mode, Parameter(description="`hybrid` (default), `bm25` (lexical only) or `dense` (embedding only).")
]
PageParam = Annotated[int, Parameter(ge=1, le=10_000, description="1-based page number.")]
SizeParam = Annotated[int | None, Parameter(ge=1, le=200, description="Results per page.")]

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


def _service(services: Services) -> SearchService:
    if services.search is None:
        raise ServiceUnavailableException(detail="Search is not available on this server right now.")
    return services.search


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
    service = _service(services)
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
            indexing = ingest_status.summary(db, services)
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
            "paper_path": lambda p: paper_path(p.arxiv_id, p.title),
            "researcher_path": researcher_path,
        },
        crumbs=[("Search", "/search")],
        indexable=False,
        status=status,
        cacheable=not show_debug,
    )


@get("/search", include_in_schema=False, opt={PAGE_OPT: True})
async def search_page(
    request: Request[Any, Any, Any],
    pages: AppPages,
    services: AppServices,
    q: Query = None,
    category: CategoryParam = None,
    date_from: DateFrom = None,
    date_to: DateTo = None,
    researcher: ResearcherParam = None,
    sort: SortParam = "relevance",
    mode: ModeParam = "hybrid",
    page: PageParam = 1,
    size: SizeParam = None,
    debug: Debug = False,
) -> PageAnswer:
    wanted = search_request(services, q, category, date_from, date_to, researcher, sort, mode, page, size)
    show_debug = debug and services.settings.debug_views

    return await pages.serve_with(
        request, lambda: search_view(services, wanted, show_debug), services.search_gate.run
    )


# -- JSON ------------------------------------------------------------------------------------------


@dataclass
class SearchAuthor:
    name: str
    researcher_id: int | None
    url: str | None


@dataclass
class SearchSnippet:
    text: str
    highlights: list[list[int]]  # [start, end) character offsets of matched query words in `text`
    kind: str  # "abstract" or "body" (full text)
    page_start: int | None
    page_end: int | None
    section: str | None


@dataclass
class SearchChunkHit:
    chunk_id: str
    kind: str
    page_start: int | None
    page_end: int | None
    section: str | None
    lexical_rank: int | None
    dense_rank: int | None


@dataclass
class SearchItem:
    rank: int
    arxiv_id: str
    title: str
    authors: list[SearchAuthor]
    categories: list[str]
    primary_category: str | None
    activity_on: dt.date | None
    url: str
    markdown_url: str
    score: float | None
    fused_rank: int | None
    lexical_rank: int | None
    dense_rank: int | None
    snippet: SearchSnippet | None
    pages: list[int]
    chunks: list[SearchChunkHit]


@dataclass
class SearchFacet:
    category: str
    count: int


@dataclass
class SearchAnswer:
    query: str
    mode: str
    sort: str
    category: str | None
    date_from: dt.date | None
    date_to: dt.date | None
    researcher_id: int | None
    page: int
    size: int
    total: int
    pages: int
    capped: bool
    items: list[SearchItem]
    facets: list[SearchFacet]
    terms: list[str]
    took_ms: float
    notes: list[str]


def search_answer(results: SearchResults, site_url: Any) -> SearchAnswer:
    req = results.request
    items = []
    for hit in results.hits:
        p = hit.paper
        path = paper_path(p.arxiv_id, p.title)
        s = hit.snippet
        items.append(
            SearchItem(
                rank=hit.rank,
                arxiv_id=p.arxiv_id,
                title=p.title,
                authors=[
                    SearchAuthor(a.name, a.researcher_id, site_url(a.path) if a.path else None)
                    for a in p.authors
                ],
                categories=p.categories,
                primary_category=p.primary_category,
                activity_on=p.activity_on,
                url=site_url(path),
                markdown_url=site_url(markdown_path(path)),
                score=round(hit.score, 6) if hit.score is not None else None,
                fused_rank=hit.fused_rank,
                lexical_rank=hit.lexical_rank,
                dense_rank=hit.dense_rank,
                snippet=SearchSnippet(
                    s.text, [list(h) for h in s.highlights], s.kind, s.page_start, s.page_end, s.section
                )
                if s
                else None,
                pages=hit.pages,
                chunks=[
                    SearchChunkHit(
                        c.chunk_id, c.kind, c.page_start, c.page_end, c.section, c.lexical_rank, c.dense_rank
                    )
                    for c in hit.chunks[:10]
                ],
            )
        )
    f = req.filters
    return SearchAnswer(
        query=req.q,
        mode=req.mode,
        sort=req.sort,
        category=f.category,
        date_from=f.date_from,
        date_to=f.date_to,
        researcher_id=f.researcher_id,
        page=req.page,
        size=req.size,
        total=results.total,
        pages=results.pages,
        capped=results.capped,
        items=items,
        facets=[SearchFacet(c, n) for c, n in results.facets],
        terms=results.terms,
        took_ms=round(results.took_ms, 2),
        notes=results.notes,
    )


@get(
    "/api/search",
    tags=["search"],
    summary="Search papers (hybrid lexical + semantic)",
    description="Papers ranked for a query by BM25 and embeddings fused, with filters, sorting and "
    "pagination. Each item carries its best-matching passage (with page numbers for full text) and "
    "the chunk hits behind it. Without `q` the papers the filters allow (all papers without one) come "
    "newest first. An unusable query or parameter gets a 400 saying what to change; when the server "
    "is running as many searches as it can, a 503 with `Retry-After`.",
    raises=[ServiceUnavailableException],  # 400 (a parameter to change) is documented by Litestar
)
async def search_api(
    pages: AppPages,
    services: AppServices,
    q: Query = None,
    category: CategoryParam = None,
    date_from: DateFrom = None,
    date_to: DateTo = None,
    researcher: ResearcherParam = None,
    sort: SortParam = "relevance",
    mode: ModeParam = "hybrid",
    page: PageParam = 1,
    size: SizeParam = None,
) -> SearchAnswer:
    wanted = search_request(services, q, category, date_from, date_to, researcher, sort, mode, page, size)
    try:
        results = await services.search_gate.run(_service(services).search, wanted)
    except QueryError as exc:
        raise ClientException(detail=str(exc)) from exc
    return search_answer(results, pages.site.url)


def document_limits(schema: OpenAPI, settings: Settings) -> None:
    """Write this installation's query-length and page-size limits into the OpenAPI schema, so it
    states what the service enforces (called once, before the schema is first served)."""
    operation = (schema.paths or {})["/api/search"].get
    for parameter in (operation.parameters if operation else None) or []:
        if isinstance(parameter, OpenAPIParameter) and isinstance(parameter.schema, Schema):
            if parameter.name == "q":
                parameter.schema.max_length = settings.search.search_max_query_chars
            elif parameter.name == "size":
                parameter.schema.maximum = settings.search.search_max_page_size


ROUTE_HANDLERS = [search_page, search_api]
