"""Sitemaps: the child sitemaps (by id range) and the addresses each one lists."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

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
    researcher_chunk = ((Authorship.researcher_id - 1) // size).label("chunk")
    for rnumber, lastmod in session.execute(
        select(researcher_chunk, func.max(Paper.modified_at))
        .join(Paper, Paper.id == Authorship.paper_id)
        .where(Authorship.researcher_id.is_not(None))
        .group_by(researcher_chunk)
        .order_by(researcher_chunk)
    ):
        chunks.append(SitemapChunk("researchers", int(rnumber or 0) + 1, as_date(lastmod)))
    institution_chunk = ((Affiliation.institution_id - 1) // size).label("chunk")
    for inumber, lastmod in session.execute(
        select(institution_chunk, func.max(Paper.modified_at))
        .join(Paper, Paper.id == Affiliation.paper_id)
        .where(Affiliation.institution_id.is_not(None))
        .group_by(institution_chunk)
        .order_by(institution_chunk)
    ):
        chunks.append(SitemapChunk("institutions", int(inumber or 0) + 1, as_date(lastmod)))
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
    if kind == "researchers":
        latest = func.max(Paper.modified_at)
        return [
            SitemapEntry(researcher_path(rid, name), as_date(modified))
            for rid, name, modified in session.execute(
                select(Researcher.id, Researcher.display_name, latest)
                .join(Authorship, Authorship.researcher_id == Researcher.id)
                .join(Paper, Paper.id == Authorship.paper_id)
                .where(Researcher.id.between(low, high))
                .group_by(Researcher.id, Researcher.display_name)
                .order_by(Researcher.id)
            )
        ]
    if kind == "institutions":
        latest = func.max(Paper.modified_at)
        return [
            SitemapEntry(institution_path(iid, name), as_date(modified))
            for iid, name, modified in session.execute(
                select(Institution.id, Institution.name, latest)
                .join(Affiliation, Affiliation.institution_id == Institution.id)
                .join(Paper, Paper.id == Affiliation.paper_id)
                .where(Institution.id.between(low, high))
                .group_by(Institution.id, Institution.name)
                .order_by(Institution.id)
            )
        ]
    return []
