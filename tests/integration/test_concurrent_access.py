"""Web reads while another process writes the SQLite catalogue: zero "database is locked" errors,
zero 5xx, and the writer loses nothing (RELIABILITY.md case 21).

The app is served by uvicorn (page cache off, so every request reads the catalogue) while
``python -m ingest listings`` imports thousands of real records in another process, batch after
batch, each a write transaction that takes the lock up front.
"""

from __future__ import annotations

import gzip
import itertools
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import httpx
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from catalog.db import make_engine, migrate
from catalog.models import Paper
from ingest.importer import Importer
from ingest.sources import listings
from settings import PROJECT_ROOT, SHARED_DATA
from tests.integration.browse_catalogue import served, settings_for

SEED = 300  # papers in the catalogue before the writer starts
WRITES = 6_000  # papers the other process imports while pages are read


def _listing_lines(count: int, skip: int = 0) -> list[str]:
    with gzip.open(SHARED_DATA / "arxiv" / "listings-20k.jsonl.gz", "rt", encoding="utf-8") as handle:
        return list(itertools.islice(handle, skip, skip + count))


def test_pages_keep_answering_while_another_process_imports(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'catalogue.sqlite3'}"
    engine = make_engine(url)
    migrate(engine)
    seed = tmp_path / "seed.jsonl"
    seed.write_text("".join(_listing_lines(SEED)))
    assert Importer(engine, source="listings").run(listings.read(seed)).added == SEED
    with Session(engine) as session:
        some = session.scalars(select(Paper.arxiv_id).limit(20)).all()
    more = tmp_path / "more.jsonl"
    more.write_text("".join(_listing_lines(WRITES, skip=SEED)))

    env = {
        "WOVEPAPER_DATA_DIR": str(tmp_path / "data"),
        "WOVEPAPER_WORKER_EMBEDDED": "false",
        "WOVEPAPER_PAGE_CACHE_SECONDS": "0",
        "WOVEPAPER_IMPORT_BATCH_SIZE": "200",  # many short write transactions, not a few long ones
        "WOVEPAPER_LIMIT_API": "1000000/60",  # this test is about the catalogue, not the API limit
    }
    settings = settings_for(url, env)
    paths = ["/", "/papers", "/researchers", "/api/papers", *(f"/api/papers/{i}" for i in some)]
    statuses: Counter[int] = Counter()
    failures: list[str] = []
    stop = threading.Event()
    reading = threading.Semaphore(0)  # one release per answered read

    def read(base: str) -> None:
        with httpx.Client(base_url=base, timeout=30) as http:
            for path in itertools.cycle(paths):
                if stop.is_set():
                    return
                response = http.get(path)
                statuses[response.status_code] += 1
                reading.release()
                if response.status_code != 200:
                    failures.append(f"{path}: {response.status_code} {response.text[:200]}")

    with served(settings) as base:
        readers = [threading.Thread(target=read, args=(base,)) for _ in range(2)]
        for thread in readers:
            thread.start()
        for _ in range(len(paths)):  # the readers are going before the writer starts (no clock)
            assert reading.acquire(timeout=60), "the readers never got an answer"
        reads_before_import = sum(statuses.values())
        writer = subprocess.run(
            [sys.executable, "-m", "ingest", "listings", str(more)],
            cwd=PROJECT_ROOT,
            env={**os.environ, **env, "WOVEPAPER_DATABASE_URL": url},
            capture_output=True,
            text=True,
            timeout=300,
        )
        reads_during_import = sum(statuses.values()) - reads_before_import
        stop.set()
        for thread in readers:
            thread.join(timeout=30)

    output = writer.stdout + writer.stderr
    assert writer.returncode == 0, output
    assert "locked" not in output.lower()
    assert failures == [], failures[:5]
    assert reads_during_import >= 50, statuses  # the reads really overlapped the writes
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(Paper)) == SEED + WRITES
    engine.dispose()
