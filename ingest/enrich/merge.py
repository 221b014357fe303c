"""Merge what OpenAlex and Semantic Scholar say about papers and researchers into the catalogue.

What each source said is kept per source (``paper_enrichments``, ``researcher_enrichments``); the
figures on ``Paper`` and ``Researcher`` are recomputed from those rows by the conflict rule below,
so the result does not depend on the order sources ran in, and merging the same answer twice changes
nothing. Unknown stays None: a figure is never 0 because a source was silent.

The conflict rule (also in ``docs/ingest.md``, Enrichment):

- **Researcher figures** (h-index, citations, works total) are taken together from ONE source's
  profile, so the three numbers describe the same profile: the profile with the most of the three
  figures known wins; on a tie OpenAlex (ORCID-linked author profiles with affiliations) beats
  Semantic Scholar. Empty profiles (OpenAlex's "Deleted Author", zero works) do not count.
  ``metrics_source`` names the source of all three.
- **Paper citation count**: the larger known count, with its source in ``citation_source``. Each
  source undercounts (missing citing works, preprint and published versions split), neither counts
  citations that do not exist, so the larger is the better estimate.
- **Identities**: OpenAlex sets ``openalex_id``, Semantic Scholar ``semantic_scholar_id``; an ORCID
  comes from either. An id is never overwritten by a different one: a different ORCID, or a different
  id of the same source, means a different person. So when a source says an authorship belongs to a
  person whose ids disagree with the researcher it was resolved to, the authorship moves to the
  researcher holding those ids, or to a new researcher with the same name (``split``). When one
  source id or ORCID ends up on two researchers, they are one person: the higher id is merged into
  the lower (authorships repointed, ``merged``), unless they carry different ORCIDs or different ids
  of a source (then nothing is merged and a ``conflict`` is recorded). Every decision is a
  ``researcher_changes`` row.
- **Author positions**: OpenAlex's ``author_position`` (first / middle / last) replaces the role
  derived from arXiv's order (``role_source = "openalex"``).
- **Affiliations**: OpenAlex's per-authorship institutions (with ROR ids) become ``Affiliation``
  rows with source ``openalex`` and score 1.0; a printed string OpenAlex left unresolved is matched
  by :mod:`ingest.enrich.affiliations` (score = match score / 100). ROR stays the authority for an
  institution's own fields.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz
from sqlalchemy import ScalarResult, delete, or_, select, update
from sqlalchemy.orm import Session

from catalog.enrichment import (
    OPENALEX,
    SEMANTIC_SCHOLAR,
    SOURCES,
    PaperEnrichment,
    ResearcherChange,
    ResearcherEnrichment,
    move_researcher_references,
)
from catalog.models import Affiliation, Authorship, Paper, Researcher, ResearcherInstitution
from catalog.names import fold, person_key
from ingest.enrich import openalex, semanticscholar
from ingest.enrich.affiliations import Matcher
from ingest.enrich.institutions import ensure_institution
from ingest.enrich.openalex import InstitutionRef
from people.names import block_of
from people.writes import preferred_names

ID_COLUMN = {OPENALEX: "openalex_id", SEMANTIC_SCHOLAR: "semantic_scholar_id"}
IDENTITIES = ("orcid", "openalex_id", "semantic_scholar_id")
ROLES = frozenset({"first", "middle", "last"})


# -- what a source says, in one shape for both sources ---------------------------------------------


@dataclass(frozen=True, slots=True)
class AffiliationFacts:
    raw: str  # as printed, or the institution's name when the source gave no string
    institutions: tuple[InstitutionRef, ...] = ()


@dataclass(frozen=True, slots=True)
class AuthorFacts:
    index: int  # position in the source's author list
    name: str
    external_id: str | None = None
    orcid: str | None = None
    role: str | None = None  # first | middle | last (OpenAlex)
    affiliations: tuple[AffiliationFacts, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkFacts:
    source: str
    external_id: str
    citation_count: int | None
    authors: tuple[AuthorFacts, ...] = ()


@dataclass(frozen=True, slots=True)
class ProfileFacts:
    source: str
    external_id: str
    name: str
    orcid: str | None
    h_index: int | None
    citation_count: int | None
    works_count: int | None
    institutions: tuple[tuple[InstitutionRef, tuple[int, ...]], ...] = ()
    empty: bool = False  # a deleted / merged-away profile: no figures


def work_from_openalex(work: openalex.Work) -> WorkFacts:
    authors = []
    for a in work.authorships:
        by_id = {i.openalex_id: i for i in a.institutions if i.openalex_id}
        if a.affiliations:
            affiliations = [
                AffiliationFacts(raw, tuple(by_id[i] for i in ids if i in by_id))
                for raw, ids in a.affiliations
            ]
            named = {i for _raw, ids in a.affiliations for i in ids}
            affiliations += [
                AffiliationFacts(i.name, (i,)) for i in a.institutions if i.openalex_id not in named
            ]
        else:  # older answers: institutions and printed strings are not paired
            affiliations = [AffiliationFacts(i.name, (i,)) for i in a.institutions]
            if not a.institutions:
                affiliations += [AffiliationFacts(raw) for raw in a.raw_affiliations]
        authors.append(
            AuthorFacts(
                index=a.index,
                name=a.raw_name or a.name,
                external_id=a.author_id,
                orcid=a.orcid,
                role=a.author_position if a.author_position in ROLES else None,
                affiliations=tuple(f for f in affiliations if f.raw),
            )
        )
    return WorkFacts(OPENALEX, work.id, work.cited_by_count, tuple(authors))


def work_from_semanticscholar(paper: semanticscholar.Paper) -> WorkFacts:
    return WorkFacts(
        SEMANTIC_SCHOLAR,
        paper.paper_id,
        paper.citation_count,
        tuple(AuthorFacts(i, a.name, a.author_id) for i, a in enumerate(paper.authors)),
    )


def profile_from_openalex(author: openalex.Author) -> ProfileFacts:
    return ProfileFacts(
        OPENALEX,
        author.id,
        author.display_name,
        author.orcid,
        author.h_index,
        author.cited_by_count,
        author.works_count,
        author.affiliations,
        empty=author.is_deleted,
    )


def profile_from_semanticscholar(author: semanticscholar.Author) -> ProfileFacts:
    return ProfileFacts(
        SEMANTIC_SCHOLAR,
        author.author_id,
        author.name,
        author.orcid,
        author.h_index,
        author.citation_count,
        author.paper_count,
        empty=not author.paper_count and not author.citation_count,
    )


# -- names -----------------------------------------------------------------------------------------


def _name_words(name: str) -> list[str]:
    if "," in name:  # "Lála, Jakub" (how OpenAlex prints some raw names)
        last, first = name.split(",", 1)
        name = f"{first} {last}"
    return fold(name).split()


def same_person_name(a: str, b: str) -> bool:
    """Whether two written names can be one person: the same words in any order (up to a letter or
    two: "Łukasz"/"Lukasz"), or the same surname and first initial ("Noam Shazeer" / "Noam M.
    Shazeer", "I. Polosukhin" / "Illia Polosukhin")."""
    wa, wb = _name_words(a), _name_words(b)
    if not wa or not wb:
        return False
    if fuzz.token_sort_ratio(" ".join(wa), " ".join(wb)) >= 90:
        return True
    return wa[-1] == wb[-1] and wa[0][0] == wb[0][0]


def align(ours: Sequence[str], theirs: Sequence[str]) -> dict[int, int]:
    """{index in ``theirs`` → index in ``ours``} for authors that are the same person: by position
    where the names agree, otherwise the first unclaimed author with a compatible name."""
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    for i, name in enumerate(theirs):
        if i < len(ours) and i not in taken and same_person_name(ours[i], name):
            pairs[i] = i
            taken.add(i)
    for i, name in enumerate(theirs):
        if i in pairs:
            continue
        for j, ours_name in enumerate(ours):
            if j not in taken and same_person_name(ours_name, name):
                pairs[i] = j
                taken.add(j)
                break
    return pairs


# -- the merge -------------------------------------------------------------------------------------


@dataclass
class MergeCounts:
    identities: int = 0  # researcher ids newly set
    roles: int = 0  # author positions taken from OpenAlex
    affiliations: int = 0  # affiliation rows written
    merged: int = 0
    split: int = 0
    conflicts: int = 0
    unmatched_authors: int = 0  # a source's author with no compatible name on our paper

    def add(self, other: MergeCounts) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Merger:
    """Applies source answers to a session; the caller owns the transaction."""

    matcher: Matcher | None = None
    counts: MergeCounts = field(default_factory=MergeCounts)

    # papers ------------------------------------------------------------------------------------

    def paper(
        self, session: Session, paper_id: int, source: str, facts: WorkFacts | None, now: dt.datetime
    ) -> None:
        """Record one source's answer for a paper (None: the source has no such paper) and apply it."""
        record = session.get(PaperEnrichment, (paper_id, source)) or PaperEnrichment(
            paper_id=paper_id, source=source
        )
        record.status = "found" if facts else "not_found"
        record.external_id = facts.external_id if facts else None
        record.citation_count = facts.citation_count if facts else None
        record.checked_at = now
        session.add(record)
        session.flush()
        paper = session.get(Paper, paper_id)
        if paper is None:
            return
        if facts and source == OPENALEX:
            paper.openalex_id = facts.external_id
        recompute_paper(session, paper)
        if facts:
            self._authors(session, paper, facts)

    def _authors(self, session: Session, paper: Paper, facts: WorkFacts) -> None:
        ours = list(
            session.execute(
                select(Authorship).where(Authorship.paper_id == paper.id).order_by(Authorship.position)
            ).scalars()
        )
        pairs = align([a.name for a in ours], [a.name for a in facts.authors])
        self.counts.unmatched_authors += len(facts.authors) - len(pairs)
        affiliations: dict[tuple[int, str], Affiliation] = {}
        for theirs_index, ours_index in sorted(pairs.items()):
            author = facts.authors[theirs_index]
            authorship = ours[ours_index]
            if author.role and (authorship.role != author.role or authorship.role_source != OPENALEX):
                authorship.role = author.role
                authorship.role_source = OPENALEX
                self.counts.roles += 1
            if authorship.researcher_id is not None and (author.external_id or author.orcid):
                self._claim(session, authorship, facts.source, author.external_id, author.orcid)
            for fact in author.affiliations:
                row = self._affiliation(session, paper.id, authorship.position, fact, facts.source)
                if row is not None:
                    affiliations.setdefault((authorship.position, row.raw), row)
        if facts.source == OPENALEX:
            session.execute(
                delete(Affiliation).where(Affiliation.paper_id == paper.id, Affiliation.source == OPENALEX)
            )
            session.add_all(affiliations.values())
            self.counts.affiliations += len(affiliations)

    def _affiliation(
        self, session: Session, paper_id: int, position: int, fact: AffiliationFacts, source: str
    ) -> Affiliation | None:
        if source != OPENALEX:
            return None
        institution_id: int | None = None
        score: float | None = None
        for ref in fact.institutions:
            institution_id = _institution(session, ref)
            if institution_id is not None:
                score = 1.0
                break
        if institution_id is None and self.matcher is not None:
            match = self.matcher.match(fact.raw)
            if match is not None and match.institution_id is not None:
                institution_id, score = match.institution_id, round(match.score / 100, 4)
        return Affiliation(
            paper_id=paper_id,
            author_position=position,
            raw=fact.raw[:4000],
            institution_id=institution_id,
            source=source,
            score=score,
        )

    # researchers -------------------------------------------------------------------------------

    def researcher(
        self,
        session: Session,
        researcher_id: int,
        source: str,
        facts: ProfileFacts | None,
        now: dt.datetime,
        *,
        asked: str | None = None,
    ) -> int | None:
        """Record one source's profile of a researcher (None: no such profile for the id ``asked``)
        and apply it; returns the researcher's id afterwards (it changes when merged into another)."""
        if session.get(Researcher, researcher_id) is None:
            return None  # merged away earlier in this run
        found = facts is not None and not facts.empty
        record = session.get(ResearcherEnrichment, (researcher_id, source)) or ResearcherEnrichment(
            researcher_id=researcher_id, source=source
        )
        record.status = "found" if found else "not_found"
        record.external_id = facts.external_id if facts else asked
        record.orcid = facts.orcid if found and facts else None
        record.h_index = facts.h_index if found and facts else None
        record.citation_count = facts.citation_count if found and facts else None
        record.works_count = facts.works_count if found and facts else None
        record.checked_at = now
        session.add(record)
        session.flush()
        current = researcher_id
        if found and facts:
            incoming = {ID_COLUMN[source]: facts.external_id, "orcid": facts.orcid}
            current = self._adopt(session, researcher_id, incoming, source, facts.external_id)
            if source == OPENALEX and facts.institutions:
                self._institutions(session, current, facts.institutions)
        researcher = session.get(Researcher, current)
        if researcher is not None:
            recompute_researcher(session, researcher)
        return current

    def _institutions(
        self,
        session: Session,
        researcher_id: int,
        institutions: Sequence[tuple[InstitutionRef, tuple[int, ...]]],
    ) -> None:
        session.execute(
            delete(ResearcherInstitution).where(
                ResearcherInstitution.researcher_id == researcher_id, ResearcherInstitution.source == OPENALEX
            )
        )
        years: dict[int, set[int]] = {}
        for ref, when in institutions:
            iid = _institution(session, ref)
            if iid is not None:
                years.setdefault(iid, set()).update(when)
        session.add_all(
            ResearcherInstitution(
                researcher_id=researcher_id,
                institution_id=iid,
                source=OPENALEX,
                years=[str(y) for y in sorted(ys, reverse=True)],
            )
            for iid, ys in years.items()
        )

    # identities --------------------------------------------------------------------------------

    def _claim(
        self,
        session: Session,
        authorship: Authorship,
        source: str,
        external_id: str | None,
        orcid: str | None,
    ) -> None:
        """A source says this authorship is the person with these ids."""
        incoming = {ID_COLUMN[source]: external_id, "orcid": orcid}
        researcher = session.get(Researcher, authorship.researcher_id)
        if researcher is None:
            return
        if _agrees(researcher, incoming):
            self._adopt(session, researcher.id, incoming, source, external_id)
            return
        # The researcher this author string resolved to is someone else for this source.
        target = next(
            (h for h in _holders(session, incoming, exclude=researcher.id) if _agrees(h, incoming)), None
        )
        if target is None:
            target = Researcher(
                display_name=authorship.name,
                name_key=person_key(authorship.name) or researcher.name_key,
                block_key=block_of(authorship.name) or researcher.block_key,
                created_at=_now(),
            )
            session.add(target)
            session.flush()
        old = researcher.id
        authorship.researcher_id = target.id
        self._record(session, "split", target.id, old, source, external_id, _why(researcher, incoming))
        self.counts.split += 1
        session.flush()
        self._adopt(session, target.id, incoming, source, external_id)

    def _adopt(
        self,
        session: Session,
        researcher_id: int,
        incoming: dict[str, str | None],
        source: str,
        external_id: str | None,
    ) -> int:
        """Give the researcher the ids it lacks, then merge any other researcher holding them.
        Returns the surviving id (the lower one after a merge)."""
        researcher = session.get(Researcher, researcher_id)
        assert researcher is not None
        for column, value in incoming.items():
            if value and getattr(researcher, column) is None:
                setattr(researcher, column, value)
                self.counts.identities += 1
            elif value and getattr(researcher, column) != value and column != ID_COLUMN[source]:
                self._record(
                    session, "conflict", researcher.id, researcher.id, source, external_id,
                    f"{column} {value} offered, {getattr(researcher, column)} kept",
                )  # fmt: skip
            elif value and getattr(researcher, column) != value:
                # The source's own id changed (OpenAlex redirects a merged author to its new id).
                setattr(researcher, column, value)
        session.flush()
        survivor = researcher
        for other in _holders(session, incoming, exclude=researcher.id):
            survivor = self._merge_pair(session, survivor, other, source, external_id)
        return survivor.id

    def _merge_pair(
        self, session: Session, a: Researcher, b: Researcher, source: str, external_id: str | None
    ) -> Researcher:
        keep, gone = (a, b) if a.id < b.id else (b, a)
        clash = [
            c
            for c in IDENTITIES
            if getattr(keep, c) and getattr(gone, c) and getattr(keep, c) != getattr(gone, c)
        ]
        if clash:
            detail = "; ".join(f"{c}: {getattr(keep, c)} vs {getattr(gone, c)}" for c in clash)
            self._record(session, "conflict", gone.id, keep.id, source, external_id, detail)
            return a
        for column in IDENTITIES:
            if getattr(keep, column) is None and getattr(gone, column) is not None:
                setattr(keep, column, getattr(gone, column))
        gone_id = gone.id
        session.execute(
            update(Authorship).where(Authorship.researcher_id == gone_id).values(researcher_id=keep.id),
            execution_options={"synchronize_session": "fetch"},
        )
        # The merged person is shown under the most complete spelling of both (not the older row's).
        keep.display_name = preferred_names(session.connection(), [keep.id]).get(keep.id, keep.display_name)
        # One profile a source: the survivor's, unless only the other one was found.
        kept_sources = {r.source: r for r in _enrichments(session, keep.id)}
        for record in _enrichments(session, gone_id):
            mine = kept_sources.get(record.source)
            if mine is None or (record.status == "found" and mine.status != "found"):
                target = mine or ResearcherEnrichment(researcher_id=keep.id, source=record.source)
                for column in (
                    "status",
                    "external_id",
                    "orcid",
                    "h_index",
                    "citation_count",
                    "works_count",
                    "checked_at",
                ):
                    setattr(target, column, getattr(record, column))
                session.add(target)
        session.flush()
        session.execute(
            update(ResearcherChange)
            .where(ResearcherChange.kind == "merged", ResearcherChange.other_id == gone_id)
            .values(other_id=keep.id),
            execution_options={"synchronize_session": False},
        )
        self._record(
            session, "merged", gone_id, keep.id, source, external_id,
            f"{gone.display_name!r} shares {_shared(keep, gone)} with {keep.display_name!r}",
        )  # fmt: skip
        session.flush()
        # Follows, "this is me" claims, affiliations over time (one the survivor holds is kept once) …
        move_researcher_references(session.connection(), [(gone_id, keep.id)])
        # A bulk delete: the ORM would otherwise null the FKs of authorships it still holds for ``gone``.
        session.execute(
            delete(Researcher).where(Researcher.id == gone_id),
            execution_options={"synchronize_session": "fetch"},
        )
        session.flush()
        self.counts.merged += 1
        recompute_researcher(session, keep)
        return keep

    def _record(
        self,
        session: Session,
        kind: str,
        researcher_id: int,
        other_id: int,
        source: str,
        external_id: str | None,
        detail: str,
    ) -> None:
        exists = session.execute(
            select(ResearcherChange.id).where(
                ResearcherChange.kind == kind,
                ResearcherChange.researcher_id == researcher_id,
                ResearcherChange.other_id == other_id,
                ResearcherChange.detail == detail,
            )
        ).first()
        if exists is None:
            session.add(
                ResearcherChange(
                    kind=kind,
                    researcher_id=researcher_id,
                    other_id=other_id,
                    source=source,
                    external_id=external_id,
                    detail=detail,
                    created_at=_now(),
                )
            )
            if kind == "conflict":
                self.counts.conflicts += 1


def _enrichments(session: Session, researcher_id: int) -> ScalarResult[ResearcherEnrichment]:
    """One researcher's profiles, one a source."""
    return session.execute(
        select(ResearcherEnrichment).where(ResearcherEnrichment.researcher_id == researcher_id)
    ).scalars()


def _agrees(researcher: Researcher, incoming: dict[str, str | None]) -> bool:
    return all(not v or getattr(researcher, c) in (None, v) for c, v in incoming.items())


def _holders(session: Session, incoming: dict[str, str | None], *, exclude: int) -> list[Researcher]:
    """Other researchers holding any of these ids, lowest id first."""
    conditions = [getattr(Researcher, c) == v for c, v in incoming.items() if v]
    if not conditions:
        return []
    return list(
        session.execute(
            select(Researcher).where(or_(*conditions), Researcher.id != exclude).order_by(Researcher.id)
        ).scalars()
    )


def _why(researcher: Researcher, incoming: dict[str, str | None]) -> str:
    return "; ".join(
        f"{c} {v} ≠ {getattr(researcher, c)}"
        for c, v in incoming.items()
        if v and getattr(researcher, c) not in (None, v)
    )


def _shared(a: Researcher, b: Researcher) -> str:
    return ", ".join(
        f"{c} {getattr(a, c)}" for c in IDENTITIES if getattr(a, c) and getattr(a, c) == getattr(b, c)
    )


# -- the figures shown, from the per-source records --------------------------------------------


def _preference(source: str) -> int:
    return SOURCES.index(source) if source in SOURCES else len(SOURCES)


def recompute_paper(session: Session, paper: Paper) -> None:
    """``citation_count`` / ``citation_source`` from the sources' records (the larger known count)."""
    rows = session.execute(
        select(PaperEnrichment).where(
            PaperEnrichment.paper_id == paper.id,
            PaperEnrichment.status == "found",
            PaperEnrichment.citation_count.is_not(None),
        )
    ).scalars()
    best = min(rows, key=lambda r: (-(r.citation_count or 0), _preference(r.source)), default=None)
    paper.citation_count = best.citation_count if best else None
    paper.citation_source = best.source if best else None


def recompute_researcher(session: Session, researcher: Researcher) -> None:
    """h-index, citations and works total from ONE source's profile (see the module docstring)."""
    rows = session.execute(
        select(ResearcherEnrichment).where(
            ResearcherEnrichment.researcher_id == researcher.id, ResearcherEnrichment.status == "found"
        )
    ).scalars()
    usable = [r for r in rows if r.works_count or r.citation_count]

    def completeness(r: ResearcherEnrichment) -> tuple[int, int]:
        known = sum(v is not None for v in (r.h_index, r.citation_count, r.works_count))
        return (-known, _preference(r.source))

    best = min(usable, key=completeness, default=None)
    researcher.h_index = best.h_index if best else None
    researcher.citation_count = best.citation_count if best else None
    researcher.works_count = best.works_count if best else None
    researcher.metrics_source = best.source if best else None
    researcher.metrics_updated_at = best.checked_at if best else None


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _institution(session: Session, ref: InstitutionRef) -> int | None:
    """The catalogue id of an institution OpenAlex named (created from the reference if new)."""
    return ensure_institution(
        session.connection(),
        ror_id=ref.ror_id,
        openalex_id=ref.openalex_id,
        name=ref.name,
        country_code=ref.country_code,
        type_=ref.type,
    )
