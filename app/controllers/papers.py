"""Paper pages: ``/papers`` (newest, by category) and ``/papers/<arxiv-id>-<slug>``.

Any spelling of an id reaches the canonical address with one 301: the id alone, a stale or missing
slug, an old-style id with its subject class (``/papers/math.GT/0309136`` → ``/papers/math/0309136-…``).
A version suffix (``2401.01234v2``) keeps its version in the address and shows that version's
details where the catalogue holds them; its canonical link is the unversioned page.
"""

from __future__ import annotations

import re
from typing import Any

from litestar import Request, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from sqlalchemy.orm import Session

from app.asgi import PAGE_OPT
from app.errors import PaperNotHarvested
from app.params import Category, PageNumber, checked_category
from app.rendering import AppPages, PageAnswer, Redirect, View, query_string
from app.site import Site
from app.structured_data import scholarly_article
from catalog import arxiv_ids
from catalog.queries import newest_papers, paper_detail, paper_path

# The id part of ``/papers/<id>-<slug>``; anything after the first hyphen that follows it is a slug.
_NEW_STYLE = re.compile(r"(?P<id>\d{4}\.\d{4,5}(?:v\d+)?)(?:-(?P<slug>.*))?", re.ASCII | re.DOTALL)
_OLD_STYLE = re.compile(
    r"(?P<id>[A-Za-z]+(?:-[A-Za-z]+)?(?:\.[A-Za-z-]+)?/\d{7}(?:v\d+)?)(?:-(?P<slug>.*))?",
    re.ASCII | re.DOTALL,
)


def parse_paper_ident(ident: str) -> arxiv_ids.ArxivId:
    """The arXiv id at the start of a paper address; 404 with the reason when there is none."""
    match = _NEW_STYLE.fullmatch(ident) or _OLD_STYLE.fullmatch(ident)
    try:
        return arxiv_ids.parse(match["id"] if match else ident)
    except arxiv_ids.InvalidArxivId as exc:
        raise NotFoundException(
            detail=f"{exc}. Paper addresses look like /papers/2401.01234 or /papers/hep-th/9901001."
        ) from exc


def paper_view(db: Session, site: Site, ident: str, requested_path: str | None) -> View | Redirect:
    """The paper page; a Redirect when ``requested_path`` is another spelling of its address (None:
    no address was requested, as for an MCP tool)."""
    arxiv_id = parse_paper_ident(ident)
    paper = paper_detail(db, arxiv_id.canonical)
    if paper is None:
        raise PaperNotHarvested(
            detail=f"arXiv:{arxiv_id.canonical} is not in this archive yet. New papers are harvested "
            f"continuously; meanwhile it may be on arXiv: https://arxiv.org/abs/{arxiv_id.versioned}"
        )
    here = paper_path(paper.arxiv_id, paper.title, arxiv_id.version)
    if requested_path is not None and requested_path != here:
        return Redirect(here)
    shown = paper.version(arxiv_id.version) if arxiv_id.version else None
    description = (
        paper.abstract[:240].rsplit(" ", 1)[0] + "…" if len(paper.abstract) > 240 else paper.abstract
    )
    crumbs = [("Papers", "/papers")]
    if paper.primary_category:
        crumbs.append((paper.primary_category, f"/papers?category={paper.primary_category}"))
    crumbs.append((paper.title, paper.path))
    return View(
        template="paper",
        title=paper.title,
        description=description or f"arXiv:{paper.arxiv_id}",
        path=paper.path,
        context={
            "paper": paper,
            "requested_version": arxiv_id.version,
            "shown_version": shown,
        },
        crumbs=crumbs,
        json_ld=[scholarly_article(site, paper)],
        og_type="article",
    )


async def _show(request: Request[Any, Any, Any], pages: AppPages, ident: str) -> PageAnswer:
    path = request.scope["path"]
    return await pages.serve(request, lambda db: paper_view(db, pages.site, ident, path))


@get("/papers/{ident:str}", include_in_schema=False, opt={PAGE_OPT: True})
async def paper(request: Request[Any, Any, Any], pages: AppPages, ident: FromPath[str]) -> PageAnswer:
    return await _show(request, pages, ident)


@get("/papers/{archive:str}/{number:str}", include_in_schema=False, opt={PAGE_OPT: True})
async def old_style_paper(
    request: Request[Any, Any, Any], pages: AppPages, archive: FromPath[str], number: FromPath[str]
) -> PageAnswer:
    return await _show(request, pages, f"{archive}/{number}")


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
