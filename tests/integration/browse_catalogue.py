"""A small real catalogue for the browse, agents and API tests, built once per module and backend.

Contents, all from ``../shared/data``: the 249 Kaggle-snapshot records, the 35 PDF papers' metadata
(with printed affiliations), the first 300 demo listings, two old-style papers parsed from the
recorded arXiv API answers, ROR records for the institutions those affiliations name, and one
enriched researcher (numbers from a real OpenAlex author).
Institutions are imported and linked by the enrichment's own ROR import and affiliation matcher.
Plus what real data lacks here: a paper whose title and author are hostile HTML/markdown, two
different people sharing one name (different fields, years and co-authors; one with a known
institution), and one person whose name is printed in two spellings.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import threading
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import Any

import uvicorn
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import Engine, create_engine, select, text, update
from sqlalchemy.orm import Session

from app.main import create_app
from catalog.db import make_engine, migrate
from catalog.models import Institution, Researcher, ResearcherInstitution
from ingest.enrich.affiliations import AffiliationMatcher
from ingest.enrich.institutions import import_ror
from ingest.enrich.ror import RorRecord, read_dump
from ingest.enrich.stages import match_affiliations
from ingest.importer import Importer
from ingest.sources import kaggle, listings
from retrieval.lexical import LexicalIndex
from settings import Settings
from tests.conftest import POSTGRES_ADMIN_URL, SEARCH_PROCESSES_IN_TESTS

ATOM = "{http://www.w3.org/2005/Atom}"
HOSTILE_TITLE = '<script>alert("title")</script> Robust *bold* [click](javascript:alert(1)) & <b>more</b>'
HOSTILE_AUTHOR = "Eve <img src=x onerror=alert(1)> Mallory"
HOSTILE_ID = "2401.00001"
NAMESAKE = "Quentin Zyxwvut"
SPELLED = ("Zoë Ästrand", "Zoe Astrand")  # one person, written with and without accents
INSTITUTIONS = (
    "University of Toronto",
    "University of Amsterdam",
    "Stanford University",
    "University of Washington",
    "New York University",
    "Tsinghua University",
    "Peking University",
    "Yale University",
)
ENRICHED = "Diederik P. Kingma"
PROLIFIC = "Paz Escritora"
COLLABORATOR = "Rosa Colaboradora"


@dataclass(frozen=True)
class Facts:
    """What the tests can rely on in the catalogue (ids are assigned at import)."""

    enriched_researcher: int  # Kingma: h-index, citations, works total, ORCID, OpenAlex id
    plain_researcher: int  # Jimmy Lei Ba: no enrichment
    namesakes: tuple[
        int, int
    ]  # cs.CL with Alma Castellanos (2024); q-bio.GN with Bertil Oskarsson (2019–2024)
    spelled: int  # Zoë Ästrand, also written Zoe Astrand
    hostile_researcher: int
    prolific_researcher: int
    collaborator: int
    toronto: int  # institution id
    toronto_ror: str
    h_index: int
    citations: int
    works: int
    orcid: str


def _listing(value: dict[str, object]) -> str:
    return json.dumps(value) + "\n"


def _old_style_listings(shared: Path) -> list[str]:
    """Listing-format records for the old-style papers in the recorded arXiv API answers."""
    rows = []
    for name in (
        "id_astro-ph_0601001_s0_m100_3150dca9dc76.json",
        "id_quant-ph_0201082v1_s0_m100_86989fe779ef.json",
    ):
        body = json.loads((shared / "arxiv" / "api-fixtures" / name).read_text())["body"]
        entry = ET.fromstring(body).find(f"{ATOM}entry")
        assert entry is not None
        arxiv_id = entry.findtext(f"{ATOM}id", "").split("/abs/", 1)[1].rsplit("v", 1)[0]
        rows.append(
            _listing(
                {
                    "id": arxiv_id,
                    "title": entry.findtext(f"{ATOM}title", ""),
                    "summary": entry.findtext(f"{ATOM}summary", ""),
                    "authors": [a.findtext(f"{ATOM}name", "") for a in entry.findall(f"{ATOM}author")],
                    "categories": [c.get("term", "") for c in entry.findall(f"{ATOM}category")],
                    "_listing_file": entry.findtext(f"{ATOM}published", "")[:10],
                }
            )
        )
    return rows


def _extra_listings() -> list[str]:
    return [
        _listing(
            {
                "id": HOSTILE_ID,
                "title": HOSTILE_TITLE,
                "summary": "An abstract with <iframe src=//evil.example></iframe> and ![x](https://evil.example/x.png).",
                "authors": [HOSTILE_AUTHOR, "Trudy O'Neil"],
                "categories": ["cs.CR"],
                "_listing_file": "2024-01-02",
            }
        ),
        # Two people named alike: different broad fields, no shared co-author → two researchers.
        _listing(
            {
                "id": "2401.00002",
                "title": "Sparse attention for long documents",
                "summary": "A study of sparse attention.",
                "authors": [NAMESAKE, "Alma Castellanos"],
                "categories": ["cs.CL"],
                "_listing_file": "2024-01-03",
            }
        ),
        _listing(
            {
                "id": "2401.00003",
                "title": "Gene regulatory networks in yeast",
                "summary": "A study of yeast genes.",
                "authors": [NAMESAKE, "Bertil Oskarsson"],
                "categories": ["q-bio.GN"],
                "_listing_file": "2024-01-04",
            }
        ),
        _listing(
            {
                "id": "2401.00004",
                "title": "Sparse attention, revisited",
                "summary": "More sparse attention.",
                "authors": ["Alma Castellanos", NAMESAKE],
                "categories": ["cs.CL", "cs.LG"],
                "_listing_file": "2024-01-05",
            }
        ),
        _listing(
            {
                "id": "1907.00003",
                "title": "Promoter motifs in budding yeast",
                "summary": "An earlier study of yeast genes.",
                "authors": ["Bertil Oskarsson", NAMESAKE],
                "categories": ["q-bio.GN"],
                "_listing_file": "2019-07-02",
            }
        ),
        # One person, two spellings of the name, always with the same co-author.
        *(
            _listing(
                {
                    "id": f"2401.{n:05d}",
                    "title": f"Succinct range queries, part {n - 6}",
                    "summary": "Data structures.",
                    "authors": [spelling, "Tove Lindahl"],
                    "categories": ["cs.DS"],
                    "_listing_file": f"2024-01-{n:02d}",
                }
            )
            for n, spelling in ((7, SPELLED[0]), (8, SPELLED[1]), (9, SPELLED[0]))
        ),
        # A paper with an author string that names no person: its author positions are unknown.
        _listing(
            {
                "id": "2401.00005",
                "title": "Detector calibration with the full collaboration",
                "summary": "Calibration.",
                "authors": [COLLABORATOR, "The HALO Collaboration", "Uma Hauptautorin"],
                "categories": ["hep-ex"],
                "_listing_file": "2024-01-06",
            }
        ),
        _listing(
            {
                "id": "2401.00006",
                "title": "Detector calibration, a short note",
                "summary": "Calibration again.",
                "authors": ["Uma Hauptautorin", COLLABORATOR],
                "categories": ["hep-ex"],
                "_listing_file": "2024-01-07",
            }
        ),
    ] + [
        # One prolific author (26 papers, newest with the highest number) for pagination and filters.
        _listing(
            {
                "id": f"2402.{n:05d}",
                "title": f"Notes on sparse transformers, part {n}",
                "summary": f"Part {n} of a series.",
                "authors": [PROLIFIC, ["Ines Ortega", "Jonas Berg", "Kai Lindqvist"][n % 3]],
                "categories": ["cs.LG"] if n % 2 else ["stat.ML", "cs.LG"],
                "_listing_file": f"2024-02-{n:02d}",
            }
        )
        for n in range(1, 27)
    ]


def _load_institutions(engine: Engine, shared: Path) -> None:
    """The ROR records of :data:`INSTITUTIONS`, imported and matched to the printed affiliations by
    the enrichment's own code (``python -m ingest ror``)."""
    path = shared / "enrichment" / "ror" / "ror_v2_records_from_ror-records_releases.jsonl"
    records = [r for r in read_dump(path) if isinstance(r, RorRecord) and r.name in INSTITUTIONS]
    assert {r.name for r in records} == set(INSTITUTIONS), "ROR records missing from the shared data"
    assert import_ror(engine, records).failed == 0
    with engine.connect() as conn:
        matcher = AffiliationMatcher.from_catalogue(conn, threshold=90.0)
    match_affiliations(engine, matcher)


def _enrich(engine: Engine, shared: Path) -> tuple[int, int, int, str]:
    author = json.loads((shared / "enrichment" / "openalex" / "A5023888391.json").read_text())
    h, cited, works = author["summary_stats"]["h_index"], author["cited_by_count"], author["works_count"]
    orcid = author["orcid"].rsplit("/", 1)[1]
    with Session(engine) as session, session.begin():
        session.execute(
            update(Researcher)
            .where(Researcher.display_name == ENRICHED)
            .values(
                h_index=h,
                citation_count=cited,
                works_count=works,
                orcid=orcid,
                openalex_id=author["id"].rsplit("/", 1)[1],
                metrics_source="openalex",
            )
        )
        kingma = session.execute(
            select(Researcher.id).where(Researcher.display_name == ENRICHED)
        ).scalar_one()
        amsterdam = session.execute(
            select(Institution.id).where(Institution.name == "University of Amsterdam")
        ).scalar_one()
        session.add(ResearcherInstitution(researcher_id=kingma, institution_id=amsterdam, source="openalex"))
    return h, cited, works, orcid


def build(engine: Engine, shared: Path, work: Path) -> Facts:
    Importer(engine, source="kaggle").run(kaggle.read(shared / "arxiv" / "kaggle-snapshot-249.jsonl"))
    Importer(engine, source="kaggle").run(kaggle.read(shared / "pdfs" / "papers.jsonl"))
    sample = work / "listings-sample.jsonl"
    with gzip.open(shared / "arxiv" / "listings-20k.jsonl.gz", "rt") as handle:
        lines = list(islice(handle, 300))
    sample.write_text("".join(lines) + "".join(_old_style_listings(shared)) + "".join(_extra_listings()))
    summary = Importer(engine, source="listings").run(listings.read(sample))
    assert summary.failed == 0, summary.errors
    _load_institutions(engine, shared)
    h, cited, works, orcid = _enrich(engine, shared)
    with Session(engine) as session:

        def rid(name: str) -> int:
            return session.execute(select(Researcher.id).where(Researcher.display_name == name)).scalar_one()

        namesakes = tuple(
            session.execute(
                select(Researcher.id).where(Researcher.display_name == NAMESAKE).order_by(Researcher.id)
            ).scalars()
        )
        assert len(namesakes) == 2, namesakes
        # What enrichment would record: the biologist's institution.
        yale = session.execute(
            select(Institution.id).where(Institution.name == "Yale University")
        ).scalar_one()
        session.add(ResearcherInstitution(researcher_id=namesakes[1], institution_id=yale, source="openalex"))
        session.commit()
        toronto = session.execute(
            select(Institution.id, Institution.ror_id).where(Institution.name == "University of Toronto")
        ).one()
        return Facts(
            enriched_researcher=rid(ENRICHED),
            plain_researcher=rid("Jimmy Lei Ba"),
            namesakes=(namesakes[0], namesakes[1]),
            spelled=rid(SPELLED[0]),
            hostile_researcher=rid(HOSTILE_AUTHOR),
            prolific_researcher=rid(PROLIFIC),
            collaborator=rid(COLLABORATOR),
            toronto=toronto.id,
            toronto_ror=toronto.ror_id,
            h_index=h,
            citations=cited,
            works=works,
            orcid=orcid,
        )


@contextmanager
def catalogue_url(backend: str, work: Path) -> Iterator[str]:
    """An empty, migrated catalogue on ``backend`` for the duration of the block."""
    if backend == "sqlite":
        yield f"sqlite:///{work / 'catalogue.sqlite3'}"
        return
    name = f"wovepaper_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@dataclass
class Browse:
    client: TestClient[Any]
    facts: Facts
    settings: Settings
    backend: str


def settings_for(url: str, env: dict[str, str]) -> Settings:
    """Settings read from ``env`` now (every section evaluated), unaffected by later env changes."""
    saved = {
        k: v
        for k, v in os.environ.items()
        if k.startswith("WOVEPAPER_") and not k.startswith("WOVEPAPER_TEST")
    }
    for key in saved:
        del os.environ[key]
    os.environ.update(
        {
            "WOVEPAPER_DATABASE_URL": url,
            "WOVEPAPER_ENVIRONMENT": "test",
            "WOVEPAPER_SEARCH_PROCESSES": SEARCH_PROCESSES_IN_TESTS,
            **env,
        }
    )
    try:
        settings = Settings()
        for name, member in vars(Settings).items():
            if isinstance(member, cached_property):
                getattr(settings, name)  # read each section now, while the environment is set
        return settings
    finally:
        for key in [
            k for k in os.environ if k.startswith("WOVEPAPER_") and not k.startswith("WOVEPAPER_TEST")
        ]:
            del os.environ[key]
        os.environ.update(saved)


@contextmanager
def built(
    backend: str, shared: Path, work: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[Settings, Facts]]:
    """The test catalogue on ``backend`` and settings that point at it."""
    with catalogue_url(backend, work) as url:
        engine = make_engine(url)
        migrate(engine)
        facts = build(engine, shared, work)
        settings = settings_for(
            url,
            {
                "WOVEPAPER_DATA_DIR": str(work / "data"),
                "WOVEPAPER_PUBLIC_URL": "https://wovepaper.test",
                # No background indexing while pages are tested: it would embed the whole test
                # catalogue. Without a worker nothing syncs the lexical index with the catalogue,
                # so it is built here, as `python -m indexing reindex-lexical` would.
                "WOVEPAPER_WORKER_EMBEDDED": "false",
                **(env or {}),
            },
        )
        LexicalIndex.from_settings(settings).rebuild(engine)
        engine.dispose()
        yield settings, facts


@contextmanager
def browse(backend: str, shared: Path, work: Path, env: dict[str, str] | None = None) -> Iterator[Browse]:
    """The app over the test catalogue, driven in-process."""
    with built(backend, shared, work, env) as (settings, facts), TestClient(create_app(settings)) as client:
        yield Browse(client, facts, settings, backend)


@dataclass(frozen=True)
class ServedCatalogue:
    """The test catalogue served by uvicorn on loopback (the ``served_catalogue`` fixture)."""

    base: str
    facts: Facts
    settings: Settings
    backend: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def served(settings: Settings, port: int | None = None, app: Litestar | None = None) -> Iterator[str]:
    """The app (``create_app(settings)`` unless given) served by uvicorn on loopback (``port``, or a
    free one), for clients that speak real HTTP."""
    server = uvicorn.Server(
        uvicorn.Config(
            app or create_app(settings),
            host="127.0.0.1",
            port=port or _free_port(),
            log_level="warning",
            lifespan="on",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the test server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
