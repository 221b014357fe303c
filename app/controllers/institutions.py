"""Institution pages: the list ``/institutions`` and ``/institutions/<id>-<name>``.

Four spellings reach the canonical page with one 301: the internal id (with or without a name),
``ror:<id>``, a bare ROR id (``00013q465``) and a name, alias, acronym or label. Resolution is the
enrichment's (:mod:`catalog.institutions`), so a page finds an institution exactly as affiliation
matching does.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from sqlalchemy.orm import Session

from app.asgi import PAGE_OPT
from app.controllers.listing import name_listing_view
from app.params import InstitutionQuery, PageNumber
from app.rendering import AppPages, PageAnswer, Pages, Redirect, View, query_string
from app.structured_data import organization
from catalog.institutions import (
    InstitutionSummary,
    institution_papers,
    institution_researchers,
    resolve_institution,
    ror_id_of,
)
from catalog.queries import institution_detail, list_institutions
from catalog.row_ids import looks_like_row_id


def resolve(db: Session, ident: str) -> InstitutionSummary:
    """The institution ``ident`` names (see :func:`catalog.institutions.find_institutions`: among
    namesakes the display name, then active records, then most papers here win); 404 otherwise."""
    text = ident[4:] if ident[:4].lower() == "ror:" else ident
    found = resolve_institution(db, text)
    if found is not None:
        return found
    if ror_id := ror_id_of(text):
        raise NotFoundException(detail=f"No institution with ROR id {ror_id} is in this archive.")
    if looks_like_row_id(head := text.partition("-")[0]):
        raise NotFoundException(detail=f"There is no institution with id {head}.")
    raise NotFoundException(
        detail=f"No institution is called “{ident}”. Institution addresses look like "
        "/institutions/<id>-<name>, /institutions/ror:<ROR id> or /institutions/<name>."
    )


def institution_view(
    db: Session, pages: Pages, ident: str, requested: str | None, page: int = 1
) -> View | Redirect:
    """The institution page for ``ident``; a Redirect when ``requested`` is another spelling of its
    address (None: no address was requested, as for an MCP tool)."""
    found = resolve(db, ident)
    if requested is not None and requested != found.path:
        return Redirect(found.path + query_string(page=page))
    detail = institution_detail(db, found.id)
    if detail is None:  # deleted between the two statements
        raise NotFoundException(detail=f"There is no institution with id {found.id}.")
    listing = institution_papers(db, found.id, page=page, size=pages.settings.server.page_size)
    if page > listing.pages:
        raise NotFoundException(detail=f"There is no page {page}; this list has {listing.pages}.")
    people = institution_researchers(db, found.id, limit=30)
    where = f" ({detail.location})" if detail.location else ""
    return View(
        template="institution",
        title=detail.name + (f" — page {page}" if page > 1 else ""),
        description=f"{detail.name}{where}: {detail.papers:,} affiliated papers in this archive.",
        path=detail.path + query_string(page=page),
        context={
            "institution": detail,
            "researchers": people,
            "listing": listing,
            "page_query": lambda n: query_string(page=n),
        },
        crumbs=[("Institutions", "/institutions"), (detail.name, detail.path)],
        json_ld=[organization(pages.site, detail)],
        indexable=bool(detail.papers or people),
    )


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
