"""A real corpus for search tests, built once per session: the 35 PDF papers' metadata and 250 real
listings, their title + abstract chunks embedded with the bundled MiniLM into an embedded Chroma,
then 3,500 more real listings in the catalogue and the lexical index only (embedding them would take
minutes), so a category filter allows more than 500 papers and search takes its large-filter path.
Nothing is mocked: this is the product's own ingestion path (``indexing.pipeline``) on real data.

The catalogue is SQLite; :func:`on_postgres` imports the same records into a PostgreSQL database that
the same Chroma and lexical index serve (both are keyed by arXiv id), so the search tests run on
both backends."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from catalog.db import make_engine, migrate
from indexing.contract import AbstractsJob
from indexing.pipeline import Pipeline, abstract_buckets
from indexing.wiring import make_embedder, open_store
from ingest.importer import Importer
from ingest.records import PaperRecord
from ingest.sources import kaggle, listings
from retrieval.lexical import LexicalIndex
from settings import SHARED_DATA, Settings

LISTINGS = 250  # real listings beside the 35 papers (embedding them takes ~20 s on 2 cores)
CATALOGUE_ONLY = 3500  # the next listings: catalogue and BM25 only (691 of all papers are cs.LG)


@dataclass
class Corpus:
    data_dir: Path
    env: dict[str, str]
    papers: int


@contextmanager
def environment(env: dict[str, str]) -> Iterator[Settings]:
    """Settings read with ``env`` set (a session fixture cannot use the per-test monkeypatch)."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        settings = Settings()
        for section in ("core", "database", "search", "embedding", "chroma", "worker", "chunks", "parser"):
            getattr(settings, section)  # read every section while the environment is set
        yield settings
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def records(*, embedded: bool = True, catalogue_only: bool = False) -> list[PaperRecord]:
    """The corpus's records: those whose abstracts are embedded, the catalogue-only ones, or both."""
    listed = listings.read(SHARED_DATA / "arxiv" / "listings-20k.jsonl.gz")
    first, rest = list(itertools.islice(listed, LISTINGS)), list(itertools.islice(listed, CATALOGUE_ONLY))
    chosen = [*kaggle.read(SHARED_DATA / "pdfs" / "papers.jsonl"), *first] if embedded else []
    chosen += rest if catalogue_only else []
    for record in chosen:
        assert isinstance(record, PaperRecord), record
    return chosen  # type: ignore[return-value] # checked above


def build(data_dir: Path) -> Corpus:
    env = {
        "WOVEPAPER_DATA_DIR": str(data_dir),
        "WOVEPAPER_ENVIRONMENT": "test",
        "WOVEPAPER_WORKER_EMBEDDED": "false",
        "WOVEPAPER_LEXICAL_REFRESH_SECONDS": "0",
        "WOVEPAPER_LEXICAL_POLL_SECONDS": "0",
    }
    with environment(env) as settings:
        engine = make_engine(settings.database_url)
        migrate(engine)
        Importer(engine, source="test").run(records())
        embed_abstracts(settings, engine)
        Importer(engine, source="test").run(records(embedded=False, catalogue_only=True))
        lexical = LexicalIndex.from_settings(settings)
        lexical.sync_catalogue(engine)
        lexical.flush()
        papers = lexical.document_count("papers")
        engine.dispose()
    return Corpus(data_dir, env, papers)


@contextmanager
def on_postgres(corpus: Corpus, work: Path) -> Iterator[dict[str, str]]:
    """The corpus's environment with its catalogue in a fresh PostgreSQL database (dropped after)."""
    from tests.integration.browse_catalogue import catalogue_url

    with catalogue_url("postgresql", work) as url:
        engine = make_engine(url)
        migrate(engine)
        Importer(engine, source="test").run(records(embedded=True, catalogue_only=True))
        engine.dispose()
        yield {**corpus.env, "WOVEPAPER_DATABASE_URL": url}


def embed_abstracts(settings: Settings, engine: Engine) -> int:
    embedder = make_embedder(settings)
    store = open_store(settings, embedder)
    pipeline = Pipeline(settings, engine, store, embedder)
    try:
        done = 0
        for job in abstract_buckets(engine, store.name, 500):
            done += pipeline.index_abstracts(AbstractsJob(job.bucket, job.size, store.name))
        return done
    finally:
        pipeline.close()
        store.close()
