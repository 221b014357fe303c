"""Sitemaps: the child sitemaps (by id range) and the addresses each one lists."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from catalog.db import as_date
from catalog.models import Affiliation, Authorship, Institution, Paper, Researcher
from catalog.urls import institution_path, paper_path, researcher_path


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    path: str
    lastmod: dt.date | None


@dataclass(frozen=True, slots=True)
class SitemapChunk:
    kind: str  # "papers" | "researchers" | "institutions"
    number: int  # 1-based
    lastmod: dt.date | None


# Researchers and institutions have a page once a paper here names them: for each, its path, its id
# and name columns, and the link table's columns for its id and the paper's (authorships, affiliations).
_Linked = tuple[
    Callable[[int, str], str],
    InstrumentedAttribute[int],
    InstrumentedAttribute[str],
    InstrumentedAttribute[int | None],
    InstrumentedAttribute[int],
]
_LINKED: dict[str, _Linked] = {
    "researchers": (
        researcher_path,
        Researcher.id,
        Researcher.display_name,
        Authorship.researcher_id,
        Authorship.paper_id,
    ),
    "institutions": (
        institution_path,
        Institution.id,
        Institution.name,
        Affiliation.institution_id,
        Affiliation.paper_id,
    ),
}


def sitemap_chunks(session: Session, size: int) -> list[SitemapChunk]:
    """The non-empty child sitemaps: each kind split by id range into files of at most ``size`` URLs.

    Id ranges (not offsets) keep each file stable as rows are added and cheap to read on millions of
    rows; gaps in ids only make a file smaller, never larger."""
    chunks: list[SitemapChunk] = []
    paper_chunk = ((Paper.id - 1) // size).label("chunk")
    for number, lastmod in session.execute(
        select(paper_chunk, func.max(Paper.modified_at)).group_by(paper_chunk).order_by(paper_chunk)
    ):
        chunks.append(SitemapChunk("papers", int(number) + 1, as_date(lastmod)))
    for kind, (_, _, _, link, link_paper) in _LINKED.items():
        chunk = ((link - 1) // size).label("chunk")
        for linked_number, lastmod in session.execute(
            select(chunk, func.max(Paper.modified_at))
            .join(Paper, Paper.id == link_paper)
            .where(link.is_not(None))
            .group_by(chunk)
            .order_by(chunk)
        ):
            chunks.append(SitemapChunk(kind, int(linked_number or 0) + 1, as_date(lastmod)))
    return chunks


def sitemap_entries(session: Session, kind: str, number: int, size: int) -> list[SitemapEntry]:
    """The URLs of one child sitemap (see :func:`sitemap_chunks`); empty for an unknown kind."""
    low, high = (number - 1) * size + 1, number * size
    if kind == "papers":
        return [
            SitemapEntry(paper_path(arxiv_id, title), as_date(modified))
            for arxiv_id, title, modified in session.execute(
                select(Paper.arxiv_id, Paper.title, Paper.modified_at)
                .where(Paper.id.between(low, high))
                .order_by(Paper.id)
            )
        ]
    if kind not in _LINKED:
        return []
    path, row_id, name, link, link_paper = _LINKED[kind]
    return [
        SitemapEntry(path(rid, shown), as_date(modified))
        for rid, shown, modified in session.execute(
            select(row_id, name, func.max(Paper.modified_at))
            .join(link.class_, link == row_id)
            .join(Paper, Paper.id == link_paper)
            .where(row_id.between(low, high))
            .group_by(row_id, name)
            .order_by(row_id)
        )
    ]
