"""Read-side queries about papers: lists of summaries (newest, by category, by ids), the paper
page's detail, and the home page's figures. Plain typed values out, never ORM objects.

Every query is a fixed, small number of statements (no N+1): lists fetch their rows, then the authors
of all rows in one more statement.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Select, bindparam, exists, func, literal, or_, select
from sqlalchemy.orm import Session

from catalog.listing import Page
from catalog.models import (
    Affiliation,
    Authorship,
    Institution,
    Paper,
    PaperCategory,
    PaperVersion,
    Researcher,
)
from catalog.urls import institution_path, paper_path, researcher_path, slugify

# arXiv categories: ``cs.LG``, ``hep-th``, ``math.GT``, ``q-bio.NC``, ``astro-ph.CO``.
CATEGORY = re.compile(r"[a-z]+(?:-[a-z]+)?(?:\.[A-Za-z]+(?:-[A-Za-z]+)?)?")


@dataclass(frozen=True, slots=True)
class AuthorRef:
    name: str
    researcher_id: int | None

    @property
    def path(self) -> str | None:
        return researcher_path(self.researcher_id, self.name) if self.researcher_id else None


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
        return paper_path(self.arxiv_id, self.title)


@dataclass(frozen=True, slots=True)
class AffiliationRef:
    raw: str
    institution_id: int | None
    institution_name: str | None

    @property
    def path(self) -> str | None:
        if self.institution_id is None or self.institution_name is None:
            return None
        return institution_path(self.institution_id, self.institution_name)


@dataclass(frozen=True, slots=True)
class PaperAuthor:
    name: str
    researcher_id: int | None
    role: str
    affiliations: list[AffiliationRef]

    @property
    def path(self) -> str | None:
        return researcher_path(self.researcher_id, self.name) if self.researcher_id else None


@dataclass(frozen=True, slots=True)
class VersionInfo:
    number: int
    submitted_at: dt.datetime | None
    size: str | None


# No slots on these two: the API's Paper document extends PaperFacts, and MCP takes a returned
# class's attributes for its fields' defaults (a slot would be taken for one).
@dataclass(frozen=True)
class PaperFacts:
    """What is published about a paper besides its authors and versions: its page, and the API's
    and MCP's document."""

    arxiv_id: str
    title: str
    abstract: str
    categories: list[str]
    latest_version: int | None
    published_on: dt.date | None
    updated_on: dt.date | None
    announced_on: dt.date | None
    doi: str | None
    journal_ref: str | None
    comments: str | None
    license: str | None
    abs_url: str
    pdf_url: str
    citation_count: int | None

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None

    @property
    def path(self) -> str:
        return paper_path(self.arxiv_id, self.title)


@dataclass(frozen=True)
class PaperDetail(PaperFacts):
    """The paper page's paper: the published facts, its authors and versions, and the dates and
    source the listings, feeds and the page itself use."""

    authors: list[PaperAuthor]
    versions: list[VersionInfo]
    activity_on: dt.date | None  # the listing order's date
    citation_source: str | None  # shown on the paper page only ("via …")
    modified_at: dt.datetime  # the catalogue row's own clock (feeds, ETags)

    def version(self, number: int) -> VersionInfo | None:
        return next((v for v in self.versions if v.number == number), None)


@dataclass(frozen=True, slots=True)
class CategoryCount:
    category: str
    papers: int


def count_papers(session: Session) -> int:
    return session.execute(select(func.count()).select_from(Paper)).scalar_one()


def _summary_columns() -> Select[int, str, str, str, str | None, dt.date | None]:
    return select(
        Paper.id, Paper.arxiv_id, Paper.title, Paper.abstract, Paper.primary_category, Paper.activity_on
    )


_NEWEST = (Paper.activity_on.desc().nulls_last(), Paper.id.desc())


def _summaries(
    session: Session, statement: Select[int, str, str, str, str | None, dt.date | None]
) -> list[PaperSummary]:
    rows = session.execute(statement).all()
    authors = authors_of(session, [r.id for r in rows])
    return [
        PaperSummary(
            r.arxiv_id, r.title, r.abstract, authors.get(r.id, []), r.primary_category, r.activity_on
        )
        for r in rows
    ]


def newest_summaries(
    session: Session, *where: ColumnElement[bool], limit: int, offset: int = 0
) -> list[PaperSummary]:
    """The papers matching ``where`` by their latest known activity (announcement or newest version),
    newest first: every list of papers on the site (newest, a category's, a researcher's, an
    institution's, a follow list's feed) is one of these."""
    statement = _summary_columns().where(*where).order_by(*_NEWEST).limit(limit).offset(offset)
    return _summaries(session, statement)


def newest_page(
    session: Session, *where: ColumnElement[bool], total: int, page: int, size: int
) -> Page[PaperSummary]:
    """Page ``page`` of :func:`newest_summaries` (``total``: how many papers match ``where``)."""
    return Page(newest_summaries(session, *where, limit=size, offset=(page - 1) * size), page, size, total)


def newest_papers(
    session: Session, *, page: int, size: int, category: str | None = None
) -> Page[PaperSummary]:
    """Papers newest first; with ``category``, the papers listed in that category (primary or
    cross-list)."""
    if category is None:
        return newest_page(session, total=count_papers(session), page=page, size=size)
    in_category = exists().where(PaperCategory.paper_id == Paper.id, PaperCategory.category == category)
    total = session.execute(
        select(func.count(func.distinct(PaperCategory.paper_id))).where(PaperCategory.category == category)
    ).scalar_one()
    return newest_page(session, in_category, total=total, page=page, size=size)


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


# The paper page's statements, built once: constructing a statement costs more than running it on
# an index, and this is the hottest read of the site.
_PAPER_BY_ID = select(
    Paper.id,
    Paper.arxiv_id,
    Paper.title,
    Paper.abstract,
    Paper.primary_category,
    Paper.latest_version,
    Paper.published_on,
    Paper.updated_on,
    Paper.announced_on,
    Paper.activity_on,
    Paper.doi,
    Paper.journal_ref,
    Paper.comments,
    Paper.license,
    Paper.abs_url,
    Paper.pdf_url,
    Paper.citation_count,
    Paper.citation_source,
    Paper.modified_at,
).where(Paper.arxiv_id == bindparam("arxiv_id"))
_PAPER_AFFILIATIONS = (
    select(Affiliation.author_position, Affiliation.raw, Affiliation.institution_id, Institution.name)
    .outerjoin(Institution, Institution.id == Affiliation.institution_id)
    .where(Affiliation.paper_id == bindparam("paper_id"))
    .order_by(Affiliation.author_position, Affiliation.id)
)
_PAPER_AUTHORS = (
    select(Authorship.position, Authorship.name, Authorship.researcher_id, Authorship.role)
    .where(Authorship.paper_id == bindparam("paper_id"))
    .order_by(Authorship.position)
)
_PAPER_CATEGORIES = (
    select(PaperCategory.category)
    .where(PaperCategory.paper_id == bindparam("paper_id"))
    .order_by(PaperCategory.position)
)
_PAPER_VERSIONS = (
    select(PaperVersion.version, PaperVersion.submitted_at, PaperVersion.size)
    .where(PaperVersion.paper_id == bindparam("paper_id"))
    .order_by(PaperVersion.version)
)


def paper_detail(session: Session, arxiv_id: str) -> PaperDetail | None:
    """Everything the paper page shows, by canonical arXiv id (five small indexed statements)."""
    row = session.execute(_PAPER_BY_ID, {"arxiv_id": arxiv_id}).first()
    if row is None:
        return None
    key = {"paper_id": row.id}
    affiliations: dict[int, list[AffiliationRef]] = {}
    for position, raw, institution_id, institution_name in session.execute(_PAPER_AFFILIATIONS, key):
        refs = affiliations.setdefault(position, [])
        if all(r.raw != raw for r in refs):  # the same string from two sources shows once
            refs.append(AffiliationRef(raw, institution_id, institution_name))
    authors = [
        PaperAuthor(a.name, a.researcher_id, a.role, affiliations.get(a.position, []))
        for a in session.execute(_PAPER_AUTHORS, key)
    ]
    categories = list(session.execute(_PAPER_CATEGORIES, key).scalars())
    versions = [VersionInfo(v.version, v.submitted_at, v.size) for v in session.execute(_PAPER_VERSIONS, key)]
    return PaperDetail(
        arxiv_id=row.arxiv_id,
        title=row.title,
        abstract=row.abstract,
        authors=authors,
        categories=categories or ([row.primary_category] if row.primary_category else []),
        versions=versions,
        latest_version=row.latest_version,
        published_on=row.published_on,
        updated_on=row.updated_on,
        announced_on=row.announced_on,
        activity_on=row.activity_on,
        doi=row.doi,
        journal_ref=row.journal_ref,
        comments=row.comments,
        license=row.license,
        abs_url=row.abs_url,
        pdf_url=row.pdf_url,
        citation_count=row.citation_count,
        citation_source=row.citation_source,
        modified_at=row.modified_at,
    )


@dataclass(frozen=True, slots=True)
class CatalogueStats:
    papers: int
    researchers: int
    institutions: int


def catalogue_stats(session: Session) -> CatalogueStats:
    researchers = session.execute(select(func.count()).select_from(Researcher)).scalar_one()
    institutions = session.execute(select(func.count()).select_from(Institution)).scalar_one()
    return CatalogueStats(count_papers(session), researchers, institutions)


def top_categories(session: Session, limit: int = 40) -> list[CategoryCount]:
    """Primary categories by number of papers, most first."""
    count = func.count().label("n")
    rows = session.execute(
        select(Paper.primary_category, count)
        .where(Paper.primary_category.is_not(None))
        .group_by(Paper.primary_category)
        .order_by(count.desc(), Paper.primary_category)
        .limit(limit)
    )
    return [CategoryCount(c, n) for c, n in rows if c]


def category_exists(session: Session, category: str) -> bool:
    return (
        session.execute(
            select(literal(True)).where(
                or_(
                    exists().where(PaperCategory.category == category),
                    exists().where(Paper.primary_category == category),
                )
            )
        ).scalar_one_or_none()
        is not None
    )


def paper_summaries(session: Session, arxiv_ids: Sequence[str]) -> list[PaperSummary]:
    """Summaries for given canonical ids, in the given order (unknown ids are left out)."""
    if not arxiv_ids:
        return []
    found = {
        p.arxiv_id: p
        for p in _summaries(session, _summary_columns().where(Paper.arxiv_id.in_(list(arxiv_ids))))
    }
    return [found[a] for a in arxiv_ids if a in found]
