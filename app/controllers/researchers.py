"""Researcher pages: the list ``/researchers`` (search by name) and ``/researchers/<id>-<name>``.

Researcher ids are numbers issued by the catalogue (they come from paper pages and search results,
never from names); the id alone or a stale name redirects to the canonical address, keeping the
``category`` filter and page.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.params import FromPath
from sqlalchemy.orm import Session

from app.asgi import PAGE_OPT
from app.auth.requester import requester
from app.params import Category, PageNumber, ResearcherQuery, checked_category
from app.rendering import AppPages, PageAnswer, View
from app.views.listing import name_listing_view
from app.views.researchers import researcher_view
from catalog.researchers import list_researchers


@get("/researchers/{ident:str}", include_in_schema=False, opt={PAGE_OPT: True})
async def researcher(
    request: Request[Any, Any, Any],
    pages: AppPages,
    ident: FromPath[str],
    category: Category = None,
    page: PageNumber = 1,
) -> PageAnswer:
    requested = request.scope["path"]
    checked_category(category)
    actor = requester(request)
    return await pages.serve(
        request, lambda db: researcher_view(db, pages, ident, requested, category, page, actor)
    )


@get("/researchers", include_in_schema=False, opt={PAGE_OPT: True})
async def researchers(
    request: Request[Any, Any, Any],
    pages: AppPages,
    q: ResearcherQuery = None,
    page: PageNumber = 1,
) -> PageAnswer:
    def build(db: Session) -> View:
        return name_listing_view(
            db,
            lister=list_researchers,
            noun="Researchers",
            path="/researchers",
            description="researchers with papers in this archive",
            order="most papers first",
            q=q,
            page=page,
            size=pages.settings.server.page_size,
        )

    return await pages.serve(request, build)
