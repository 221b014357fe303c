"""Institutions: name keys, resolution (internal id, ROR id, name, alias, acronym), the list and the
institution page's queries.

Every name an institution goes by is stored once more as an ``InstitutionName`` key (see
:func:`institution_key`), so resolving a name is one indexed lookup. Results are plain dataclasses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

from sqlalchemy import exists, func, select, union
from sqlalchemy.orm import Session

from catalog.listing import Page, like_pattern
from catalog.models import (
    Affiliation,
    Authorship,
    Institution,
    InstitutionName,
    Paper,
    Researcher,
    ResearcherInstitution,
)
from catalog.names import fold
from catalog.papers import PaperSummary, newest_page
from catalog.researchers import Namesake, namesakes
from catalog.row_ids import looks_like_row_id, parse_row_id
from catalog.urls import institution_path, researcher_path, row_ident

# ROR ids: "0" + 6 Crockford base32 characters + 2 check digits, e.g. "05dxps055".
_ROR_ID = re.compile(r"^(?:https?://)?(?:www\.)?(?:ror\.org/)?(0[0-9a-hjkmnp-tv-z]{6}[0-9]{2})/?$", re.I)
_PAREN = re.compile(r"\s*\([^)]*\)\s*")
# Lookup order when one key names several institutions: its display name first, acronyms last.
KIND_RANK = {"name": 0, "label": 1, "alias": 2, "acronym": 3}


def institution_key(name: str) -> str:
    """The lookup key of an institution name: accents, case and punctuation folded, the same
    ``catalog.names.fold`` as people's names. ``"Universität Zürich"`` → ``"universitat zurich"``."""
    return fold(name)


def name_variants(name: str) -> list[str]:
    """The keys one name is stored under: itself and, for ROR's ``"Google (United States)"`` style,
    the name without its parenthetical (so a printed "Google" finds it)."""
    keys = [institution_key(name)]
    bare = _PAREN.sub(" ", name).strip()
    if bare and bare != name:
        keys.append(institution_key(bare))
    return [k for k in dict.fromkeys(keys) if k]


def ror_id_of(text: str) -> str | None:
    """The bare ROR id in ``text`` (``https://ror.org/05dxps055``, ``ror.org/05dxps055`` or the id
    alone), lower-cased; None when it is not one."""
    match = _ROR_ID.match(text.strip())
    return match.group(1).lower() if match else None


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


# No slots on these two: the API's Institution document extends InstitutionFacts, and MCP takes a
# returned class's attributes for its fields' defaults (a slot would be taken for one).
@dataclass(frozen=True)
class InstitutionFacts:
    """What is published about an institution: its page, and the API's and MCP's document."""

    id: int
    name: str
    ror_id: str | None
    aliases: list[str]
    acronyms: list[str]
    types: list[str]
    city: str | None
    country_code: str | None
    country_name: str | None
    website: str | None
    established: int | None
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


@dataclass(frozen=True)
class InstitutionDetail(InstitutionFacts):
    """The published facts and what resolving names and enrichment use besides."""

    links: dict[str, object]  # ROR's raw link records (``website`` is the one published)
    status: str | None  # ROR's record status: active, inactive, withdrawn
    openalex_id: str | None


def _detail(row: Institution, papers: int) -> InstitutionDetail:
    return InstitutionDetail(
        id=row.id,
        ror_id=row.ror_id,
        name=row.name,
        aliases=list(row.aliases or []),
        acronyms=list(row.acronyms or []),
        types=list(row.types or []),
        city=row.city,
        country_code=row.country_code,
        country_name=row.country_name,
        website=row.website,
        links=dict(row.links or {}),
        status=row.status,
        established=row.established,
        openalex_id=row.openalex_id,
        papers=papers,
    )


def institution_detail(session: Session, institution_id: int) -> InstitutionDetail | None:
    """The institution page's facts and its number of affiliated papers."""
    row = session.get(Institution, institution_id)
    return _detail(row, count_institution_papers(session, row.id)) if row else None


def find_institutions(session: Session, text: str, *, limit: int = 20) -> list[InstitutionDetail]:
    """Institutions a reference may mean, best first.

    ``text`` may be an internal id (``"42"`` or ``"42-some-slug"``), a ROR id in any of its written
    forms, or a name, alias, acronym or label in any case and accenting. Among several institutions
    with one name, those whose display name it is come first, then labels, aliases, acronyms; active
    records before inactive or withdrawn ones; then those with more papers here.
    """
    text = text.strip()
    if not text:
        return []
    head = row_ident(text)
    if looks_like_row_id(head):  # an id (maybe beyond any row), never a name
        institution_id = parse_row_id(head)
        found = institution_detail(session, institution_id) if institution_id else None
        return [found] if found else []
    ror_id = ror_id_of(text)
    if ror_id:
        row = session.execute(select(Institution).where(Institution.ror_id == ror_id)).scalar_one_or_none()
        if row is not None:
            return [_detail(row, count_institution_papers(session, row.id))]
    keys = name_variants(text)
    rows = session.execute(
        select(Institution, InstitutionName.kind)
        .join(InstitutionName, InstitutionName.institution_id == Institution.id)
        .where(InstitutionName.name_key.in_(keys))
    ).all()
    # Among namesakes ("MIT": Massachusetts, Melbourne …) the one with most papers here comes first.
    papers = dict(
        session.execute(
            select(Affiliation.institution_id, func.count(func.distinct(Affiliation.paper_id)))
            .where(Affiliation.institution_id.in_({i.id for i, _ in rows}))
            .group_by(Affiliation.institution_id)
        ).all()
    )
    best: dict[int, tuple[tuple[int, int, int, int], Institution]] = {}
    for institution, kind in rows:
        active = 0 if institution.status in (None, "active") else 1
        rank = (KIND_RANK.get(kind, 9), active, -papers.get(institution.id, 0), institution.id)
        held = best.get(institution.id)
        if held is None or rank < held[0]:
            best[institution.id] = (rank, institution)
    ordered = sorted(best.values(), key=lambda item: item[0])
    return [_detail(institution, papers.get(institution.id, 0)) for _, institution in ordered[:limit]]


def resolve_institution(session: Session, text: str) -> InstitutionDetail | None:
    """The one institution ``text`` names (see :func:`find_institutions`), or None."""
    found = find_institutions(session, text, limit=1)
    return found[0] if found else None


# -- what an institution page lists --------------------------------------------------------------


def _paper_ids(institution_id: int) -> Any:
    return select(Affiliation.paper_id).where(Affiliation.institution_id == institution_id).distinct()


def count_institution_papers(session: Session, institution_id: int) -> int:
    return session.execute(
        select(func.count()).select_from(_paper_ids(institution_id).subquery())
    ).scalar_one()


def institution_papers(
    session: Session, institution_id: int, *, page: int = 1, size: int = 24
) -> Page[PaperSummary]:
    """Papers with at least one author affiliated with the institution, newest first."""
    total = count_institution_papers(session, institution_id)
    return newest_page(session, Paper.id.in_(_paper_ids(institution_id)), total=total, page=page, size=size)


@dataclass(frozen=True, slots=True)
class AffiliatedResearcher:
    id: int
    name: str
    papers: int  # papers in this archive on which they list this institution
    h_index: int | None
    citation_count: int | None = None
    told: Namesake | None = None  # years and fields, to tell namesakes on the list apart

    @property
    def path(self) -> str:
        return researcher_path(self.id, self.name)


def institution_researchers(
    session: Session, institution_id: int, *, limit: int = 100
) -> list[AffiliatedResearcher]:
    """Researchers who list the institution on a paper here (most such papers first), then those
    OpenAlex knows to be affiliated (``ResearcherInstitution``) with no paper here."""
    on_papers = (
        select(Authorship.researcher_id.label("rid"), Affiliation.paper_id.label("pid"))
        .join(
            Affiliation,
            (Affiliation.paper_id == Authorship.paper_id)
            & (Affiliation.author_position == Authorship.position),
        )
        .where(Affiliation.institution_id == institution_id, Authorship.researcher_id.is_not(None))
        .distinct()
        .subquery()
    )
    counted = session.execute(
        select(
            Researcher.id,
            Researcher.display_name,
            Researcher.h_index,
            Researcher.citation_count,
            func.count(on_papers.c.pid),
        )
        .join(on_papers, on_papers.c.rid == Researcher.id)
        .group_by(Researcher.id, Researcher.display_name, Researcher.h_index, Researcher.citation_count)
        .order_by(func.count(on_papers.c.pid).desc(), Researcher.id)
        .limit(limit)
    ).all()
    result = [AffiliatedResearcher(rid, name, n, h, cited) for rid, name, h, cited, n in counted]
    if len(result) < limit:
        seen = union(
            select(on_papers.c.rid), select(Researcher.id).where(Researcher.id.in_([r.id for r in result]))
        )
        known = session.execute(
            select(Researcher.id, Researcher.display_name, Researcher.h_index, Researcher.citation_count)
            .join(ResearcherInstitution, ResearcherInstitution.researcher_id == Researcher.id)
            .where(ResearcherInstitution.institution_id == institution_id, Researcher.id.not_in(seen))
            .distinct()
            .order_by(Researcher.id)
            .limit(limit - len(result))
        ).all()
        result += [AffiliatedResearcher(rid, name, 0, h, cited) for rid, name, h, cited in known]
    # One batch of grouped statements for the whole list, as on the researchers' search page.
    rows = {
        r.id: SimpleNamespace(display_name=r.name, h_index=r.h_index, citation_count=r.citation_count)
        for r in result
    }
    told = namesakes(session, rows, {r.id: r.papers for r in result})
    return [replace(r, told=told.get(r.id)) for r in result]


# -- the list and the institution page ------------------------------------------------------------


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
    if query is not None and (pattern := like_pattern(query.replace("&", " and "))):  # as institution_key
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
