"""ROR import, institution resolution, affiliation matching and the enrichment merge, on SQLite and
PostgreSQL (the ``engine`` fixture), with OpenAlex and Semantic Scholar served from recorded data."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from accounts.models import Follow, Person
from app.main import create_app
from catalog.db import make_engine, migrate
from catalog.enrichment import (
    PaperEnrichment,
    ResearcherChange,
    ResearcherEnrichment,
    surviving_researcher_id,
)
from catalog.institutions import (
    find_institutions,
    institution_papers,
    institution_researchers,
    list_institutions,
    resolve_institution,
)
from catalog.models import (
    Affiliation,
    Authorship,
    Institution,
    InstitutionName,
    Paper,
    Researcher,
    ResearcherInstitution,
)
from coordination.pacing import pacer
from ingest.enrich.affiliations import AffiliationMatcher
from ingest.enrich.institutions import import_ror
from ingest.enrich.merge import AuthorFacts, Merger, ProfileFacts, WorkFacts
from ingest.enrich.openalex import OpenAlexClient
from ingest.enrich.ror import RorRecord, read_dump
from ingest.enrich.semanticscholar import SemanticScholarClient
from ingest.enrich.stages import Enricher, match_affiliations
from ingest.importer import Importer
from ingest.records import RecordError
from ingest.sources import kaggle
from settings import EnrichmentSettings, get_settings
from tests.integration.enrichment_peers import OpenAlexObjects, Peer, SemanticScholarObjects

NOW = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)


def _dump(shared_data: Path) -> Path:
    return shared_data / "enrichment" / "ror" / "ror_v2_records_from_ror-records_releases.jsonl"


def _records(shared_data: Path, ids: set[str] | None = None) -> list[RorRecord | RecordError]:
    return [
        r
        for r in read_dump(_dump(shared_data))
        if ids is None or (isinstance(r, RorRecord) and r.ror_id in ids)
    ]


def _count(engine: Engine, model: type) -> int:
    with Session(engine) as s:
        return s.execute(select(func.count()).select_from(model)).scalar_one()


def _import_kaggle(engine: Engine, tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = Importer(engine, source="kaggle").run(kaggle.read(path))
    assert summary.failed == 0


def _paper(
    arxiv_id: str, title: str, authors: str, categories: str = "cs.CL", doi: str | None = None
) -> dict[str, Any]:
    return {
        "id": arxiv_id,
        "title": title,
        "abstract": "",
        "authors": authors,
        "categories": categories,
        "doi": doi,
        "versions": [{"version": "v1", "created": "Tue, 12 Dec 2023 00:00:00 GMT"}],
    }


# -- ROR import and resolution ----------------------------------------------------------------------


def test_ror_import_is_complete_idempotent_and_resolves(
    engine: Engine, shared_data: Path, tmp_path: Path
) -> None:
    first = import_ror(engine, read_dump(_dump(shared_data)))
    assert (first.added, first.failed) == (13503, 0)
    names = _count(engine, InstitutionName)
    assert _count(engine, Institution) == 13503 and names > 40000
    again = import_ror(engine, read_dump(_dump(shared_data)))
    assert (again.added, again.updated, again.unchanged) == (0, 0, 13503)
    assert _count(engine, InstitutionName) == names

    with Session(engine) as s:
        stanford = resolve_institution(s, "https://ror.org/00f54p054")
        assert stanford is not None and stanford.name == "Stanford University"
        refs = ["00f54p054", "ror.org/00F54P054", "stanford university", "Universidad Stanford"]
        refs += ["Leland Stanford Junior University", str(stanford.id), f"{stanford.id}-stanford-university"]
        for ref in refs:
            found = resolve_institution(s, ref)
            assert found is not None and found.id == stanford.id, ref
        assert (
            stanford.country_code == "US"
            and stanford.path == f"/institutions/{stanford.id}-stanford-university"
        )
        assert stanford.ror_url == "https://ror.org/00f54p054"
        ucl = resolve_institution(s, "UCL")  # an acronym
        assert ucl is not None and ucl.name == "University College London"
        mit = [i.name for i in find_institutions(s, "MIT")]  # an acronym several institutions share
        assert "Massachusetts Institute of Technology" in mit and len(mit) > 1
        assert find_institutions(s, "Zürich Institute of Nothing") == []
        assert resolve_institution(s, "999999999") is None

    # A newer record updates the row in place: same internal id, names rebuilt.
    line = next(line for line in _dump(shared_data).open() if '"https://ror.org/00f54p054"' in line)
    record = json.loads(line)
    for name in record["names"]:
        if "ror_display" in name["types"]:
            name["value"] = "Stanford University (Renamed)"
    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps(record) + "\n")
    updated = import_ror(engine, read_dump(newer))
    assert (updated.updated, updated.added) == (1, 0)
    with Session(engine) as s:
        renamed = resolve_institution(s, "Stanford University (Renamed)")
        assert renamed is not None and renamed.id == stanford.id
        assert resolve_institution(s, "Stanford University") is not None  # the bare name stays a key


# -- printed affiliations -----------------------------------------------------------------------------


def test_demo_affiliations_are_matched_to_institutions(engine: Engine, shared_data: Path) -> None:
    Importer(engine, source="kaggle").run(kaggle.read(shared_data / "pdfs" / "papers.jsonl"))
    import_ror(engine, read_dump(_dump(shared_data)))
    with engine.connect() as conn:
        matcher = AffiliationMatcher.from_catalogue(conn)
    first = match_affiliations(engine, matcher)
    assert first.rows > 200 and first.matched_rows > 60
    assert 0 < first.matched_strings < first.strings
    again = match_affiliations(engine, matcher)  # only rows still unmatched are looked at
    assert again.rows == first.rows - first.matched_rows and again.matched_rows == 0

    with Session(engine) as s:
        stanford = resolve_institution(s, "Stanford University")
        assert stanford is not None
        mit = resolve_institution(s, "MIT")  # namesakes by acronym: the one with papers here first
        assert mit is not None and mit.name == "Massachusetts Institute of Technology"
        papers = institution_papers(s, stanford.id)
        assert {"2301.11305", "2203.14465", "2205.14135"} <= {p.arxiv_id for p in papers.items}
        people = {r.name: r for r in institution_researchers(s, stanford.id)}
        assert {"Chelsea Finn", "Christopher D. Manning", "Tri Dao"} <= set(people)
        assert people["Tri Dao"].papers == 1 and people["Tri Dao"].path.startswith("/researchers/")
        listed = list_institutions(s, query=None, page=1, size=24)
        assert listed.total >= 10 and listed.items[0].papers >= listed.items[-1].papers
        wrong = s.execute(
            select(Affiliation.raw, Institution.name)
            .join(Institution, Institution.id == Affiliation.institution_id)
            .where(Affiliation.raw == "Northwestern University")
        ).all()
        assert wrong == []  # "Northern University" is not "Northwestern University"


# -- enrichment from OpenAlex and Semantic Scholar ------------------------------------------------------


@pytest.fixture(scope="module")
def peers(shared_data: Path) -> Iterator[tuple[Peer, Peer]]:
    data = shared_data / "enrichment"
    openalex, s2 = Peer(fallback=OpenAlexObjects(data)), Peer(fallback=SemanticScholarObjects(data))
    yield openalex, s2
    openalex.close()
    s2.close()


STATE_OF_OA = (
    "Heather Piwowar, Jason Priem, Vincent Larivière, Juan Pablo Alperin, Lisa Matthias, Bree Norlander, "
    "Ashley Farley, Jevin West, Stefanie Haustein"
)
PAPERQA = (
    "Jakub Lála, Odhran O'Donoghue, Aleksandar Shtedritski, Sam Cox, Samuel G. Rodriques, Andrew D. White"
)


def _enrichment_catalogue(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    """The 35 demo papers, PaperQA (arXiv 2312.07559, recorded in OpenAlex and S2), and "The state
    of OA" twice: it is a PeerJ paper, not an arXiv one, so the test catalogue holds it under two
    made-up arXiv ids with its real DOI (the path the enricher takes for papers with a journal DOI),
    once with full names and once with initials, which the importer resolves to other researchers."""
    Importer(engine, source="kaggle").run(kaggle.read(shared_data / "pdfs" / "papers.jsonl"))
    initials = ", ".join(f"{n.split()[0][0]}. {n.split()[-1]}" for n in STATE_OF_OA.split(", "))
    _import_kaggle(
        engine,
        tmp_path,
        [
            _paper(
                "2312.07559", "PaperQA: Retrieval-Augmented Generative Agent for Scientific Research", PAPERQA
            ),
            _paper("0801.0001", "The state of OA", STATE_OF_OA, "cs.DL", doi="10.7717/peerj.4375"),
            # Nothing but the name links the copy to the original for the importer's resolver (no
            # shared title word, category or co-author: initials are other co-author keys).
            _paper(
                "0801.0002", "Open access prevalence", initials, "physics.soc-ph", doi="10.7717/PeerJ.4375"
            ),
        ],
    )
    wanted = {"00cvxb145", "02nr0ka47", "0213rcc28", "00f54p054"}  # ROR ids the recorded objects name
    import_ror(engine, _records(shared_data, wanted))


def _enricher(engine: Engine, peers: tuple[Peer, Peer], refresh_days: int = 30) -> Enricher:
    settings = EnrichmentSettings(
        openalex_base_url=peers[0].url,
        semantic_scholar_base_url=peers[1].url + "/graph/v1",
        openalex_rate_limit=1000,
        semantic_scholar_rate_limit=1000,
        enrichment_max_retries=0,
    )
    with engine.connect() as conn:
        matcher = AffiliationMatcher.from_catalogue(conn)
    return Enricher(
        engine,
        openalex=OpenAlexClient(settings, pacer(get_settings())),
        semanticscholar=SemanticScholarClient(settings, pacer(get_settings())),
        matcher=matcher,
        refresh_days=refresh_days,
        batch_size=20,
    )


def _run(enricher: Enricher, order: tuple[str, ...] = ("openalex", "semanticscholar")) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for source in order:
        results[f"papers/{source}"] = enricher.papers(source, enricher.due_papers(source))
    for source in order:
        results[f"researchers/{source}"] = enricher.researchers(source, enricher.due_researchers(source))
    return results


def _snapshot(engine: Engine) -> dict[str, Any]:
    """Everything enrichment writes, without timestamps."""
    with Session(engine) as s:
        return {
            "papers": s.execute(
                select(
                    Paper.arxiv_id, Paper.citation_count, Paper.citation_source, Paper.openalex_id
                ).order_by(Paper.id)
            ).all(),
            "researchers": s.execute(
                select(
                    Researcher.id,
                    Researcher.display_name,
                    Researcher.orcid,
                    Researcher.openalex_id,
                    Researcher.semantic_scholar_id,
                    Researcher.h_index,
                    Researcher.citation_count,
                    Researcher.works_count,
                    Researcher.metrics_source,
                ).order_by(Researcher.id)
            ).all(),
            "authorships": s.execute(
                select(
                    Authorship.paper_id,
                    Authorship.position,
                    Authorship.role,
                    Authorship.role_source,
                    Authorship.researcher_id,
                ).order_by(Authorship.paper_id, Authorship.position)
            ).all(),
            "affiliations": s.execute(
                select(
                    Affiliation.paper_id,
                    Affiliation.author_position,
                    Affiliation.raw,
                    Affiliation.source,
                    Affiliation.institution_id,
                    Affiliation.score,
                ).order_by(
                    Affiliation.paper_id, Affiliation.author_position, Affiliation.raw, Affiliation.source
                )
            ).all(),
            "institutions": s.execute(
                select(Institution.id, Institution.ror_id, Institution.name).order_by(Institution.id)
            ).all(),
            "researcher_institutions": s.execute(
                select(
                    ResearcherInstitution.researcher_id,
                    ResearcherInstitution.institution_id,
                    ResearcherInstitution.years,
                ).order_by(ResearcherInstitution.researcher_id, ResearcherInstitution.institution_id)
            ).all(),
            "changes": s.execute(
                select(
                    ResearcherChange.kind, ResearcherChange.researcher_id, ResearcherChange.other_id
                ).order_by(ResearcherChange.id)
            ).all(),
            "records": s.execute(
                select(
                    PaperEnrichment.paper_id,
                    PaperEnrichment.source,
                    PaperEnrichment.status,
                    PaperEnrichment.citation_count,
                ).order_by(PaperEnrichment.paper_id, PaperEnrichment.source)
            ).all(),
        }


def _researcher(s: Session, name: str) -> Researcher:
    return s.execute(select(Researcher).where(Researcher.display_name == name)).scalars().one()


def test_enrichment_merges_figures_ids_positions_and_institutions(
    engine: Engine, shared_data: Path, tmp_path: Path, peers: tuple[Peer, Peer]
) -> None:
    _enrichment_catalogue(engine, shared_data, tmp_path)
    with Session(engine) as s:
        copy_priem = _researcher(s, "J. Priem").id
        priem_before = _researcher(s, "Jason Priem").id
    enricher = _enricher(engine, peers)
    results = _run(enricher)
    assert results["papers/openalex"].found == 3  # PaperQA and both copies of The state of OA
    assert results["papers/semanticscholar"].found >= 2  # PaperQA, Attention Is All You Need
    assert results["papers/openalex"].failed == results["papers/semanticscholar"].failed == 0

    s2_paperqa = SemanticScholarObjects(shared_data / "enrichment").paper("ARXIV:2312.07559")
    assert s2_paperqa is not None
    with Session(engine) as s:
        paperqa = s.execute(select(Paper).where(Paper.arxiv_id == "2312.07559")).scalar_one()
        assert paperqa.openalex_id == "W4389761608"
        expected = max((27, "openalex"), (s2_paperqa["citationCount"], "semanticscholar"), key=lambda c: c[0])
        assert (paperqa.citation_count, paperqa.citation_source) == expected
        assert [a.role for a in paperqa.authorships] == [
            "first",
            "middle",
            "middle",
            "middle",
            "middle",
            "last",
        ]
        assert {a.role_source for a in paperqa.authorships} == {"openalex"}
        lala = paperqa.authorships[0].researcher
        assert lala is not None and (lala.orcid, lala.openalex_id) == ("0000-0002-5424-5260", "A5092171854")
        assert (
            lala.h_index is None and lala.metrics_source is None
        )  # OpenAlex has no recorded profile: unknown

        attention = s.execute(select(Paper).where(Paper.arxiv_id == "1706.03762")).scalar_one()
        assert (attention.citation_count, attention.citation_source) == (136941, "semanticscholar")
        s2_ids = {a.name: a.researcher.semantic_scholar_id for a in attention.authorships if a.researcher}
        assert s2_ids["Ashish Vaswani"] == "40348417" and s2_ids["Illia Polosukhin"] == "3443442"
        assert {a.role_source for a in attention.authorships} == {"arxiv"}  # S2 gives no positions

        # One OpenAlex author on two researchers ("Jason Priem", "J. Priem"): merged into the lower id.
        priem = _researcher(s, "Jason Priem")
        assert priem.id == min(priem_before, copy_priem)
        assert s.get(Researcher, max(priem_before, copy_priem)) is None
        assert surviving_researcher_id(s, max(priem_before, copy_priem)) == priem.id
        assert (priem.h_index, priem.citation_count, priem.works_count, priem.metrics_source) == (
            17,
            3890,
            62,
            "openalex",
        )
        assert priem.orcid == "0000-0001-6187-6610"
        assert s.execute(select(func.count()).where(Authorship.researcher_id == priem.id)).scalar_one() == 2
        merged = s.execute(select(ResearcherChange).where(ResearcherChange.kind == "merged")).scalars().all()
        assert len(merged) == 9 and all(m.source == "openalex" for m in merged)  # all nine authors

        # Affiliations with ROR ids: UW came from the ROR import, Impactstory's institution from OpenAlex.
        state = s.execute(select(Paper).where(Paper.arxiv_id == "0801.0001")).scalar_one()
        rows = {
            (a.author_position, a.raw): a
            for a in s.execute(select(Affiliation).where(Affiliation.paper_id == state.id)).scalars()
        }
        uw = resolve_institution(s, "00cvxb145")
        assert uw is not None
        norlander = rows[(5, "Information School, University of Washington, Seattle, USA")]
        assert (norlander.institution_id, norlander.source, norlander.score) == (uw.id, "openalex", 1.0)
        impact = resolve_institution(s, "05ppvf150")
        assert impact is not None and impact.name == "Impact Technology Development (United States)"
        assert rows[(1, "Impactstory, Sanford, NC, USA")].institution_id == impact.id
        assert rows[(5, "FlourishOA, USA")].institution_id is None  # OpenAlex named none, nor do we
        ourresearch = resolve_institution(s, "02nr0ka47")
        assert ourresearch is not None
        assert [r.name for r in institution_researchers(s, ourresearch.id)] == ["Jason Priem"]
        years = s.execute(
            select(ResearcherInstitution.years).where(
                ResearcherInstitution.researcher_id == priem.id,
                ResearcherInstitution.institution_id == ourresearch.id,
            )
        ).scalar_one()
        assert years == ["2023", "2022", "2021", "2019"]

        # Not found is recorded (so it is not asked again) and leaves figures unknown, never 0.
        missing = s.execute(
            select(func.count()).where(
                ResearcherEnrichment.status == "not_found", ResearcherEnrichment.source == "openalex"
            )
        ).scalar_one()
        assert missing > 0
        assert s.execute(select(func.count()).where(Researcher.h_index == 0)).scalar_one() == 0

    # The pages follow: the merged id redirects to the survivor, whose page shows the figures.
    with _site(engine) as client:
        moved = client.get(f"/researchers/{max(priem_before, copy_priem)}", follow_redirects=False)
        assert moved.status_code == 301 and moved.headers["location"].startswith(f"/researchers/{priem.id}-")
        page = client.get(moved.headers["location"]).text
        assert "Jason Priem" in page and "h-index 17" in page and "3,890 citations" in page

    # Idempotent and incremental: nothing is due now; asking everything again changes nothing.
    snapshot = _snapshot(engine)
    assert enricher.due_papers("openalex") == [] and enricher.due_researchers("openalex") == []
    again = _run(_enricher(engine, peers, refresh_days=0))
    assert again["papers/openalex"].merge.merged == 0 and again["papers/openalex"].merge.split == 0
    assert _snapshot(engine) == snapshot


def _outcome(engine: Engine) -> dict[str, Any]:
    """What pages show, keyed by names rather than internal ids (which differ between catalogues)."""
    with Session(engine) as s:
        return {
            "papers": sorted(
                s.execute(
                    select(Paper.arxiv_id, Paper.citation_count, Paper.citation_source, Paper.openalex_id)
                ).all()
            ),
            "researchers": sorted(
                s.execute(
                    select(
                        Researcher.display_name,
                        Researcher.orcid,
                        Researcher.openalex_id,
                        Researcher.semantic_scholar_id,
                        Researcher.h_index,
                        Researcher.citation_count,
                        Researcher.works_count,
                        Researcher.metrics_source,
                    )
                ).all(),
                key=repr,
            ),
            "roles": sorted(
                s.execute(
                    select(Paper.arxiv_id, Authorship.position, Authorship.role, Authorship.role_source).join(
                        Paper, Paper.id == Authorship.paper_id
                    )
                ).all()
            ),
        }


def test_the_outcome_does_not_depend_on_source_order(
    engine: Engine, shared_data: Path, tmp_path: Path, peers: tuple[Peer, Peer]
) -> None:
    _enrichment_catalogue(engine, shared_data, tmp_path)
    _run(_enricher(engine, peers), ("semanticscholar", "openalex"))
    other = make_engine(f"sqlite:///{tmp_path / 'other.sqlite3'}")
    migrate(other)
    (tmp_path / "other").mkdir()
    _enrichment_catalogue(other, shared_data, tmp_path / "other")
    _run(_enricher(other, peers), ("openalex", "semanticscholar"))
    one, two = _outcome(engine), _outcome(other)
    other.dispose()
    assert one == two
    assert any(p[2] == "openalex" for p in one["papers"]) and any(
        p[2] == "semanticscholar" for p in one["papers"]
    )


# -- identity rules on hand-built answers --------------------------------------------------------------


def _two_wei_wangs(engine: Engine, tmp_path: Path) -> tuple[int, int]:
    _import_kaggle(
        engine,
        tmp_path,
        [
            _paper("2401.00001", "On graphs", "Wei Wang, Ada Lovelace", "cs.LG"),
            _paper("2401.00002", "On lattices", "Wei Wang, Ada Lovelace, Grace Hopper", "cs.DS"),
        ],
    )
    with Session(engine) as s:
        ids = s.execute(select(Paper.id).order_by(Paper.arxiv_id)).scalars().all()
        people = s.execute(select(Researcher.id).where(Researcher.name_key == "wei wang")).scalars().all()
    assert len(people) == 1  # the importer's rule: a shared co-author → one researcher
    return ids[0], ids[1]


def _facts(orcid: str, openalex_id: str, citations: int = 5) -> WorkFacts:
    return WorkFacts(
        "openalex",
        f"W{openalex_id}",
        citations,
        (AuthorFacts(0, "Wei Wang", f"A{openalex_id}", orcid, "first"),),
    )


def test_same_name_different_orcids_stay_apart(engine: Engine, tmp_path: Path) -> None:
    first, second = _two_wei_wangs(engine, tmp_path)
    for _round in range(2):  # the second round must change nothing
        merger = Merger()
        with Session(engine) as s, s.begin():
            merger.paper(s, first, "openalex", _facts("0000-0001-0000-0001", "1"), NOW)
            merger.paper(s, second, "openalex", _facts("0000-0002-0000-0002", "2"), NOW)
        assert merger.counts.split == (1 if _round == 0 else 0)
    with Session(engine) as s:
        people = (
            s.execute(select(Researcher).where(Researcher.name_key == "wei wang").order_by(Researcher.id))
            .scalars()
            .all()
        )
        assert [(p.orcid, p.openalex_id) for p in people] == [
            ("0000-0001-0000-0001", "A1"),
            ("0000-0002-0000-0002", "A2"),
        ]
        on_second = s.execute(
            select(Authorship.researcher_id).where(Authorship.paper_id == second, Authorship.position == 0)
        ).scalar_one()
        assert on_second == people[1].id
        splits = s.execute(select(ResearcherChange).where(ResearcherChange.kind == "split")).scalars().all()
        assert [(c.researcher_id, c.other_id) for c in splits] == [(people[1].id, people[0].id)]


def test_a_merge_is_refused_when_orcids_differ(engine: Engine, tmp_path: Path) -> None:
    _import_kaggle(
        engine,
        tmp_path,
        [
            _paper("2401.00001", "On graphs", "Wei Wang, Ada Lovelace", "cs.LG"),
            _paper("2401.00003", "On proteins", "W. Wang, Rosalind Franklin", "q-bio.BM"),
        ],
    )
    with Session(engine) as s:
        first, second = s.execute(select(Paper.id).order_by(Paper.arxiv_id)).scalars().all()
    merger = Merger()
    with Session(engine) as s, s.begin():
        merger.paper(s, first, "openalex", _facts("0000-0001-0000-0001", "1"), NOW)
        wang = WorkFacts(
            "semanticscholar", "p3", 1, (AuthorFacts(0, "W. Wang", "s2-9", "0000-0002-0000-0002"),)
        )
        merger.paper(s, second, "semanticscholar", wang, NOW)
        # OpenAlex now says the second W. Wang is A1 too, but the ORCIDs disagree: no merge.
        merger.paper(
            s, second, "openalex", WorkFacts("openalex", "W3", 1, (AuthorFacts(0, "W. Wang", "A1"),)), NOW
        )
    with Session(engine) as s:
        wangs = select(func.count()).where(Researcher.display_name.in_(["Wei Wang", "W. Wang"]))
        assert s.execute(wangs).scalar_one() == 2
        conflicts = (
            s.execute(select(ResearcherChange).where(ResearcherChange.kind == "conflict")).scalars().all()
        )
        assert conflicts and "orcid" in conflicts[0].detail
        assert merger.counts.merged == 0


def test_researcher_figures_come_from_one_profile(engine: Engine, tmp_path: Path) -> None:
    _two_wei_wangs(engine, tmp_path)
    with Session(engine) as s:
        rid = s.execute(select(Researcher.id).where(Researcher.name_key == "wei wang")).scalar_one()

    def profile(
        source: str, h: int | None, c: int | None, w: int | None, empty: bool = False
    ) -> ProfileFacts:
        return ProfileFacts(source, f"{source}-1", "Wei Wang", None, h, c, w, empty=empty)

    def shown() -> tuple[Any, ...]:
        with Session(engine) as s:
            r = s.get(Researcher, rid)
            assert r is not None
            return (r.h_index, r.citation_count, r.works_count, r.metrics_source)

    def apply(facts: ProfileFacts | None, source: str) -> None:
        with Session(engine) as s, s.begin():
            Merger().researcher(s, rid, source, facts, NOW)

    apply(profile("semanticscholar", 10, 100, 20), "semanticscholar")
    apply(profile("openalex", None, 120, 25), "openalex")  # no h-index: less complete
    assert shown() == (10, 100, 20, "semanticscholar")  # never OpenAlex's citations with S2's h-index
    apply(profile("openalex", 11, 120, 25), "openalex")  # as complete: OpenAlex wins the tie
    assert shown() == (11, 120, 25, "openalex")
    apply(profile("openalex", 0, 0, 0, empty=True), "openalex")  # a deleted profile counts for nothing
    assert shown() == (10, 100, 20, "semanticscholar")
    apply(None, "semanticscholar")  # S2 no longer knows them
    assert shown() == (None, None, None, None)


@contextmanager
def _site(engine: Engine) -> Iterator[TestClient[Any]]:
    """The web app over this test's catalogue."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WOVEPAPER_DATABASE_URL", engine.url.render_as_string(hide_password=False))
        get_settings.cache_clear()
        with TestClient(create_app()) as client:
            yield client
    get_settings.cache_clear()


def _namesakes(engine: Engine, tmp_path: Path) -> tuple[int, int]:
    """Two researchers that one OpenAlex author id will merge (see :func:`_merge_namesakes`): the
    one that survives (the lower id) and the one that goes."""
    _import_kaggle(
        engine,
        tmp_path,
        [
            _paper("2401.00001", "On engines", "Ada Lovelace, Charles Babbage", "cs.LG"),
            _paper("2401.00003", "On notes", "Augusta Ada King", "math.HO"),
        ],
    )
    with Session(engine) as s:
        ids = sorted(_researcher(s, name).id for name in ("Ada Lovelace", "Augusta Ada King"))
    return ids[0], ids[1]


def _merge_namesakes(engine: Engine) -> None:
    merger = Merger()
    with Session(engine) as s, s.begin():
        papers = s.execute(select(Paper.id).order_by(Paper.arxiv_id)).scalars().all()
        for paper, name in zip(papers, ("Ada Lovelace", "Augusta Ada King"), strict=True):
            facts = WorkFacts("openalex", f"W{paper}", 1, (AuthorFacts(0, name, "A7"),))
            merger.paper(s, paper, "openalex", facts, NOW)
    assert merger.counts.merged == 1


def test_a_merge_moves_follows_and_claims_to_the_survivor(engine: Engine, tmp_path: Path) -> None:
    keep, gone = _namesakes(engine, tmp_path)
    with Session(engine) as s, s.begin():
        both, one = Person(display_name="Follows both"), Person(display_name="Follows the merged one")
        one.researcher_id = gone  # "this is me" on the id that goes away
        s.add_all([both, one])
        s.flush()
        s.add_all(
            [
                Follow(person_id=both.id, researcher_id=keep),
                Follow(person_id=both.id, researcher_id=gone),
                Follow(person_id=one.id, researcher_id=gone),
            ]
        )
        both_id, one_id = both.id, one.id
    _merge_namesakes(engine)
    with Session(engine) as s:
        follows = s.execute(select(Follow.person_id, Follow.researcher_id).order_by(Follow.person_id)).all()
        assert [tuple(f) for f in follows] == [(both_id, keep), (one_id, keep)]
        assert s.execute(select(Person.researcher_id).where(Person.id == one_id)).scalar_one() == keep


def test_a_merge_keeps_each_known_affiliation_once_on_the_survivor(engine: Engine, tmp_path: Path) -> None:
    keep, gone = _namesakes(engine, tmp_path)
    with Session(engine) as s, s.begin():
        london, turin = Institution(name="London"), Institution(name="Turin")
        s.add_all([london, turin])
        s.flush()
        known = [(keep, london, "1843"), (gone, london, "1840"), (gone, turin, "1842")]
        s.add_all(
            ResearcherInstitution(researcher_id=r, institution_id=i.id, source="openalex", years=[year])
            for r, i, year in known
        )
        london_id, turin_id = london.id, turin.id
    _merge_namesakes(engine)
    with Session(engine) as s:
        rows = [
            (r.researcher_id, r.institution_id, r.years) for r in s.scalars(select(ResearcherInstitution))
        ]
    # The survivor's own years for the affiliation both held; the other's affiliation moves with its years.
    assert sorted(rows) == sorted([(keep, london_id, ["1843"]), (keep, turin_id, ["1842"])])
