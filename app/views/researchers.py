"""The researcher page's view (or the redirect to its canonical address)."""

from __future__ import annotations

from litestar.exceptions import NotFoundException
from sqlalchemy.orm import Session

from accounts.queries import is_following
from app.auth.requester import Actor
from app.graphics import network_picture
from app.rendering import Pages, Redirect, View, query_string
from app.structured_data import person
from app.views.prose import ATTRIBUTION_PATH
from catalog.enrichment import surviving_researcher_id
from catalog.researchers import coauthor_network, researcher_papers, researcher_profile, told_apart
from catalog.row_ids import looks_like_row_id, parse_row_id
from catalog.urls import row_ident


def researcher_view(
    db: Session,
    pages: Pages,
    ident: str,
    requested: str | None,
    category: str | None = None,
    page: int = 1,
    actor: Actor | None = None,
) -> View | Redirect:
    """The researcher page for ``ident``; a Redirect when ``requested`` is another spelling of its
    address (None: no address was requested, as for an MCP tool)."""
    head = row_ident(ident)
    researcher_id = parse_row_id(head)
    if researcher_id is None and not looks_like_row_id(head):
        raise NotFoundException(
            detail="Researcher addresses look like /researchers/<id>-<name>, with a numeric id; "
            "ids come from paper pages and search results, not from names."
        )
    profile = researcher_profile(db, researcher_id) if researcher_id else None
    query = query_string(category=category, page=page)
    if profile is None and researcher_id and (survivor := surviving_researcher_id(db, researcher_id)):
        profile = researcher_profile(db, survivor)  # enrichment merged this id into another
    if profile is None:
        raise NotFoundException(detail=f"There is no researcher with id {head}.")
    if requested is not None and requested != profile.path:
        return Redirect(profile.path + query)
    size = pages.settings.server.page_size
    listing = researcher_papers(db, profile.id, page=page, size=size, category=category)
    if page > listing.pages:
        raise NotFoundException(detail=f"There is no page {page}; this list has {listing.pages}.")
    network = coauthor_network(db, profile.id)
    summary = f"{profile.name}: {profile.papers:,} paper{'s' if profile.papers != 1 else ''} in this archive"
    if profile.h_index is not None:
        summary += f" · h-index {profile.h_index}"
    return View(
        template="researcher",
        title=profile.name + (f" — {category}" if category else "") + (f" — page {page}" if page > 1 else ""),
        description=summary + ".",
        # Filtered views point at the researcher's main page; later pages are their own.
        path=profile.path + ("" if category else query_string(page=page)),
        context={
            "profile": profile,
            "listing": listing,
            "category": category,
            "network": network,
            # Each co-author's years, main fields and institution (one batch for the whole list).
            "coauthors": told_apart(db, [n.id for n in network.nodes]) if network else {},
            "same": profile.same_name,
            "attribution_path": ATTRIBUTION_PATH,
            "picture": network_picture(network) if network else None,
            "following": actor is not None and is_following(db, actor.person_id, profile.id),
            "page_query": lambda n: query_string(category=category, page=n),
        },
        crumbs=[("Researchers", "/researchers"), (profile.name, profile.path)],
        json_ld=[person(pages.site, profile)],
        og_type="profile",
        indexable=category is None,
    )
