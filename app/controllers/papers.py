"""Paper pages: ``/papers`` (newest, by category) and ``/papers/<arxiv-id>-<slug>``.

Any spelling of an id reaches the canonical address with one 301: the id alone, a stale or missing
slug, an old-style id with its subject class (``/papers/math.GT/0309136`` → ``/papers/math/0309136-…``).
A version suffix (``2401.01234v2``) keeps its version in the address and shows that version's
details where the catalogue holds them; its canonical link is the unversioned page.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.exceptions import NotFoundException
from sqlalchemy.orm import Session

from app.asgi import PAGE_OPT
from app.params import Category, PageNumber, checked_category
from app.rendering import AppPages, PageAnswer, View, query_string
from app.views.papers import ident_in, paper_view
from catalog.papers import newest_papers


@get(
    ["/papers/{ident:str}", "/papers/{archive:str}/{number:str}"],
    include_in_schema=False,
    opt={PAGE_OPT: True},
)
async def paper(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    ident, path = ident_in(request.path_params), request.scope["path"]
    return await pages.serve(request, lambda db: paper_view(db, pages.site, ident, path))


@get("/papers", include_in_schema=False, opt={PAGE_OPT: True})
async def papers(
    request: Request[Any, Any, Any],
    pages: AppPages,
    category: Category = None,
    page: PageNumber = 1,
) -> PageAnswer:
    checked_category(category)

    def build(db: Session) -> View:
        listing = newest_papers(db, page=page, size=pages.settings.server.page_size, category=category)
        if page > listing.pages:
            raise NotFoundException(detail=f"There is no page {page}; the list has {listing.pages}.")
        title = f"Newest papers in {category}" if category else "Newest papers"
        crumbs = [("Papers", "/papers")]
        if category:
            crumbs.append((category, f"/papers?category={category}"))
        return View(
            template="papers",
            title=title + (f" — page {page}" if page > 1 else ""),
            description=f"{listing.total:,} papers{' in ' + category if category else ''}, newest first.",
            path="/papers" + query_string(category=category, page=page),
            context={
                "listing": listing,
                "category": category,
                "page_query": lambda n: query_string(category=category, page=n),
            },
            crumbs=crumbs,
        )

    return await pages.serve(request, build)
