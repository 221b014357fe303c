"""Read-side queries about researchers: the researcher page (profile, co-author picture, papers),
what tells namesakes apart, the researchers' list and a follow list's feed. Plain typed values out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from sqlalchemy import ColumnElement, and_, exists, func, or_, select
from sqlalchemy.orm import Session, aliased

from catalog.db import as_date
from catalog.listing import Page, like_pattern
from catalog.models import (
    Affiliation,
    Authorship,
    Institution,
    Paper,
    PaperCategory,
    Researcher,
    ResearcherInstitution,
)
from catalog.names import display_name, person_key
from catalog.papers import PaperSummary, newest_page, newest_summaries
from catalog.urls import institution_path, researcher_path

# Papers with more authors than this are left out of co-author pictures (same bound as the resolver's
# co-author evidence): a 300-author collaboration says little about who works with whom.
MAX_NETWORK_AUTHORS = 50
# The researcher page compares at most this many namesakes (most papers first) and counts the rest.
SAME_NAME_LIMIT = 50


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
        rid: (as_date(first), as_date(last))
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


def told_apart(session: Session, ids: Iterable[int]) -> dict[int, Namesake]:
    """What tells each researcher of ``ids`` apart (a list of co-authors, say): their rows, paper
    counts and :func:`namesakes`, in one batch of grouped statements whatever the number of ids."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    people = {
        p.id: p
        for p in session.execute(
            select(
                Researcher.id, Researcher.display_name, Researcher.h_index, Researcher.citation_count
            ).where(Researcher.id.in_(ids))
        )
    }
    return namesakes(session, people, _paper_counts(session, people))


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
    return newest_page(session, *conditions, total=total, page=page, size=size)


def papers_by_researchers(
    session: Session, researcher_ids: Sequence[int], *, limit: int
) -> list[PaperSummary]:
    """The newest papers with any of ``researcher_ids`` among their authors (a follow list's feed)."""
    if not researcher_ids:
        return []
    authored = select(Authorship.paper_id).where(Authorship.researcher_id.in_(list(researcher_ids)))
    return newest_summaries(session, Paper.id.in_(authored), limit=limit)


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
    if query is not None and (pattern := like_pattern(query)):
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
