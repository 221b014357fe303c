"""SIGKILL the worker process at random points over many jobs, on both deployments:

- embedded: the catalogue's queue (SQLite) and the embedded Chroma, worker = ``python -m indexing worker``;
- scaled out: SAQ on the real Redis, the catalogue on the real PostgreSQL, a real ``chroma run``.

Whatever the kill interrupted, every paper must end done or failed exactly once, and Chroma must
hold exactly the chunks of the papers that are done: no duplicates, no orphans.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from catalog.db import make_engine, migrate
from catalog.models import FullText, Job, Paper
from indexing.enqueue import enqueue_pdfs, jobs_for_files, make_queue
from indexing.queue import SaqQueue
from indexing.wiring import make_embedder, open_store
from settings import PROJECT_ROOT, Settings, get_settings
from tests.conftest import REDIS_TEST_URL, drop_saq_queue
from tests.integration.indexing_peers import (
    EmbeddingServer,
    embedding_env,
    embedding_server,
    import_papers,
    malformed_pdfs,
    paper_text,
    text_pdf,
    write_pdfs,
)

PAPERS = 20
KILLS = 4
DEADLINE = 240.0  # seconds for the whole kill campaign; a stuck queue fails the test


@pytest.fixture(scope="module")
def peer() -> Iterator[EmbeddingServer]:
    with embedding_server() as server:
        # Each paper takes at least this long to embed, so the kills land over the whole run
        # however fast the machine is (an idle machine ran out of work before the last kill).
        server.delay = 0.15
        yield server


def corpus(tmp_path: Path, engine: Engine) -> tuple[list[str], list[str], list[Path]]:
    """Twenty small real PDFs (one or two pages) and two broken ones, all in the catalogue."""
    good = [f"2405.{n:05d}" for n in range(1, PAPERS + 1)]
    bad = ["2405.09001", "2405.09002"]
    import_papers(engine, good + bad)
    files: dict[str, bytes] = {}
    for n, arxiv_id in enumerate(good):
        pages = [paper_text(arxiv_id, 14)] + ([paper_text(arxiv_id + "-b", 10)] if n % 2 else [])
        files[f"{arxiv_id}v1.pdf"] = text_pdf(pages)
    broken = malformed_pdfs(text_pdf(["x"]))
    files[f"{bad[0]}v1.pdf"] = broken["truncated"]
    files[f"{bad[1]}v1.pdf"] = broken["garbage"]
    return good, bad, write_pdfs(tmp_path / "pdfs", files)


def configure(monkeypatch: pytest.MonkeyPatch, values: dict[str, str]) -> Settings:
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    return get_settings()


class Campaign:
    """Start the worker, kill it at a random moment once it is working, start it again …"""

    def __init__(self, env: dict[str, str], log_dir: Path, engine: Engine) -> None:
        self.env = env
        self.log_dir = log_dir
        self.engine = engine
        self.kills = 0
        self.starts = 0
        # A fresh seed each run (the kill points differ), printed so a failure can be replayed.
        self.seed = int(os.environ.get("WOVEPAPER_TEST_KILL_SEED") or int.from_bytes(os.urandom(4), "big"))
        print(f"kill campaign seed {self.seed}: replay with WOVEPAPER_TEST_KILL_SEED={self.seed}")
        self.rng = random.Random(self.seed)

    def start(self, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
        self.starts += 1
        log = self.log_dir / f"worker-{self.starts}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "indexing", "worker", *args],
                cwd=PROJECT_ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return process, log

    def finished(self) -> int:
        with Session(self.engine) as session:
            return len(
                session.scalars(
                    select(FullText.paper_id).where(FullText.status.in_(("done", "failed")))
                ).all()
            )

    def run(self, total: int) -> None:
        deadline = time.monotonic() + DEADLINE
        while self.kills < KILLS and self.finished() < total:
            assert time.monotonic() < deadline, "the queue did not drain in time"
            process, log = self.start()
            # Let the worker get going (up, and one more paper finished, so the kills spread over
            # the whole run), then kill it at a random point of whatever it is doing.
            before = self.finished()
            while process.poll() is None and (
                b"started" not in log.read_bytes() or before == self.finished() < total
            ):
                assert time.monotonic() < deadline, "the worker made no progress"
                time.sleep(0.05)
            time.sleep(self.rng.uniform(0.0, 0.4))
            if process.poll() is None:
                children = psutil.Process(process.pid).children(recursive=True)
                process.send_signal(signal.SIGKILL)
                self.kills += 1
                process.wait()
                # The killed worker's parser children notice and exit: no leaked processes.
                _gone, alive = psutil.wait_procs(children, timeout=15)
                assert not alive, f"processes outlived the killed worker: {alive}"
            process.wait()
        assert self.kills == KILLS, f"only {self.kills} kills: the work ran out first"
        final, log = self.start("--until-empty")
        try:
            final.wait(timeout=max(30.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            final.kill()
            raise AssertionError(
                f"the last worker did not drain the queue:\n{log.read_text()[-3000:]}"
            ) from None


def check_outcome(
    engine: Engine, settings: Settings, good: list[str], bad: list[str], *, min_done: int = PAPERS // 2
) -> None:
    with Session(engine) as session:
        rows = session.execute(
            select(
                Paper.arxiv_id,
                FullText.status,
                FullText.completions,
                FullText.chunk_count,
                FullText.version,
                FullText.reason,
            ).join(FullText, FullText.paper_id == Paper.id)
        ).all()
    outcome = {r.arxiv_id: r for r in rows}
    assert sorted(outcome) == sorted(good + bad)
    for arxiv_id, row in outcome.items():
        assert row.status in ("done", "failed"), (arxiv_id, row.status, row.reason)
        assert row.completions == 1, (arxiv_id, row.completions)  # finished exactly once
        if row.status == "failed":
            assert row.reason, arxiv_id
    for arxiv_id in bad:
        assert outcome[arxiv_id].status == "failed"
    # A good paper fails only when kills used up all its attempts, and says so.
    for arxiv_id in good:
        row = outcome[arxiv_id]
        assert row.status == "done" or "attempts" in (row.reason or ""), (arxiv_id, row.reason)
    assert sum(outcome[i].status == "done" for i in good) >= min_done

    expected = {
        f"{arxiv_id}v{row.version}#{n}"
        for arxiv_id, row in outcome.items()
        if row.status == "done"
        for n in range(row.chunk_count)
    }
    store = open_store(settings, make_embedder(settings))
    try:
        stored = store.ids()
        assert len(stored) == len(set(stored))
        assert set(stored) == expected  # exactly the done papers' chunks: no duplicates, no orphans
    finally:
        store.close()


def test_sigkill_on_the_embedded_queue_and_chroma(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, peer: EmbeddingServer
) -> None:
    data = tmp_path / "data"
    values = {
        **embedding_env(peer),
        "WOVEPAPER_DATA_DIR": str(data),
        "WOVEPAPER_WORKER_LEASE_SECONDS": "2",
        "WOVEPAPER_WORKER_POLL_SECONDS": "0.1",
        "WOVEPAPER_WORKER_RETRY_DELAY_SECONDS": "0.2",
        "WOVEPAPER_WORKER_MAX_ATTEMPTS": "4",
    }
    settings = configure(monkeypatch, values)
    engine = make_engine(settings.database_url)
    migrate(engine)
    good, bad, files = corpus(tmp_path, engine)
    jobs, _ = jobs_for_files(files)
    store = open_store(settings, make_embedder(settings))
    collection = store.name
    store.close()  # the worker processes write it
    enqueue_pdfs(engine, make_queue(settings, engine), jobs, collection=collection)

    campaign = Campaign({**os.environ, **values}, tmp_path, engine)
    campaign.run(len(good) + len(bad))

    with Session(engine) as session:
        assert set(session.scalars(select(Job.status))) <= {"done", "failed"}
    check_outcome(engine, settings, good, bad)
    engine.dispose()


@pytest.mark.redis
@pytest.mark.postgres
def test_sigkill_on_saq_redis_postgres_and_a_chroma_server(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    peer: EmbeddingServer,
    postgres_url: str,
    chroma_server: tuple[str, int],
) -> None:
    host, port = chroma_server
    queue_name = f"wovepaper-test-{uuid.uuid4().hex[:12]}"
    values = {
        **embedding_env(peer),
        # A model name of its own gives this test its own collection on the shared server.
        "WOVEPAPER_EMBEDDING_MODEL": f"hashed-{queue_name}",
        "WOVEPAPER_DATA_DIR": str(tmp_path / "data"),
        "WOVEPAPER_DATABASE_URL": postgres_url,
        "WOVEPAPER_REDIS_URL": REDIS_TEST_URL,
        "WOVEPAPER_WORKER_QUEUE": queue_name,
        "WOVEPAPER_CHROMA_HOST": host,
        "WOVEPAPER_CHROMA_PORT": str(port),
        "WOVEPAPER_WORKER_LEASE_SECONDS": "2",
        "WOVEPAPER_WORKER_RETRY_DELAY_SECONDS": "0.2",
        "WOVEPAPER_WORKER_MAX_ATTEMPTS": "4",
    }
    settings = configure(monkeypatch, values)
    engine = make_engine(postgres_url)
    migrate(engine)
    queue = make_queue(settings, engine)
    assert isinstance(queue, SaqQueue) and queue.name == queue_name
    try:
        good, bad, files = corpus(tmp_path, engine)
        jobs, _ = jobs_for_files(files)
        probe = open_store(settings, make_embedder(settings))
        collection = probe.name
        probe.close()
        enqueue_pdfs(engine, queue, jobs, collection=collection)

        campaign = Campaign({**os.environ, **values}, tmp_path, engine)
        campaign.run(len(good) + len(bad))

        assert queue.counts()["incomplete"] == 0
        check_outcome(engine, settings, good, bad)
    finally:
        asyncio.run(drop_saq_queue(queue_name))
        store = open_store(settings, make_embedder(settings))
        store.client.delete_collection(store.name)
        store.close()
        engine.dispose()


@pytest.mark.redis
@pytest.mark.postgres
def test_jobs_redis_lost_are_enqueued_again_from_the_catalogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, peer: EmbeddingServer, postgres_url: str
) -> None:
    """Redis restarts without its data (RELIABILITY.md case 20): the queue is gone, but the catalogue
    still says which papers are unfinished, so a worker enqueues them again and finishes each once."""
    queue_name = f"wovepaper-test-{uuid.uuid4().hex[:12]}"
    values = {
        **embedding_env(peer),
        "WOVEPAPER_DATA_DIR": str(tmp_path / "data"),
        "WOVEPAPER_DATABASE_URL": postgres_url,
        "WOVEPAPER_REDIS_URL": REDIS_TEST_URL,
        "WOVEPAPER_WORKER_QUEUE": queue_name,
        "WOVEPAPER_WORKER_LEASE_SECONDS": "2",
        "WOVEPAPER_WORKER_RETRY_DELAY_SECONDS": "0.2",
    }
    settings = configure(monkeypatch, values)
    engine = make_engine(postgres_url)
    migrate(engine)
    queue = make_queue(settings, engine)
    assert isinstance(queue, SaqQueue)
    try:
        ids = [f"2407.{n:05d}" for n in range(1, 7)]
        import_papers(engine, ids)
        files = write_pdfs(tmp_path / "pdfs", {f"{i}v1.pdf": text_pdf([paper_text(i, 12)]) for i in ids})
        jobs, _ = jobs_for_files(files)
        probe = open_store(settings, make_embedder(settings))
        collection = probe.name
        probe.close()
        enqueue_pdfs(engine, queue, jobs, collection=collection)
        assert queue.counts()["queued"] == len(ids)

        asyncio.run(drop_saq_queue(queue_name))  # what a restart without persistence leaves
        assert queue.counts()["queued"] == 0

        worker = subprocess.run(
            [sys.executable, "-m", "indexing", "worker", "--until-empty"],
            cwd=PROJECT_ROOT,
            env={**os.environ, **values},
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert worker.returncode == 0, worker.stdout[-3000:] + worker.stderr[-3000:]
        assert "re-enqueuing 6 papers whose jobs the queue lost" in worker.stdout + worker.stderr
        check_outcome(engine, settings, ids, [], min_done=len(ids))
        with Session(engine) as session:
            assert set(session.scalars(select(FullText.status))) == {"done"}
    finally:
        asyncio.run(drop_saq_queue(queue_name))
        engine.dispose()
