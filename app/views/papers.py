"""The paper page's view: an address's arXiv id, and the page (or the redirect to its canonical
address)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from litestar.exceptions import NotFoundException
from sqlalchemy.orm import Session

from app.errors import PaperNotHarvested
from app.fulltext import PENDING, state_in
from app.rendering import Redirect, View
from app.site import Site
from app.structured_data import scholarly_article
from catalog import arxiv_ids
from catalog.papers import paper_detail
from catalog.urls import paper_ident, paper_path


def ident_in(path_params: Mapping[str, Any]) -> str:
    """What names the paper in an address: ``{ident}`` (``2401.01234-a-title``), or ``{archive}`` and
    ``{number}`` for an old-style id (``hep-th/9901001``). One handler serves both forms of a page."""
    if "ident" in path_params:
        return str(path_params["ident"])
    return f"{path_params['archive']}/{path_params['number']}"


def parse_paper_ident(ident: str) -> arxiv_ids.ArxivId:
    """The arXiv id at the start of a paper address; 404 with the reason when there is none."""
    try:
        return arxiv_ids.parse(paper_ident(ident))
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
        raise PaperNotHarvested(arxiv_id)
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
            "full_text": state_in(db, paper.arxiv_id),
            "full_text_pending": PENDING,
        },
        crumbs=crumbs,
        json_ld=[scholarly_article(site, paper)],
        og_type="article",
    )
