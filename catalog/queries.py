"""Read-side queries over the catalogue, returning plain typed values (never ORM objects).

The web app and the JSON API render these; keeping them here keeps SQL out of the handlers. Every
query is a fixed, small number of statements (no N+1): lists fetch their rows, then the authors of
all rows in one more statement.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Generic, TypeVar
from urllib.parse import urlencode

from sqlalchemy import ColumnElement, Select, and_, bindparam, exists, func, literal, or_, select
from sqlalchemy.orm import Session, aliased

from catalog.models import (
    Affiliation,
    Authorship,
    Institution,
    InstitutionName,
    Paper,
    PaperCategory,
    PaperVersion,
    Researcher,
    ResearcherInstitution,
)
from catalog.names import display_name, fold, person_key
from catalog.text import human_text, transliterate

T = TypeVar("T")

_SLUG = re.compile(r"[^a-z0-9]+")
# arXiv categories: ``cs.LG``, ``hep-th``, ``math.GT``, ``q-bio.NC``, ``astro-ph.CO``.
CATEGORY = re.compile(r"[a-z]+(?:-[a-z]+)?(?:\.[A-Za-z]+(?:-[A-Za-z]+)?)?")
# Papers with more authors than this are left out of co-author pictures (same bound as the resolver's
# co-author evidence): a 300-author collaboration says little about who works with whom.
MAX_NETWORK_AUTHORS = 50
# The researcher page compares at most this many namesakes (most papers first) and counts the rest.
SAME_NAME_LIMIT = 50


def slugify(text: str, limit: int = 80) -> str:
    """``"Adam: A Method for Stochastic Optimization"`` → ``"adam-a-method-for-stochastic-optimization"``.

    Letters are transliterated, not dropped ("Łukasz" → "lukasz", "Zürich" → "zurich"); a stale slug
    only costs a 301 to the canonical URL."""
    slug = _SLUG.sub("-", transliterate(text).lower()).strip("-")
    return slug[:limit].rstrip("-") or "untitled"


def paper_path(arxiv_id: str, title: str, version: int | None = None) -> str:
    shown = arxiv_id if version is None else f"{arxiv_id}v{version}"
    return f"/papers/{shown}-{slugify(title)}"


# The longest quote the page reader looks for on a page (a sentence or two); longer ones are cut
# at a word boundary, so the highlight marks their start.
READER_QUOTE_CHARS = 500


def reader_quote(quote: str) -> str:
    """``quote`` as the page reader searches for it: one line of visible text (no control or format
    characters, no lone surrogates), at most READER_QUOTE_CHARS."""
    text = human_text(quote)
    if len(text) <= READER_QUOTE_CHARS:
        return text
    return text[: READER_QUOTE_CHARS + 1].rsplit(" ", 1)[0][:READER_QUOTE_CHARS]


def reader_path(arxiv_id: str, page: int, quote: str | None = None) -> str:
    """Our page reader at 1-based ``page`` of the paper's PDF, highlighting ``quote`` there."""
    path = f"/papers/{arxiv_id}/pages/{page}"
    text = reader_quote(quote or "")
    return f"{path}?{urlencode({'quote': text})}" if text else path


def researcher_path(researcher_id: int, name: str) -> str:
    return f"/researchers/{researcher_id}-{slugify(name)}"


def institution_path(institution_id: int, name: str) -> str:
    return f"/institutions/{institution_id}-{slugify(name)}"


# -- values ------------------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class PaperDetail:
    arxiv_id: str
    title: str
    abstract: str
    authors: list[PaperAuthor]
    categories: list[str]
    versions: list[VersionInfo]
    latest_version: int | None
    published_on: dt.date | None
    updated_on: dt.date | None
    announced_on: dt.date | None
    activity_on: dt.date | None
    doi: str | None
    journal_ref: str | None
    comments: str | None
    license: str | None
    abs_url: str
    pdf_url: str
    citation_count: int | None
    citation_source: str | None
    modified_at: dt.datetime

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None

    @property
    def path(self) -> str:
        return paper_path(self.arxiv_id, self.title)

    def version(self, number: int) -> VersionInfo | None:
        return next((v for v in self.versions if v.number == number), None)


@dataclass(frozen=True, slots=True)
class Positions:
    """Author-position counts over the papers whose every author was matched to a researcher."""

    first: int
    middle: int
    last: int
    counted: int  # papers where every author was matched
    total: int  # all this researcher's papers

    def bars(self) -> list[tuple[str, int]]:
        rows = [("first author", self.first), ("middle author", self.middle), ("last author", self.last)]
        return [(label, n) for label, n in rows if n]


@dataclass(frozen=True, slots=True)
class FieldCount:
    category: str
    papers: int


@dataclass(frozen=True, slots=True)
class InstitutionRef:
    id: int
    name: str
    ror_id: str | None
    country_name: str | None

    @property
    def path(self) -> str:
        return institution_path(self.id, self.name)


@dataclass(frozen=True, slots=True)
class Namesake:
    """What tells one researcher apart from others of the same name."""

    id: int
    name: str
    papers: int
    first_year: int | None
    last_year: int | None
    categories: list[str]  # the most frequent on their papers, at most three
    coauthors: list[NetworkNode]  # the co-authors sharing most papers, at most three
    institution: InstitutionRef | None  # on most of their papers here, else from enrichment
    h_index: int | None
    citation_count: int | None

    @property
    def path(self) -> str:
        return researcher_path(self.id, self.name)

    @property
    def years(self) -> str | None:
        """``"2019–2024"``, ``"2021"`` or None when no paper has a date."""
        if self.first_year is None or self.last_year is None:
            return None
        return (
            str(self.first_year)
            if self.first_year == self.last_year
            else f"{self.first_year}–{self.last_year}"
        )


@dataclass(frozen=True, slots=True)
class SameName:
    """A researcher beside the others whose name matches one of their spellings."""

    this: Namesake
    others: list[Namesake]  # most papers first, at most SAME_NAME_LIMIT
    more: int  # others left out of the list


@dataclass(frozen=True, slots=True)
class ResearcherProfile:
    id: int
    name: str
    name_key: str
    orcid: str | None
    openalex_id: str | None
    semantic_scholar_id: str | None
    h_index: int | None
    citation_count: int | None
    works_count: int | None
    metrics_source: str | None
    papers: int
    positions: Positions
    fields: list[FieldCount]
    name_variants: list[str]  # other spellings on their papers, most frequent first
    same_name: SameName | None  # None when nobody else has one of their names
    institutions: list[InstitutionRef]

    @property
    def path(self) -> str:
        return researcher_path(self.id, self.name)

    @property
    def identity_sources(self) -> list[str]:
        """Where the identity comes from, in words, for "identity via …" (empty when only arXiv)."""
        found = []
        if self.semantic_scholar_id or self.metrics_source == "semanticscholar":
            found.append("Semantic Scholar")
        if self.openalex_id or self.metrics_source == "openalex":
            found.append("OpenAlex")
        if self.orcid:
            found.append("ORCID")
        return found


@dataclass(frozen=True, slots=True)
class NetworkNode:
    id: int
    name: str
    shared: int  # papers shared with the researcher at the centre

    @property
    def path(self) -> str:
        return researcher_path(self.id, self.name)


@dataclass(frozen=True, slots=True)
class Network:
    """A researcher's closest co-authors and who among them also wrote together."""

    centre: NetworkNode
    nodes: list[NetworkNode]
    edges: list[tuple[int, int, int]]  # (researcher id, researcher id, shared papers) among nodes
    papers_left_out: int  # papers with more than MAX_NETWORK_AUTHORS authors


@dataclass(frozen=True, slots=True)
class InstitutionSummary:
    id: int
    name: str
    ror_id: str | None
    city: str | None
    country_name: str | None
    papers: int

    @property
    def path(self) -> str:
        return institution_path(self.id, self.name)


@dataclass(frozen=True, slots=True)
class InstitutionDetail:
    id: int
    ror_id: str | None
    name: str
    aliases: list[str]
    acronyms: list[str]
    types: list[str]
    city: str | None
    country_code: str | None
    country_name: str | None
    website: str | None
    links: dict[str, object]
    status: str | None
    established: int | None
    openalex_id: str | None
    papers: int

    @property
    def path(self) -> str:
        return institution_path(self.id, self.name)

    @property
    def ror_url(self) -> str | None:
        return f"https://ror.org/{self.ror_id}" if self.ror_id else None

    @property
    def location(self) -> str | None:
        parts = [p for p in (self.city, self.country_name) if p]
        return ", ".join(parts) or None


@dataclass(frozen=True, slots=True)
class CategoryCount:
    category: str
    papers: int


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    path: str
    lastmod: dt.date | None


@dataclass(frozen=True, slots=True)
class SitemapChunk:
    kind: str  # "papers" | "researchers" | "institutions"
    number: int  # 1-based
    lastmod: dt.date | None


# -- papers ------------------------------------------------------------------------------------


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


def newest_papers(
    session: Session, *, page: int, size: int, category: str | None = None
) -> Page[PaperSummary]:
    """Papers by their latest known activity (announcement or newest version), newest first;
    with ``category``, the papers listed in that category (primary or cross-list)."""
    statement = _summary_columns().order_by(*_NEWEST).limit(size).offset((page - 1) * size)
    if category is None:
        total = count_papers(session)
    else:
        in_category = exists().where(PaperCategory.paper_id == Paper.id, PaperCategory.category == category)
        statement = statement.where(in_category)
        total = session.execute(
            select(func.count(func.distinct(PaperCategory.paper_id))).where(
                PaperCategory.category == category
            )
        ).scalar_one()
    return Page(_summaries(session, statement), page, size, total)


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


# -- researchers -------------------------------------------------------------------------------


def researcher_name(session: Session, researcher_id: int) -> str | None:
    return session.execute(
        select(Researcher.display_name).where(Researcher.id == researcher_id)
    ).scalar_one_or_none()


def _paper_counts(session: Session, ids: Iterable[int]) -> dict[int, int]:
    ids = list(ids)
    if not ids:
        return {}
    return dict(
        session.execute(  # type: ignore[arg-type]
            select(Authorship.researcher_id, func.count(func.distinct(Authorship.paper_id)))
            .where(Authorship.researcher_id.in_(ids))
            .group_by(Authorship.researcher_id)
        ).all()
    )


def researcher_profile(session: Session, researcher_id: int) -> ResearcherProfile | None:
    """The researcher page's side blocks: counts, positions, fields, same name, institutions."""
    r = session.execute(select(Researcher).where(Researcher.id == researcher_id)).scalar_one_or_none()
    if r is None:
        return None
    papers = _paper_counts(session, [r.id]).get(r.id, 0)

    unmatched = aliased(Authorship)
    fully_matched = ~exists().where(
        unmatched.paper_id == Authorship.paper_id, unmatched.researcher_id.is_(None)
    )
    roles = Counter[str]()
    counted: set[int] = set()
    for paper_id, role in session.execute(
        select(Authorship.paper_id, Authorship.role).where(Authorship.researcher_id == r.id, fully_matched)
    ):
        if paper_id not in counted:  # a name printed twice on one paper counts once
            counted.add(paper_id)
            roles[role] += 1
    positions = Positions(roles["first"], roles["middle"], roles["last"], len(counted), papers)

    n = func.count(func.distinct(PaperCategory.paper_id)).label("n")
    fields = [
        FieldCount(category, count)
        for category, count in session.execute(
            select(PaperCategory.category, n)
            .join(Authorship, Authorship.paper_id == PaperCategory.paper_id)
            .where(Authorship.researcher_id == r.id)
            .group_by(PaperCategory.category)
            .order_by(n.desc(), PaperCategory.category)
        )
    ]

    spellings = _spellings(session, r.id)
    keys = {r.name_key} | {k for k in map(person_key, spellings) if k}

    institutions = [
        InstitutionRef(i.id, i.name, i.ror_id, i.country_name)
        for i in session.execute(
            select(Institution.id, Institution.name, Institution.ror_id, Institution.country_name)
            .join(ResearcherInstitution, ResearcherInstitution.institution_id == Institution.id)
            .where(ResearcherInstitution.researcher_id == r.id)
            .distinct()
            .order_by(Institution.name)
        )
    ]
    return ResearcherProfile(
        id=r.id,
        name=r.display_name,
        name_key=r.name_key,
        orcid=r.orcid,
        openalex_id=r.openalex_id,
        semantic_scholar_id=r.semantic_scholar_id,
        h_index=r.h_index,
        citation_count=r.citation_count,
        works_count=r.works_count,
        metrics_source=r.metrics_source,
        papers=papers,
        positions=positions,
        fields=fields,
        name_variants=[s for s in spellings if s != r.display_name],
        same_name=same_name(session, r.id, keys),
        institutions=institutions,
    )


def _spellings(session: Session, researcher_id: int) -> list[str]:
    """The distinct spellings on a researcher's authorships (whitespace collapsed), most frequent first."""
    counts = Counter[str]()
    for name, n in session.execute(
        select(Authorship.name, func.count())
        .where(Authorship.researcher_id == researcher_id)
        .group_by(Authorship.name)
    ):
        counts[display_name(name)] += n
    return sorted(counts, key=lambda name: (-counts[name], name))


def same_name(
    session: Session, researcher_id: int, keys: Iterable[str], *, limit: int = SAME_NAME_LIMIT
) -> SameName | None:
    """``researcher_id`` beside the other researchers whose name key is one of ``keys`` (the folded
    spellings on their papers), with what tells them apart; None when there are none.

    A fixed number of statements whatever the number of namesakes: each fact is one grouped query
    over all the people compared."""
    found = {
        p.id: p
        for p in session.execute(
            select(
                Researcher.id, Researcher.display_name, Researcher.h_index, Researcher.citation_count
            ).where(or_(Researcher.name_key.in_(sorted(set(keys))), Researcher.id == researcher_id))
        )
    }
    counts = _paper_counts(session, found)
    others = sorted(
        (rid for rid in found if rid != researcher_id and counts.get(rid)),
        key=lambda rid: (-counts[rid], rid),
    )
    if researcher_id not in found or not others:
        return None
    people = {rid: found[rid] for rid in [researcher_id, *others[:limit]]}
    compared = namesakes(session, people, counts)
    return SameName(
        this=compared[researcher_id],
        others=[compared[rid] for rid in others[:limit]],
        more=max(0, len(others) - limit),
    )


def namesakes(session: Session, people: Mapping[int, Any], counts: Mapping[int, int]) -> dict[int, Namesake]:
    """What tells each of ``people`` (rows with ``display_name``, ``h_index``, ``citation_count``)
    apart: years, fields, co-authors, institution. A fixed number of grouped statements for the
    whole batch, so a page of rows costs the same as one row."""
    ids = list(people)
    if not ids:
        return {}

    day = func.coalesce(Paper.published_on, Paper.activity_on)
    spans = {
        rid: (_day(first), _day(last))
        for rid, first, last in session.execute(
            select(Authorship.researcher_id, func.min(day), func.max(day))
            .join(Paper, Paper.id == Authorship.paper_id)
            .where(Authorship.researcher_id.in_(ids))
            .group_by(Authorship.researcher_id)
        )
    }

    n = func.count(func.distinct(PaperCategory.paper_id))
    categories: dict[int, Counter[str]] = {rid: Counter() for rid in ids}
    for rid, category, count in session.execute(
        select(Authorship.researcher_id, PaperCategory.category, n)
        .join(PaperCategory, PaperCategory.paper_id == Authorship.paper_id)
        .where(Authorship.researcher_id.in_(ids))
        .group_by(Authorship.researcher_id, PaperCategory.category)
    ):
        if rid is not None:
            categories[rid][category] = count

    # Co-authors over papers of at most MAX_NETWORK_AUTHORS authors, as in the co-author picture.
    mine, theirs = aliased(Authorship), aliased(Authorship)
    small = (
        select(Authorship.paper_id)
        .where(Authorship.paper_id.in_(select(mine.paper_id).where(mine.researcher_id.in_(ids))))
        .group_by(Authorship.paper_id)
        .having(func.count() <= MAX_NETWORK_AUTHORS)
    )
    shared: dict[int, Counter[int]] = {rid: Counter() for rid in ids}
    for rid, other, count in session.execute(
        select(mine.researcher_id, theirs.researcher_id, func.count(func.distinct(mine.paper_id)))
        .join(theirs, and_(theirs.paper_id == mine.paper_id, theirs.researcher_id != mine.researcher_id))
        .where(mine.researcher_id.in_(ids), mine.paper_id.in_(small))
        .group_by(mine.researcher_id, theirs.researcher_id)
    ):
        if rid is not None and other is not None:
            shared[rid][other] = count
    top = {rid: sorted(c, key=lambda other: (-c[other], other))[:3] for rid, c in shared.items()}
    names = dict(
        session.execute(
            select(Researcher.id, Researcher.display_name).where(
                Researcher.id.in_({other for chosen in top.values() for other in chosen})
            )
        ).all()
    )

    institutions = _main_institutions(session, ids)

    def told_apart(rid: int) -> Namesake:
        p, (first, last) = people[rid], spans.get(rid, (None, None))
        return Namesake(
            id=rid,
            name=p.display_name,
            papers=counts.get(rid, 0),
            first_year=first.year if first else None,
            last_year=last.year if last else None,
            categories=[c for c, _ in sorted(categories[rid].items(), key=lambda c: (-c[1], c[0]))[:3]],
            coauthors=[NetworkNode(other, names.get(other, "?"), shared[rid][other]) for other in top[rid]],
            institution=institutions.get(rid),
            h_index=p.h_index,
            citation_count=p.citation_count,
        )

    return {rid: told_apart(rid) for rid in ids}


def _main_institutions(session: Session, ids: list[int]) -> dict[int, InstitutionRef]:
    """Each researcher's institution: the one printed on most of their papers here, else the one
    enrichment knows for the most years (two statements)."""
    columns = (Institution.id, Institution.name, Institution.ror_id, Institution.country_name)
    best: dict[int, tuple[tuple[int, int, str, int], InstitutionRef]] = {}
    papers = func.count(func.distinct(Affiliation.paper_id))
    printed = (
        select(Authorship.researcher_id, papers, *columns)
        .join(
            Affiliation,
            and_(
                Affiliation.paper_id == Authorship.paper_id,
                Affiliation.author_position == Authorship.position,
            ),
        )
        .join(Institution, Institution.id == Affiliation.institution_id)
        .where(Authorship.researcher_id.in_(ids))
        .group_by(Authorship.researcher_id, *columns)
    )
    candidates = [
        (rid, (1, n, "", -iid), InstitutionRef(iid, name, ror, country))
        for rid, n, iid, name, ror, country in session.execute(printed)
        if rid is not None
    ]
    enriched = (
        select(ResearcherInstitution.researcher_id, ResearcherInstitution.years, *columns)
        .join(Institution, Institution.id == ResearcherInstitution.institution_id)
        .where(ResearcherInstitution.researcher_id.in_(ids))
    )
    for rid, years, iid, name, ror, country in session.execute(enriched):
        seen = [str(y) for y in years or []]
        candidates.append(
            (rid, (0, len(seen), max(seen, default=""), -iid), InstitutionRef(iid, name, ror, country))
        )
    for rid, rank, ref in candidates:
        if rid not in best or rank > best[rid][0]:
            best[rid] = (rank, ref)
    return {rid: ref for rid, (_, ref) in best.items()}


def researcher_papers(
    session: Session, researcher_id: int, *, page: int, size: int, category: str | None = None
) -> Page[PaperSummary]:
    """A researcher's papers, newest first, optionally only those listed in ``category``.

    Driven from the researcher's authorships (an index range), not from all papers."""
    conditions: list[ColumnElement[bool]] = [
        Paper.id.in_(select(Authorship.paper_id).where(Authorship.researcher_id == researcher_id))
    ]
    if category is not None:
        conditions.append(
            exists().where(PaperCategory.paper_id == Paper.id, PaperCategory.category == category)
        )
    total = session.execute(select(func.count()).select_from(Paper).where(*conditions)).scalar_one()
    statement = _summary_columns().where(*conditions).order_by(*_NEWEST).limit(size).offset((page - 1) * size)
    return Page(_summaries(session, statement), page, size, total)


def papers_by_researchers(
    session: Session, researcher_ids: Sequence[int], *, limit: int
) -> list[PaperSummary]:
    """The newest papers with any of ``researcher_ids`` among their authors (a follow list's feed)."""
    if not researcher_ids:
        return []
    authored = select(Authorship.paper_id).where(Authorship.researcher_id.in_(list(researcher_ids)))
    statement = _summary_columns().where(Paper.id.in_(authored)).order_by(*_NEWEST).limit(limit)
    return _summaries(session, statement)


def coauthor_network(session: Session, researcher_id: int, *, limit: int = 16) -> Network | None:
    """The ``limit`` co-authors sharing most papers, and the links among them (two statements)."""
    name = researcher_name(session, researcher_id)
    if name is None:
        return None
    mine = select(Authorship.paper_id).where(Authorship.researcher_id == researcher_id)
    by_paper: dict[int, set[int]] = {}
    sizes = Counter[int]()
    for paper_id, other in session.execute(
        select(Authorship.paper_id, Authorship.researcher_id).where(Authorship.paper_id.in_(mine))
    ):
        sizes[paper_id] += 1
        if other is not None:
            by_paper.setdefault(paper_id, set()).add(other)
    kept = [people - {researcher_id} for pid, people in by_paper.items() if sizes[pid] <= MAX_NETWORK_AUTHORS]
    shared = Counter(other for people in kept for other in people)
    top = sorted(shared, key=lambda other: (-shared[other], other))[:limit]
    names = dict(
        session.execute(select(Researcher.id, Researcher.display_name).where(Researcher.id.in_(top))).all()
    )
    chosen = set(top)
    links = Counter[tuple[int, int]]()
    for people in kept:
        for a, b in combinations(sorted(people & chosen), 2):
            links[(a, b)] += 1
    return Network(
        centre=NetworkNode(researcher_id, name, len(sizes)),
        nodes=[NetworkNode(other, names.get(other, "?"), shared[other]) for other in top],
        edges=[(a, b, w) for (a, b), w in sorted(links.items())],
        papers_left_out=sum(1 for pid in sizes if sizes[pid] > MAX_NETWORK_AUTHORS),
    )


def _like(query: str) -> str | None:
    """A LIKE pattern for a folded name fragment (fold removes ``%`` and ``_``), or None if empty."""
    key = fold(query)
    return f"%{key}%" if key else None


def list_researchers(session: Session, *, query: str | None, page: int, size: int) -> Page[Namesake]:
    """Researchers with papers here, most papers first; ``query`` matches any part of the name.

    Counts come from the authorships index alone; names, and what tells namesakes apart (years,
    fields, co-authors, institution), are read for the one page shown, in one batch."""
    papers = func.count(func.distinct(Authorship.paper_id)).label("papers")  # a name twice on a paper: once
    counted = (
        select(Authorship.researcher_id.label("rid"), papers)
        .where(Authorship.researcher_id.is_not(None))
        .group_by(Authorship.researcher_id)
    )
    counting = select(func.count(func.distinct(Authorship.researcher_id))).where(
        Authorship.researcher_id.is_not(None)
    )
    if query is not None and (pattern := _like(query)):
        named = Authorship.researcher_id.in_(select(Researcher.id).where(Researcher.name_key.like(pattern)))
        counted, counting = counted.where(named), counting.where(named)
    counts = counted.subquery()
    total = session.execute(counting).scalar_one()
    top = session.execute(
        select(counts.c.rid, counts.c.papers)
        .order_by(counts.c.papers.desc(), counts.c.rid)
        .limit(size)
        .offset((page - 1) * size)
    ).all()
    people = {
        r.id: r
        for r in session.execute(
            select(
                Researcher.id, Researcher.display_name, Researcher.h_index, Researcher.citation_count
            ).where(Researcher.id.in_([rid for rid, _ in top]))
        )
    }
    told = namesakes(session, people, dict(top))
    items = [told[rid] for rid, _ in top if rid in told]
    return Page(items, page, size, total)


# -- institutions ------------------------------------------------------------------------------


def institution_detail(session: Session, institution_id: int) -> InstitutionDetail | None:
    """The institution page's facts and its number of affiliated papers (its lists come from
    :mod:`catalog.institutions`)."""
    i = session.execute(select(Institution).where(Institution.id == institution_id)).scalar_one_or_none()
    if i is None:
        return None
    papers = session.execute(
        select(func.count(func.distinct(Affiliation.paper_id))).where(Affiliation.institution_id == i.id)
    ).scalar_one()
    return InstitutionDetail(
        id=i.id,
        ror_id=i.ror_id,
        name=i.name,
        aliases=list(i.aliases or []),
        acronyms=list(i.acronyms or []),
        types=list(i.types or []),
        city=i.city,
        country_code=i.country_code,
        country_name=i.country_name,
        website=i.website,
        links=dict(i.links or {}),
        status=i.status,
        established=i.established,
        openalex_id=i.openalex_id,
        papers=papers,
    )


def list_institutions(
    session: Session, *, query: str | None, page: int, size: int
) -> Page[InstitutionSummary]:
    """Institutions with the most affiliated papers first, then by name; ``query`` matches any of
    their names, aliases or acronyms."""
    papers = func.count(func.distinct(Affiliation.paper_id)).label("papers")
    statement = (
        select(
            Institution.id,
            Institution.name,
            Institution.ror_id,
            Institution.city,
            Institution.country_name,
            papers,
        )
        .outerjoin(Affiliation, Affiliation.institution_id == Institution.id)
        .group_by(
            Institution.id, Institution.name, Institution.ror_id, Institution.city, Institution.country_name
        )
    )
    counting = select(func.count()).select_from(Institution)
    if query is not None and (pattern := _like(query.replace("&", " and "))):  # as institution_key
        matching = exists().where(
            InstitutionName.institution_id == Institution.id, InstitutionName.name_key.like(pattern)
        )
        statement = statement.where(matching)
        counting = counting.where(matching)
    total = session.execute(counting).scalar_one()
    rows = session.execute(
        statement.order_by(papers.desc(), Institution.name, Institution.id)
        .limit(size)
        .offset((page - 1) * size)
    )
    items = [InstitutionSummary(r.id, r.name, r.ror_id, r.city, r.country_name, r.papers) for r in rows]
    return Page(items, page, size, total)


# -- sitemaps and feeds ------------------------------------------------------------------------


def _day(value: dt.datetime | dt.date | str | None) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, str):  # SQLite returns max() of a datetime column as text
        value = dt.datetime.fromisoformat(value)
    return value.date() if isinstance(value, dt.datetime) else value


def sitemap_chunks(session: Session, size: int) -> list[SitemapChunk]:
    """The non-empty child sitemaps: each kind split by id range into files of at most ``size`` URLs.

    Id ranges (not offsets) keep each file stable as rows are added and cheap to read on millions of
    rows; gaps in ids only make a file smaller, never larger."""
    chunks: list[SitemapChunk] = []
    paper_chunk = ((Paper.id - 1) // size).label("chunk")
    for number, lastmod in session.execute(
        select(paper_chunk, func.max(Paper.modified_at)).group_by(paper_chunk).order_by(paper_chunk)
    ):
        chunks.append(SitemapChunk("papers", int(number) + 1, _day(lastmod)))
    researcher_chunk = ((Authorship.researcher_id - 1) // size).label("chunk")
    for rnumber, lastmod in session.execute(
        select(researcher_chunk, func.max(Paper.modified_at))
        .join(Paper, Paper.id == Authorship.paper_id)
        .where(Authorship.researcher_id.is_not(None))
        .group_by(researcher_chunk)
        .order_by(researcher_chunk)
    ):
        chunks.append(SitemapChunk("researchers", int(rnumber or 0) + 1, _day(lastmod)))
    institution_chunk = ((Affiliation.institution_id - 1) // size).label("chunk")
    for inumber, lastmod in session.execute(
        select(institution_chunk, func.max(Paper.modified_at))
        .join(Paper, Paper.id == Affiliation.paper_id)
        .where(Affiliation.institution_id.is_not(None))
        .group_by(institution_chunk)
        .order_by(institution_chunk)
    ):
        chunks.append(SitemapChunk("institutions", int(inumber or 0) + 1, _day(lastmod)))
    return chunks


def sitemap_entries(session: Session, kind: str, number: int, size: int) -> list[SitemapEntry]:
    """The URLs of one child sitemap (see :func:`sitemap_chunks`); empty for an unknown kind."""
    low, high = (number - 1) * size + 1, number * size
    if kind == "papers":
        return [
            SitemapEntry(paper_path(arxiv_id, title), _day(modified))
            for arxiv_id, title, modified in session.execute(
                select(Paper.arxiv_id, Paper.title, Paper.modified_at)
                .where(Paper.id.between(low, high))
                .order_by(Paper.id)
            )
        ]
    if kind == "researchers":
        latest = func.max(Paper.modified_at)
        return [
            SitemapEntry(researcher_path(rid, name), _day(modified))
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
            SitemapEntry(institution_path(iid, name), _day(modified))
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
