"""Institution pages: the list ``/institutions`` and ``/institutions/<id>-<name>``.

Four spellings reach the canonical page with one 301: the internal id (with or without a name),
``ror:<id>``, a bare ROR id (``00013q465``) and a name, alias or acronym. A name shared by several
institutions goes to the list filtered by that name instead (302: the answer may change).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from litestar import Request, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, Parameter
from sqlalchemy.orm import Session

from app.asgi import PAGE_OPT
from app.controllers.papers import PageNumber
from app.rendering import AppPages, PageAnswer, Redirect, View, query_string
from app.structured_data import organization
from catalog.queries import (
    InstitutionRef,
    institution_by_id,
    institution_by_ror,
    institution_detail,
    institution_papers,
    institutions_named,
    list_institutions,
)

_INTERNAL = re.compile(r"(?P<id>\d{1,18})(?:-(?P<slug>.*))?")
# ROR ids: "0", six characters of Crockford base32 (no i, l, o, u), two check digits.
ROR_ID = re.compile(r"(?:ror:)?(?P<ror>0[0-9a-hj-km-np-tv-z]{6}[0-9]{2})", re.IGNORECASE)
NameQuery = Annotated[str | None, Parameter(max_length=200, description="Part of a name, alias or acronym")]


def resolve_institution(db: Session, ident: str) -> InstitutionRef | Redirect:
    """The institution ``ident`` names, or a redirect to the list when a name is ambiguous."""
    if match := _INTERNAL.fullmatch(ident):
        found = institution_by_id(db, int(match["id"]))
        if found is None:
            raise NotFoundException(detail=f"There is no institution with id {match['id']}.")
        return found
    if match := ROR_ID.fullmatch(ident):
        found = institution_by_ror(db, match["ror"])
        if found is None:
            raise NotFoundException(
                detail=f"No institution with ROR id {match['ror'].lower()} is in this archive."
            )
        return found
    named = institutions_named(db, ident.replace("-", " "))
    if not named:
        raise NotFoundException(
            detail=f"No institution is called “{ident}”. Institution addresses look like "
            "/institutions/<id>-<name>, /institutions/ror:<ROR id> or /institutions/<name>."
        )
    if len(named) > 1:
        return Redirect("/institutions" + query_string(q=ident.replace("-", " ")), status=302)
    return named[0]


@get("/institutions/{ident:str}", include_in_schema=False, opt={PAGE_OPT: True})
async def institution(
    request: Request[Any, Any, Any],
    pages: AppPages,
    ident: FromPath[str],
    page: PageNumber = 1,
) -> PageAnswer:
    requested = request.scope["path"]

    def build(db: Session) -> View | Redirect:
        found = resolve_institution(db, ident)
        if isinstance(found, Redirect):
            return found
        if requested != found.path:
            return Redirect(found.path + query_string(page=page))
        detail = institution_detail(db, found.id)
        if detail is None:  # deleted between the two statements
            raise NotFoundException(detail=f"There is no institution with id {found.id}.")
        listing = institution_papers(db, found.id, page=page, size=pages.settings.server.page_size)
        if page > listing.pages:
            raise NotFoundException(detail=f"There is no page {page}; this list has {listing.pages}.")
        where = f" ({detail.location})" if detail.location else ""
        return View(
            template="institution",
            title=detail.name + (f" — page {page}" if page > 1 else ""),
            description=f"{detail.name}{where}: {detail.papers:,} affiliated papers in this archive.",
            path=detail.path + query_string(page=page),
            context={"institution": detail, "listing": listing, "page_query": lambda n: query_string(page=n)},
            crumbs=[("Institutions", "/institutions"), (detail.name, detail.path)],
            json_ld=[organization(pages.site, detail)],
            indexable=bool(detail.papers or detail.researchers),
        )

    return await pages.serve(request, build)


@get("/institutions", include_in_schema=False, opt={PAGE_OPT: True})
async def institutions(
    request: Request[Any, Any, Any],
    pages: AppPages,
    q: NameQuery = None,
    page: PageNumber = 1,
) -> PageAnswer:
    def build(db: Session) -> View:
        query = (q or "").strip() or None
        listing = list_institutions(db, query=query, page=page, size=pages.settings.server.page_size)
        if page > listing.pages:
            raise NotFoundException(detail=f"There is no page {page}; the list has {listing.pages}.")
        title = f"Institutions matching “{query}”" if query else "Institutions"
        return View(
            template="institutions",
            title=title + (f" — page {page}" if page > 1 else ""),
            description=f"{listing.total:,} institutions"
            + (f" matching “{query}”" if query else "")
            + ", most affiliated papers first.",
            path="/institutions" + query_string(q=query, page=page),
            context={"listing": listing, "q": query, "page_query": lambda n: query_string(q=query, page=n)},
            crumbs=[("Institutions", "/institutions")],
            indexable=query is None,
        )

    return await pages.serve(request, build)
