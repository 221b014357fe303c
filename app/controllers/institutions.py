"""Institution pages: the list ``/institutions`` and ``/institutions/<id>-<name>``.

Four spellings reach the canonical page with one 301: the internal id (with or without a name),
``ror:<id>``, a bare ROR id (``00013q465``) and a name, alias, acronym or label. Resolution is the
enrichment's (:mod:`catalog.institutions`), so a page finds an institution exactly as affiliation
matching does.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.params import FromPath
from sqlalchemy.orm import Session

from app.asgi import PAGE_OPT
from app.params import InstitutionQuery, PageNumber
from app.rendering import AppPages, PageAnswer, View
from app.views.institutions import institution_view
from app.views.listing import name_listing_view
from catalog.institutions import list_institutions


@get("/institutions/{ident:str}", include_in_schema=False, opt={PAGE_OPT: True})
async def institution(
    request: Request[Any, Any, Any],
    pages: AppPages,
    ident: FromPath[str],
    page: PageNumber = 1,
) -> PageAnswer:
    requested = request.scope["path"]
    return await pages.serve(request, lambda db: institution_view(db, pages, ident, requested, page))


@get("/institutions", include_in_schema=False, opt={PAGE_OPT: True})
async def institutions(
    request: Request[Any, Any, Any],
    pages: AppPages,
    q: InstitutionQuery = None,
    page: PageNumber = 1,
) -> PageAnswer:
    def build(db: Session) -> View:
        return name_listing_view(
            db,
            lister=list_institutions,
            noun="Institutions",
            path="/institutions",
            description="institutions",
            order="most affiliated papers first",
            q=q,
            page=page,
            size=pages.settings.server.page_size,
        )

    return await pages.serve(request, build)
