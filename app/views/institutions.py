"""The institution page's view (or the redirect to its canonical address), and what an
institution address names (:func:`resolve`, shared with the JSON API)."""

from __future__ import annotations

from litestar.exceptions import NotFoundException
from sqlalchemy.orm import Session

from app.rendering import Pages, Redirect, View, query_string
from app.structured_data import organization
from catalog.institutions import (
    InstitutionDetail,
    institution_papers,
    institution_researchers,
    resolve_institution,
    ror_id_of,
)
from catalog.row_ids import looks_like_row_id
from catalog.urls import row_ident


def resolve(db: Session, ident: str) -> InstitutionDetail:
    """The institution ``ident`` names (see :func:`catalog.institutions.find_institutions`: among
    namesakes the display name, then active records, then most papers here win); 404 otherwise."""
    text = ident[4:] if ident[:4].lower() == "ror:" else ident
    found = resolve_institution(db, text)
    if found is not None:
        return found
    if ror_id := ror_id_of(text):
        raise NotFoundException(detail=f"No institution with ROR id {ror_id} is in this archive.")
    if looks_like_row_id(head := row_ident(text)):
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
    detail = resolve(db, ident)
    if requested is not None and requested != detail.path:
        return Redirect(detail.path + query_string(page=page))
    listing = institution_papers(db, detail.id, page=page, size=pages.settings.server.page_size)
    if page > listing.pages:
        raise NotFoundException(detail=f"There is no page {page}; this list has {listing.pages}.")
    people = institution_researchers(db, detail.id, limit=30)
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
