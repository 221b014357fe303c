"""The searchable name lists ``/researchers`` and ``/institutions``: one page shape for both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar.exceptions import NotFoundException
from sqlalchemy.orm import Session

from app.rendering import View, query_string
from catalog.listing import Page


def name_listing_view(
    db: Session,
    *,
    lister: Callable[..., Page[Any]],
    noun: str,
    path: str,
    description: str,
    order: str,
    q: str | None,
    page: int,
    size: int,
) -> View:
    """``noun`` titles the page ("Researchers"); ``description`` follows the count ("researchers
    with papers in this archive"); ``order`` ends the description ("most papers first")."""
    query = (q or "").strip() or None
    listing = lister(db, query=query, page=page, size=size)
    if page > listing.pages:
        raise NotFoundException(detail=f"There is no page {page}; the list has {listing.pages}.")
    matching = f" matching “{query}”" if query else ""
    return View(
        template=path.strip("/"),
        title=noun + matching + (f" — page {page}" if page > 1 else ""),
        description=f"{listing.total:,} {description}{matching}, {order}.",
        path=path + query_string(q=query, page=page),
        context={"listing": listing, "q": query, "page_query": lambda n: query_string(q=query, page=n)},
        crumbs=[(noun, path)],
        indexable=query is None,
    )
