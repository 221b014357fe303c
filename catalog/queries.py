"""Read-side queries over the catalogue, returning plain typed values (never ORM objects).

The web app and the JSON API render these; keeping them here keeps SQL out of the handlers.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from catalog.models import Authorship, Paper
from catalog.names import fold

T = TypeVar("T")

_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str, limit: int = 80) -> str:
    """``"Adam: A Method for Stochastic Optimization"`` → ``"adam-a-method-for-stochastic-optimization"``."""
    slug = _SLUG.sub("-", fold(text)).strip("-")
    return slug[:limit].rstrip("-") or "untitled"


@dataclass(frozen=True, slots=True)
class AuthorRef:
    name: str
    researcher_id: int | None


@dataclass(frozen=True, slots=True)
class PaperSummary:
    arxiv_id: str
    title: str
    abstract: str
    authors: list[AuthorRef]
    primary_category: str | None
    activity_on: dt.date | None

    @property
    def slug(self) -> str:
        return slugify(self.title)

    @property
    def path(self) -> str:
        return f"/papers/{self.arxiv_id}-{self.slug}"


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    page: int
    size: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))

    @property
    def has_next(self) -> bool:
        return self.page < self.pages

    @property
    def has_previous(self) -> bool:
        return self.page > 1


def count_papers(session: Session) -> int:
    return session.execute(select(func.count()).select_from(Paper)).scalar_one()


def newest_papers(session: Session, *, page: int, size: int) -> Page[PaperSummary]:
    """Papers by their latest known activity (announcement or newest version), newest first."""
    total = count_papers(session)
    rows = session.execute(
        select(
            Paper.id, Paper.arxiv_id, Paper.title, Paper.abstract, Paper.primary_category, Paper.activity_on
        )
        .order_by(Paper.activity_on.desc().nulls_last(), Paper.id.desc())
        .limit(size)
        .offset((page - 1) * size)
    ).all()
    authors = authors_of(session, [r.id for r in rows])
    items = [
        PaperSummary(
            r.arxiv_id, r.title, r.abstract, authors.get(r.id, []), r.primary_category, r.activity_on
        )
        for r in rows
    ]
    return Page(items, page, size, total)


def authors_of(session: Session, paper_ids: list[int]) -> dict[int, list[AuthorRef]]:
    """Ordered authors of each paper, in one query."""
    result: dict[int, list[AuthorRef]] = {}
    if not paper_ids:
        return result
    for paper_id, name, researcher_id in session.execute(
        select(Authorship.paper_id, Authorship.name, Authorship.researcher_id)
        .where(Authorship.paper_id.in_(paper_ids))
        .order_by(Authorship.paper_id, Authorship.position)
    ):
        result.setdefault(paper_id, []).append(AuthorRef(name, researcher_id))
    return result
