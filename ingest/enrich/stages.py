"""The enrichment runs behind ``python -m ingest enrich``: which papers and researchers are due, in
batches, one short write transaction per batch.

Incremental: a paper or researcher is due for a source when that source has no record of it yet, or
its record is older than ``refresh_days``. A batch whose request fails (after the client's retries)
writes nothing, so it is due again next run; the rest of the run goes on. Idempotent: the same answers
merged again change nothing (see :mod:`ingest.enrich.merge`).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field

from sqlalchemy import Engine, and_, or_, select, update
from sqlalchemy.orm import Session

from catalog.enrichment import OPENALEX, SEMANTIC_SCHOLAR, PaperEnrichment, ResearcherEnrichment
from catalog.models import Affiliation, Paper, Researcher
from ingest.enrich import merge
from ingest.enrich.affiliations import AffiliationMatcher, Matcher
from ingest.enrich.openalex import OpenAlexClient, arxiv_doi, bare_doi
from ingest.enrich.semanticscholar import SemanticScholarClient, paper_key
from ingest.enrich.transport import EnrichmentError, NotFound

log = logging.getLogger(__name__)
Progress = Callable[[int], None]


@dataclass
class StageSummary:
    label: str
    due: int = 0
    found: int = 0
    not_found: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    merge: merge.MergeCounts = field(default_factory=merge.MergeCounts)

    def __str__(self) -> str:
        m = self.merge
        return (
            f"{self.found} found, {self.not_found} not found, {self.failed} failed; "
            f"{m.identities} ids set, {m.roles} positions, {m.affiliations} affiliations, "
            f"{m.merged} merged, {m.split} split, {m.conflicts} conflicts"
        )


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _cutoff(refresh_days: int) -> dt.datetime:
    return _now() - dt.timedelta(days=refresh_days)


def due_papers(
    session: Session, source: str, cutoff: dt.datetime, limit: int | None, arxiv_ids: Sequence[str] = ()
) -> list[int]:
    """Ids of papers this source has not answered for since ``cutoff`` (or the papers named)."""
    query = (
        select(Paper.id)
        .outerjoin(
            PaperEnrichment, and_(PaperEnrichment.paper_id == Paper.id, PaperEnrichment.source == source)
        )
        .order_by(Paper.id)
    )
    if arxiv_ids:
        query = query.where(Paper.arxiv_id.in_(list(arxiv_ids)))
    else:
        query = query.where(or_(PaperEnrichment.paper_id.is_(None), PaperEnrichment.checked_at < cutoff))
    return list(session.execute(query.limit(limit)).scalars())


def due_researchers(session: Session, source: str, cutoff: dt.datetime, limit: int | None) -> list[int]:
    """Researchers with an id of this source whose profile is missing or older than ``cutoff``."""
    column = getattr(Researcher, merge.ID_COLUMN[source])
    query = (
        select(Researcher.id)
        .outerjoin(
            ResearcherEnrichment,
            and_(ResearcherEnrichment.researcher_id == Researcher.id, ResearcherEnrichment.source == source),
        )
        .where(column.is_not(None))
        .where(
            or_(
                ResearcherEnrichment.researcher_id.is_(None),
                ResearcherEnrichment.checked_at < cutoff,
                ResearcherEnrichment.external_id.is_(None),
                ResearcherEnrichment.external_id != column,  # the id changed since (a merge, a split)
            )
        )
        .order_by(Researcher.id)
        .limit(limit)
    )
    return list(session.execute(query).scalars())


@dataclass
class Enricher:
    """Runs the stages against one catalogue with the given clients (either may be None)."""

    engine: Engine
    _: KW_ONLY
    openalex: OpenAlexClient | None = None
    semanticscholar: SemanticScholarClient | None = None
    matcher: Matcher | None = None
    refresh_days: int = 30
    batch_size: int = 50

    def __post_init__(self) -> None:
        self._writer = self.engine.execution_options(sqlite_begin="IMMEDIATE")

    # -- selection -------------------------------------------------------------------------------

    def due_papers(
        self, source: str, *, limit: int | None = None, arxiv_ids: Sequence[str] = ()
    ) -> list[int]:
        with Session(self.engine) as session:
            return due_papers(session, source, _cutoff(self.refresh_days), limit, arxiv_ids)

    def due_researchers(self, source: str, *, limit: int | None = None) -> list[int]:
        with Session(self.engine) as session:
            return due_researchers(session, source, _cutoff(self.refresh_days), limit)

    # -- papers ----------------------------------------------------------------------------------

    def papers(self, source: str, ids: Sequence[int], on_progress: Progress | None = None) -> StageSummary:
        summary = StageSummary(f"papers from {source}", due=len(ids))
        for start in range(0, len(ids), self.batch_size):
            chunk = list(ids[start : start + self.batch_size])
            with Session(self.engine) as session:
                papers = session.execute(
                    select(Paper.id, Paper.arxiv_id, Paper.doi).where(Paper.id.in_(chunk))
                ).all()
            try:
                answers = self._fetch_works(source, [(p.id, p.arxiv_id, p.doi) for p in papers])
            except EnrichmentError as exc:
                summary.failed += len(chunk)
                summary.errors.append(str(exc))
                log.warning("%s", exc)
            else:
                self._write_papers(source, answers, summary)
            if on_progress:
                on_progress(len(chunk))
        return summary

    def _fetch_works(
        self, source: str, papers: list[tuple[int, str, str | None]]
    ) -> dict[int, merge.WorkFacts | None]:
        if source == OPENALEX:
            assert self.openalex is not None
            dois = [d for _pid, arxiv_id, doi in papers for d in (arxiv_doi(arxiv_id), bare_doi(doi)) if d]
            works = self.openalex.works_by_doi(dois)
            answers: dict[int, merge.WorkFacts | None] = {}
            for pid, arxiv_id, doi in papers:
                work = works.get(arxiv_doi(arxiv_id)) or works.get(bare_doi(doi) or "")
                answers[pid] = merge.work_from_openalex(work) if work else None
            return answers
        assert source == SEMANTIC_SCHOLAR and self.semanticscholar is not None
        keys = [paper_key(arxiv_id) for _pid, arxiv_id, _doi in papers]
        found = self.semanticscholar.papers(keys)
        return {
            pid: merge.work_from_semanticscholar(paper) if paper else None
            for (pid, _a, _d), paper in zip(papers, found, strict=True)
        }

    def _write_papers(
        self, source: str, answers: dict[int, merge.WorkFacts | None], summary: StageSummary
    ) -> None:
        merger = merge.Merger(self.matcher)
        now = _now()
        with Session(self._writer) as session, session.begin():
            for pid, facts in answers.items():
                merger.paper(session, pid, source, facts, now)
                if facts:
                    summary.found += 1
                else:
                    summary.not_found += 1
        summary.merge.add(merger.counts)

    # -- researchers -----------------------------------------------------------------------------

    def researchers(
        self, source: str, ids: Sequence[int], on_progress: Progress | None = None
    ) -> StageSummary:
        summary = StageSummary(f"researchers from {source}", due=len(ids))
        column = getattr(Researcher, merge.ID_COLUMN[source])
        for start in range(0, len(ids), self.batch_size):
            chunk = list(ids[start : start + self.batch_size])
            with Session(self.engine) as session:
                rows = session.execute(select(Researcher.id, column).where(Researcher.id.in_(chunk)))
                held: dict[int, str] = dict(rows.all())
            try:
                answers = self._fetch_profiles(source, held)
            except EnrichmentError as exc:
                summary.failed += len(chunk)
                summary.errors.append(str(exc))
                log.warning("%s", exc)
            else:
                merger = merge.Merger(self.matcher)
                now = _now()
                with Session(self._writer) as session, session.begin():
                    for rid, facts in answers.items():
                        merger.researcher(session, rid, source, facts, now, asked=held[rid])
                        if facts and not facts.empty:
                            summary.found += 1
                        else:
                            summary.not_found += 1
                summary.merge.add(merger.counts)
            if on_progress:
                on_progress(len(chunk))
        return summary

    def _fetch_profiles(self, source: str, held: dict[int, str]) -> dict[int, merge.ProfileFacts | None]:
        answers: dict[int, merge.ProfileFacts | None] = {}
        if source == OPENALEX:
            assert self.openalex is not None
            authors = self.openalex.authors_by_id(list(held.values()))
            for rid, external in held.items():
                profile = authors.get(external)
                if profile is None:  # merged into another profile: the single lookup follows the redirect
                    try:
                        profile = self.openalex.author(external)
                    except NotFound:
                        profile = None
                answers[rid] = merge.profile_from_openalex(profile) if profile else None
            return answers
        assert source == SEMANTIC_SCHOLAR and self.semanticscholar is not None
        rids = list(held)
        for rid, author in zip(rids, self.semanticscholar.authors([held[r] for r in rids]), strict=True):
            answers[rid] = merge.profile_from_semanticscholar(author) if author else None
        return answers


# -- printed affiliations ----------------------------------------------------------------------------


@dataclass
class AffiliationSummary:
    rows: int = 0
    strings: int = 0
    matched_rows: int = 0
    matched_strings: int = 0

    def __str__(self) -> str:
        return (
            f"{self.matched_strings} of {self.strings} distinct strings matched "
            f"({self.matched_rows} of {self.rows} affiliation rows)"
        )


def match_affiliations(
    engine: Engine, matcher: AffiliationMatcher, *, rematch: bool = False
) -> AffiliationSummary:
    """Match printed affiliations (sources other than OpenAlex, which names its institutions) that
    have no institution yet; ``rematch`` redoes every printed one (after a new ROR import or threshold).
    Each distinct string is matched once; rows are updated in one transaction."""
    summary = AffiliationSummary()
    with Session(engine) as session:
        query = select(Affiliation.id, Affiliation.raw).where(Affiliation.source != OPENALEX)
        if not rematch:
            query = query.where(Affiliation.institution_id.is_(None))
        rows = session.execute(query).all()
    by_string: dict[str, list[int]] = {}
    for aid, raw in rows:
        by_string.setdefault(raw, []).append(aid)
    summary.rows, summary.strings = len(rows), len(by_string)
    updates: list[dict[str, object]] = []
    for raw, ids in by_string.items():
        match = matcher.match(raw)
        if match is not None and match.institution_id is not None:
            summary.matched_strings += 1
            summary.matched_rows += len(ids)
            score = round(match.score / 100, 4)
            updates += [{"id": i, "institution_id": match.institution_id, "score": score} for i in ids]
        elif rematch:
            updates += [{"id": i, "institution_id": None, "score": None} for i in ids]
    if updates:  # an ORM bulk UPDATE by primary key: one executemany
        with Session(engine.execution_options(sqlite_begin="IMMEDIATE")) as session, session.begin():
            session.execute(update(Affiliation), updates)
    return summary
