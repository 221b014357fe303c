"""Catalogue queries for search: what the lexical index reads, the papers a filter allows, and the
metadata and facets of a result page. Plain typed values out, never ORM objects."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Select, func, select
from sqlalchemy.orm import Session

from catalog.models import Authorship, Paper, PaperCategory
from catalog.papers import AuthorRef

BATCH = 1000  # ids per IN (...) list: well under SQLite's and PostgreSQL's parameter limits


@dataclass(frozen=True, slots=True)
class PaperTextRow:
    arxiv_id: str
    title: str
    abstract: str
    authors: tuple[str, ...]
    modified_at: dt.datetime | None  # UTC


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Filters every search mode applies. ``None``/empty means "any"."""

    category: str | None = None  # any of the paper's categories, e.g. "cs.LG" (or an archive: "cs")
    date_from: dt.date | None = None  # the paper's latest activity (announcement or new version)
    date_to: dt.date | None = None
    researcher_id: int | None = None

    @property
    def active(self) -> bool:
        return bool(self.category or self.date_from or self.date_to or self.researcher_id is not None)


@dataclass(frozen=True, slots=True)
class ResultPaper:
    arxiv_id: str
    title: str
    abstract: str
    authors: list[AuthorRef]
    categories: list[str]
    primary_category: str | None
    activity_on: dt.date | None
    latest_version: int | None


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def paper_texts(
    engine: Engine, *, modified_since: dt.datetime | None = None, arxiv_ids: Collection[str] | None = None
) -> Iterator[PaperTextRow]:
    """Title, abstract and ordered author names of every paper (or those modified since a time),
    in id order, read in batches so memory stays flat on a large catalogue."""
    last_id = 0
    with engine.connect() as conn:
        while True:
            query = (
                select(Paper.id, Paper.arxiv_id, Paper.title, Paper.abstract, Paper.modified_at)
                .where(Paper.id > last_id)
                .order_by(Paper.id)
                .limit(BATCH)
            )
            if modified_since is not None:
                query = query.where(Paper.modified_at >= modified_since)
            if arxiv_ids is not None:
                query = query.where(Paper.arxiv_id.in_(list(arxiv_ids)))
            rows = conn.execute(query).all()
            if not rows:
                return
            last_id = rows[-1].id
            names: dict[int, list[str]] = {}
            for paper_id, name in conn.execute(
                select(Authorship.paper_id, Authorship.name)
                .where(Authorship.paper_id.in_([r.id for r in rows]))
                .order_by(Authorship.paper_id, Authorship.position)
            ):
                names.setdefault(paper_id, []).append(name)
            for r in rows:
                yield PaperTextRow(
                    r.arxiv_id, r.title, r.abstract or "", tuple(names.get(r.id, ())), _utc(r.modified_at)
                )


def catalogue_paper_ids(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(select(Paper.arxiv_id)).scalars())


def _filtered(query: Select[Any], filters: SearchFilters) -> Select[Any]:
    if filters.category:
        category = filters.category
        # An archive (``cs``) matches its categories (``cs.LG``) by prefix, compared exactly: LIKE
        # ignores case on SQLite and not on PostgreSQL, and arXiv categories are case-sensitive.
        prefix = f"{category}."
        match = (
            PaperCategory.category == category
            if "." in category or "-" in category
            else (PaperCategory.category == category)
            | (func.substr(PaperCategory.category, 1, len(prefix)) == prefix)
        )
        query = query.where(Paper.id.in_(select(PaperCategory.paper_id).where(match)))
    if filters.date_from:
        query = query.where(Paper.activity_on >= filters.date_from)
    if filters.date_to:
        query = query.where(Paper.activity_on <= filters.date_to)
    if filters.researcher_id is not None:
        query = query.where(
            Paper.id.in_(select(Authorship.paper_id).where(Authorship.researcher_id == filters.researcher_id))
        )
    return query


def allowed_papers(session: Session, filters: SearchFilters) -> set[str] | None:
    """The arXiv ids a filter allows; ``None`` when no filter is set (everything is allowed)."""
    if not filters.active:
        return None
    return set(session.execute(_filtered(select(Paper.arxiv_id), filters)).scalars())


def newest_matching(
    session: Session, filters: SearchFilters, *, offset: int, limit: int
) -> tuple[list[str], int]:
    """Papers a filter allows, newest first (search without a query), and how many there are."""
    total = session.execute(_filtered(select(func.count()).select_from(Paper), filters)).scalar_one()
    ids = list(
        session.execute(
            _filtered(select(Paper.arxiv_id), filters)
            .order_by(Paper.activity_on.desc().nulls_last(), Paper.id.desc())
            .offset(offset)
            .limit(limit)
        ).scalars()
    )
    return ids, total


def result_papers(session: Session, arxiv_ids: Collection[str]) -> dict[str, ResultPaper]:
    """Metadata of the papers on a result page, in three queries whatever their number."""
    ids = list(arxiv_ids)
    if not ids:
        return {}
    rows: list[Any] = []
    for start in range(0, len(ids), BATCH):
        rows += session.execute(
            select(
                Paper.id,
                Paper.arxiv_id,
                Paper.title,
                Paper.abstract,
                Paper.primary_category,
                Paper.activity_on,
                Paper.latest_version,
            ).where(Paper.arxiv_id.in_(ids[start : start + BATCH]))
        ).all()
    by_id = {r.id: r for r in rows}
    authors: dict[int, list[AuthorRef]] = {}
    categories: dict[int, list[str]] = {}
    keys = list(by_id)
    for start in range(0, len(keys), BATCH):
        part = keys[start : start + BATCH]
        for paper_id, name, researcher_id in session.execute(
            select(Authorship.paper_id, Authorship.name, Authorship.researcher_id)
            .where(Authorship.paper_id.in_(part))
            .order_by(Authorship.paper_id, Authorship.position)
        ):
            authors.setdefault(paper_id, []).append(AuthorRef(name, researcher_id))
        for paper_id, category in session.execute(
            select(PaperCategory.paper_id, PaperCategory.category)
            .where(PaperCategory.paper_id.in_(part))
            .order_by(PaperCategory.paper_id, PaperCategory.position)
        ):
            categories.setdefault(paper_id, []).append(category)
    return {
        r.arxiv_id: ResultPaper(
            arxiv_id=r.arxiv_id,
            title=r.title,
            abstract=r.abstract or "",
            authors=authors.get(r.id, []),
            categories=categories.get(r.id, []),
            primary_category=r.primary_category,
            activity_on=r.activity_on,
            latest_version=r.latest_version,
        )
        for r in rows
    }


def activity_dates(session: Session, arxiv_ids: Collection[str]) -> dict[str, dt.date | None]:
    """Each paper's latest activity date (the "newest" sort key)."""
    ids = list(arxiv_ids)
    found: dict[str, dt.date | None] = {}
    for start in range(0, len(ids), BATCH):
        rows = session.execute(
            select(Paper.arxiv_id, Paper.activity_on).where(Paper.arxiv_id.in_(ids[start : start + BATCH]))
        )
        found.update((arxiv_id, day) for arxiv_id, day in rows)
    return found


def category_counts(session: Session, arxiv_ids: Collection[str]) -> list[tuple[str, int]]:
    """How many of these papers carry each category, most common first (search facets)."""
    ids = list(arxiv_ids)
    counts: dict[str, int] = {}
    for start in range(0, len(ids), BATCH):
        for category, n in session.execute(
            select(PaperCategory.category, func.count())
            .join(Paper, Paper.id == PaperCategory.paper_id)
            .where(Paper.arxiv_id.in_(ids[start : start + BATCH]))
            .group_by(PaperCategory.category)
        ):
            counts[category] = counts.get(category, 0) + int(n)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
