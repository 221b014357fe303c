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
from typing import Annotated, Any

from litestar import Request, get
from litestar.di import NamedDependency, Provide
from litestar.exceptions import ClientException, ServiceUnavailableException
from litestar.openapi.spec import OpenAPI, Schema
from litestar.openapi.spec import Parameter as OpenAPIParameter
from litestar.params import Parameter, QueryParameter

from app.asgi import PAGE_OPT
from app.documents import SearchAnswer, search_answer
from app.rendering import AppPages, PageAnswer
from app.services import AppServices
from app.views.search import search_request, search_service, search_view
from retrieval.search import Mode, QueryError, SearchRequest, Sort
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


def wanted_search(
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
) -> SearchRequest:
    """The search a request asks for: the page and the API take the same parameters (the schema
    documents them on ``/api/search``, as the handler's own)."""
    return search_request(services, q, category, date_from, date_to, researcher, sort, mode, page, size)


# What the handlers declare: ``wanted: WantedSearch``.
WantedSearch = NamedDependency[SearchRequest]
SEARCH_PARAMETERS = {"wanted": Provide(wanted_search, sync_to_thread=False)}


@get("/search", include_in_schema=False, opt={PAGE_OPT: True}, dependencies=SEARCH_PARAMETERS)
async def search_page(
    request: Request[Any, Any, Any],
    pages: AppPages,
    services: AppServices,
    wanted: WantedSearch,
    debug: Debug = False,
) -> PageAnswer:
    show_debug = debug and services.settings.debug_views

    return await pages.serve_with(
        request, lambda: search_view(services, wanted, show_debug), services.search_gate.run
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
    dependencies=SEARCH_PARAMETERS,
)
async def search_api(pages: AppPages, services: AppServices, wanted: WantedSearch) -> SearchAnswer:
    try:
        results = await services.search_gate.run(search_service(services).search, wanted)
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
