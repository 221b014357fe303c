"""The embedded queue and worker end to end, on SQLite and PostgreSQL: real PDFs through the real
sandboxed parser, the real chunker, an OpenAI-compatible embedding endpoint on loopback, and the
embedded Chroma."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from catalog.indexing import indexing_progress, paper_status
from catalog.models import AbstractIndex, FullText, Job, Paper
from indexing import status
from indexing.contract import JobSpec, PdfJob
from indexing.enqueue import enqueue_abstracts, enqueue_pdfs, jobs_for_files
from indexing.pipeline import Pipeline
from indexing.queue import EmbeddedQueue
from indexing.wiring import make_embedder, open_store
from indexing.worker import EmbeddedWorker, WorkerStats
from ingest.fetch import PdfFetcher
from ingest.http import UrlPolicy
from retrieval.store import ChunkStore
from settings import Settings, get_settings
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


@pytest.fixture(scope="module")
def peer() -> Iterator[EmbeddingServer]:
    with embedding_server() as server:
        yield server


@pytest.fixture
def configure(monkeypatch: pytest.MonkeyPatch, peer: EmbeddingServer):
    """Settings for a test: the loopback embedder, quick retries, plus what the test adds."""

    def apply(**extra: str) -> Settings:
        for name, value in {
            **embedding_env(peer),
            "WOVEPAPER_WORKER_RETRY_DELAY_SECONDS": "0.2",
            "WOVEPAPER_WORKER_POLL_SECONDS": "0.05",
            **extra,
        }.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        return get_settings()

    return apply


class Harness:
    def __init__(self, settings: Settings, engine: Engine) -> None:
        self.settings = settings
        self.engine = engine
        self.embedder = make_embedder(settings)
        self.store: ChunkStore = open_store(settings, self.embedder)
        self.queue = EmbeddedQueue(engine)

    def enqueue_files(self, paths: list[Path]) -> None:
        jobs, refused = jobs_for_files(paths)
        assert refused == []
        enqueue_pdfs(self.engine, self.queue, jobs, collection=self.store.name)

    def run(self) -> WorkerStats:
        pipeline = Pipeline(self.settings, self.engine, self.store, self.embedder)
        return EmbeddedWorker(pipeline).run(until_empty=True)

    def row(self, arxiv_id: str) -> FullText:
        with Session(self.engine) as session:
            return session.execute(
                select(FullText).join(Paper, Paper.id == FullText.paper_id).where(Paper.arxiv_id == arxiv_id)
            ).scalar_one()

    def chunk_ids(self, arxiv_id: str) -> list[str]:
        return sorted(self.store.ids(where={"arxiv_id": arxiv_id}))

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def harness(configure, engine: Engine) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def build(**extra: str) -> Harness:
        made.append(Harness(configure(**extra), engine))
        return made[-1]

    yield build
    for h in made:
        h.close()


def test_pdfs_are_indexed_with_status_and_provenance(harness, tmp_path: Path) -> None:
    h = harness()
    ids = ["2401.00101", "2401.00102", "2401.00103"]
    import_papers(h.engine, ids)
    files = write_pdfs(
        tmp_path / "pdfs",
        {f"{i}v1.pdf": text_pdf([paper_text(i, 30), paper_text(i + "-second", 30)]) for i in ids},
    )
    h.enqueue_files(files)
    stats = h.run()
    assert (stats.done, stats.failed, stats.retried) == (3, 0, 0)

    for arxiv_id in ids:
        row = h.row(arxiv_id)
        assert (row.status, row.reason, row.attempts, row.completions) == ("done", None, 1, 1)
        assert row.pages == 2 and row.version == 1 and row.collection == h.store.name
        chunk_ids = h.chunk_ids(arxiv_id)
        assert len(chunk_ids) == row.chunk_count and f"{arxiv_id}v1#0" in chunk_ids
        body = [c for c in h.store.get(chunk_ids) if c.metadata["kind"] == "body"]
        assert {c.metadata["page_start"] for c in body} == {1, 2}  # provenance survives to Chroma
        assert all(c.metadata["primary_category"] == "cs.IR" for c in body)
    with Session(h.engine) as session:
        assert session.scalar(select(AbstractIndex.chunk_id).where(AbstractIndex.chunk_id == f"{ids[0]}v1#0"))
        statuses = paper_status(session, ids, h.store.name)
        assert [s.status for s in statuses] == ["done"] * 3 and all(s.abstract_indexed for s in statuses)
        assert indexing_progress(session, h.store.name).full_texts["done"] == 3
    assert h.queue.counts() == {"done": 3}

    # Enqueueing the same files again finds them indexed: nothing is queued or re-embedded.
    jobs, _ = jobs_for_files(files)
    report = enqueue_pdfs(h.engine, h.queue, jobs, collection=h.store.name)
    assert (report.queued, report.already_done) == (0, 3)


def test_malformed_pdfs_fail_with_their_reason_and_the_next_job_runs(harness, tmp_path: Path) -> None:
    h = harness(WOVEPAPER_PDF_MAX_PAGES="3")
    real = text_pdf([paper_text("real", 20)])
    bad = malformed_pdfs(real)
    bad["too-many-pages"] = text_pdf([paper_text("p", 2)] * 5)
    names = {kind: f"2401.{n:05d}" for n, kind in enumerate(bad, start=200)}
    good = ["2401.00300", "2401.00301"]
    import_papers(h.engine, [*names.values(), *good])
    files = {f"{good[0]}.pdf": real}  # one good file first, the rest after the bad ones
    files.update({f"{names[kind]}.pdf": data for kind, data in bad.items()})
    files[f"{good[1]}.pdf"] = text_pdf([paper_text(good[1], 20)])
    h.enqueue_files(write_pdfs(tmp_path / "pdfs", files))

    stats = h.run()

    assert (stats.done, stats.failed, stats.retried) == (2, len(bad), 0)  # bad input is not retried
    expected = {
        "empty": "empty",
        "garbage": "not a PDF",
        "truncated": "",
        "encrypted": "encrypted",
        "html": "not a PDF",
        "too-many-pages": "5 pages; the limit is 3",
    }
    for kind, arxiv_id in names.items():
        row = h.row(arxiv_id)
        assert row.status == "failed" and row.attempts == 1 and row.completions == 1
        assert row.reason and expected[kind] in row.reason, (kind, row.reason)
        assert h.chunk_ids(arxiv_id) == []  # nothing of a failed paper in Chroma
    for arxiv_id in good:
        assert h.row(arxiv_id).status == "done" and h.chunk_ids(arxiv_id)
    failed_jobs = {key: error for key, _what, error in h.queue.failures()}
    assert failed_jobs[f"pdf:{names['encrypted']}"] == h.row(names["encrypted"]).reason


def test_transient_failures_are_retried_with_backoff(harness, peer: EmbeddingServer, tmp_path: Path) -> None:
    h = harness(WOVEPAPER_WORKER_RETRY_DELAY_SECONDS="1.0")
    import_papers(h.engine, ["2401.00401"])
    h.enqueue_files(write_pdfs(tmp_path, {"2401.00401.pdf": text_pdf([paper_text("x", 10)])}))
    # The first attempt's embedding call fails (the OpenAI client itself tries 3 times).
    peer.fail_next(3)
    started = time.monotonic()
    stats = h.run()
    assert (stats.done, stats.retried) == (1, 1)
    row = h.row("2401.00401")
    assert (row.status, row.attempts, row.reason, row.completions) == ("done", 2, None, 1)
    assert time.monotonic() - started >= 1.0  # the retry waited for its backoff


def test_a_job_that_keeps_failing_ends_failed_without_partial_chunks(
    harness, peer: EmbeddingServer, tmp_path: Path
) -> None:
    h = harness(WOVEPAPER_WORKER_MAX_ATTEMPTS="2")
    import_papers(h.engine, ["2401.00402"])
    h.enqueue_files(write_pdfs(tmp_path, {"2401.00402.pdf": text_pdf([paper_text("y", 10)])}))
    peer.fail_next(1000)
    try:
        stats = h.run()
    finally:
        peer.fail_next(0)
    assert (stats.done, stats.failed, stats.retried) == (0, 1, 1)
    row = h.row("2401.00402")
    assert row.status == "failed" and row.attempts == 2 and row.completions == 1
    assert row.reason and row.reason.startswith("failed after 2 attempts: EmbedderError")
    assert h.chunk_ids("2401.00402") == []


def test_a_new_version_replaces_its_old_chunks_and_an_old_file_changes_nothing(
    harness, tmp_path: Path
) -> None:
    h = harness()
    import_papers(h.engine, ["2401.00501"], version=2)
    v1 = write_pdfs(
        tmp_path / "v1", {"2401.00501v1.pdf": text_pdf([paper_text("v1-a", 40), paper_text("v1-b", 40)])}
    )
    v2 = write_pdfs(tmp_path / "v2", {"2401.00501v2.pdf": text_pdf([paper_text("v2", 12)])})

    h.enqueue_files(v1)
    h.run()
    first = h.chunk_ids("2401.00501")
    assert first and all(i.startswith("2401.00501v1#") for i in first)

    h.enqueue_files(v2)
    h.run()
    second = h.chunk_ids("2401.00501")
    row = h.row("2401.00501")
    assert row.version == 2 and row.chunk_count == len(second) < len(first)
    assert all(i.startswith("2401.00501v2#") for i in second)  # no v1 chunk is left: no orphans

    # The abstract backfill sees the v2 chunk 0 from the PDF and adds nothing beside it.
    assert enqueue_abstracts(h.settings, h.engine, h.queue, h.store.name) == 0

    # Re-ingesting the older file keeps v2.
    h.enqueue_files(v1)
    stats = h.run()
    assert stats.done == 1
    assert h.chunk_ids("2401.00501") == second
    row = h.row("2401.00501")
    assert row.status == "done" and row.reason == "kept v2: this file is the older v1" and row.version == 2


def test_the_abstract_backfill_embeds_each_paper_once_and_follows_metadata_changes(harness) -> None:
    h = harness(WOVEPAPER_WORKER_ABSTRACT_BATCH="4")
    ids = [f"2402.{n:05d}" for n in range(1, 11)]
    import_papers(h.engine, ids)
    jobs = enqueue_abstracts(h.settings, h.engine, h.queue, h.store.name)
    assert 3 <= jobs <= 4  # ten consecutive catalogue ids in buckets of four
    assert enqueue_abstracts(h.settings, h.engine, h.queue, h.store.name) == 0  # pending buckets: no-op
    stats = h.run()
    assert stats.failed == 0
    assert sorted(h.store.ids()) == sorted(f"{i}v1#0" for i in ids)
    assert enqueue_abstracts(h.settings, h.engine, h.queue, h.store.name) == 0  # all done

    import_papers(h.engine, [ids[3]], title_prefix="A revised study")  # metadata changed
    assert enqueue_abstracts(h.settings, h.engine, h.queue, h.store.name) == 1
    h.run()
    assert h.store.get([f"{ids[3]}v1#0"])[0].text.startswith(f"A revised study of {ids[3]}")
    assert h.store.count() == 10


def test_concurrent_claims_never_share_a_job(engine: Engine) -> None:
    queue = EmbeddedQueue(engine)
    queue.enqueue([JobSpec("pdf", f"pdf:2403.{n:05d}", {"arxiv_id": f"2403.{n:05d}"}, 10) for n in range(40)])
    claimed: list[str] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        while (job := queue.claim(name, lease=30)) is not None:
            with lock:
                claimed.append(job.spec.key)
            assert queue.complete(job)

    threads = [threading.Thread(target=work, args=(f"w{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == sorted(f"pdf:2403.{n:05d}" for n in range(40))
    assert queue.counts() == {"done": 40}


def test_an_expired_lease_is_taken_over_and_the_old_holder_cannot_finish(engine: Engine) -> None:
    queue = EmbeddedQueue(engine)
    queue.enqueue([PdfJob("2403.00001").spec()])
    start = time.time()  # the queue's clock is given to it: no sleeping through a real lease
    first = queue.claim("dead-worker", lease=60, now=start)
    assert first is not None and queue.claim("other", lease=30, now=start + 59) is None  # still leased
    second = queue.claim("live-worker", lease=30, now=start + 61)
    assert second is not None and second.expired_lease and second.attempts == 2
    assert not queue.complete(first)  # the dead worker's late answer is ignored
    assert queue.complete(second)
    with Session(engine) as session:
        job = session.execute(select(Job)).scalar_one()
        assert (job.status, job.attempts, job.worker) == ("done", 2, "live-worker")


def test_nul_bytes_and_surrogates_never_reach_the_catalogue(engine: Engine, tmp_path: Path) -> None:
    import_papers(engine, ["2404.00001"])
    with Session(engine) as session:
        paper_id = session.scalar(select(Paper.id).where(Paper.arxiv_id == "2404.00001"))
    assert paper_id is not None
    status.mark_queued(engine, [status.Queued(paper_id, None, None)])
    assert status.begin(engine, paper_id, "run-1", source=None) == 1
    dirty = "parser said \x00 nul and \ud800 lone surrogate \udcff from a file name"
    assert status.finish_failed(engine, paper_id, "run-1", dirty)

    queue = EmbeddedQueue(engine)
    queue.enqueue([PdfJob("2404.00001").spec()])
    claimed = queue.claim("w", lease=30)
    assert claimed is not None and queue.fail(claimed, dirty)

    clean = "parser said  nul and  lone surrogate  from a file name"
    with Session(engine) as session:  # PostgreSQL would have refused the raw text outright
        assert session.scalar(select(FullText.reason)) == clean
        assert session.scalar(select(Job.error)) == clean

    # Queue payloads must be valid UTF-8: a job naming an undecodable file is refused up front.
    with pytest.raises(ValueError, match="not JSON of valid UTF-8"):
        PdfJob(None, path="/papers/caf\udce9.pdf").spec()
    odd = tmp_path / "caf\udce9.pdf"
    Path(bytes(odd).decode("utf-8", "surrogateescape")).write_bytes(b"%PDF-1.7")
    jobs, refused = jobs_for_files([odd])
    assert jobs == [] and "not valid UTF-8; rename the file" in refused[0]


def test_a_finished_paper_is_not_finished_twice(engine: Engine) -> None:
    """At-least-once delivery: a redelivered job for a finished paper is a no-op."""
    import_papers(engine, ["2404.00002"])
    with Session(engine) as session:
        paper_id = session.scalar(select(Paper.id).where(Paper.arxiv_id == "2404.00002"))
    assert paper_id is not None
    status.mark_queued(engine, [status.Queued(paper_id, None, None)])
    assert status.begin(engine, paper_id, "run-a", source=None) == 1
    assert status.begin(engine, paper_id, "run-b", source=None) == 2  # run-a died; run-b takes over
    assert not status.finish_failed(engine, paper_id, "run-a", "late answer from a dead run")
    assert status.finish_unchanged(engine, paper_id, "run-b", "unchanged")
    assert status.begin(engine, paper_id, "run-c", source=None) is None  # redelivered: nothing to do
    with Session(engine) as session:
        row = session.get(FullText, paper_id)
        assert row is not None and (row.status, row.completions, row.run_id) == ("done", 1, "run-b")


def test_fetched_pdfs_go_through_the_real_url_policy(harness) -> None:
    """``fetch``: arXiv cannot be reached from here, so an httpx transport stands in for it; the
    URLs, the production policy (https, arXiv hosts, public addresses, every redirect re-checked)
    and the rest of the pipeline are real."""
    h = harness(WOVEPAPER_ARXIV_INTERVAL_SECONDS="0.2")  # paced as in production, only faster
    import_papers(h.engine, ["2407.00001", "2407.00002", "2407.00003"])
    pdf = text_pdf([paper_text("2407.00001", 12)])
    asked: list[str] = []

    def arxiv(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        if request.url.host == "export.arxiv.org" and request.url.path == "/pdf/2407.00001v1":
            return httpx.Response(200, content=pdf, headers={"Content-Type": "application/pdf"})
        if request.url.path == "/pdf/2407.00001v1":
            return httpx.Response(301, headers={"Location": "https://export.arxiv.org/pdf/2407.00001v1"})
        if request.url.path == "/pdf/2407.00002":
            return httpx.Response(302, headers={"Location": "https://169.254.169.254/latest/meta-data/"})
        return httpx.Response(404, text="not found")

    fetcher = PdfFetcher.from_settings(
        h.settings,
        policy=UrlPolicy(resolver=lambda _host, _port: ["151.101.67.42"]),  # DNS, as arXiv answers it
        transport=httpx.MockTransport(arxiv),
    )
    pipeline = Pipeline(h.settings, h.engine, h.store, h.embedder, fetcher=fetcher)
    worker = EmbeddedWorker(pipeline)
    enqueue_pdfs(
        h.engine,
        h.queue,
        [PdfJob("2407.00001", version=1), PdfJob("2407.00002"), PdfJob("2407.00003")],
        collection=h.store.name,
    )
    stats = worker.run(until_empty=True)

    assert (stats.done, stats.failed) == (1, 2)
    done = h.row("2407.00001")
    # Fetched from the address asked below, and kept under the data dir as its source.
    assert done.status == "done" and done.source_path is not None
    kept = Path(done.source_path)
    assert kept.parent == h.settings.fetched_pdf_dir and kept.read_bytes() == pdf
    assert h.chunk_ids("2407.00001")
    refused = h.row("2407.00002")
    assert refused.status == "failed" and "not an arXiv host" in (refused.reason or "")
    assert (
        h.row("2407.00003").reason
        == "arXiv has no PDF for this paper (https://arxiv.org/pdf/2407.00003: HTTP 404)"
    )
    assert asked == [  # the metadata address was refused before it was requested
        "https://arxiv.org/pdf/2407.00001v1",
        "https://export.arxiv.org/pdf/2407.00001v1",
        "https://arxiv.org/pdf/2407.00002",
        "https://arxiv.org/pdf/2407.00003",
    ]


def test_the_worker_outlives_a_catalogue_outage(
    harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The catalogue goes away just as a job finishes: the worker keeps going, the job's lease
    lapses, it runs again, and the paper is still finished exactly once."""
    from sqlalchemy.exc import OperationalError

    from indexing import worker as worker_module

    monkeypatch.setattr(worker_module, "DB_RETRY", 0.05)
    h = harness(WOVEPAPER_WORKER_LEASE_SECONDS="2")
    import_papers(h.engine, ["2401.00301"])
    h.enqueue_files(write_pdfs(tmp_path / "pdfs", {"2401.00301v1.pdf": text_pdf([paper_text("x", 20)])}))
    outages: list[str] = []
    complete = EmbeddedQueue.complete

    def flaky_complete(self: EmbeddedQueue, claimed: object) -> bool:
        if not outages:
            outages.append("down")
            raise OperationalError("UPDATE jobs", {}, Exception("server closed the connection"))
        return complete(self, claimed)  # type: ignore[arg-type]

    monkeypatch.setattr(EmbeddedQueue, "complete", flaky_complete)
    started = time.monotonic()
    stats = h.run()
    assert outages == ["down"]
    assert time.monotonic() - started >= 1.5  # it waited for the lease to lapse, then ran again
    assert stats.failed == 0 and stats.done + stats.skipped == 1
    assert h.queue.counts() == {"done": 1}
    row = h.row("2401.00301")
    assert (row.status, row.completions) == ("done", 1)


def test_the_eta_uses_the_rate_since_work_began(engine: Engine) -> None:
    """Thirty abstracts embedded over the last 30 s is a rate of 60/min, not 15/min over the
    two-minute window (the first ETAs after a start were four times too long)."""
    ids = [f"2401.{n:05d}" for n in range(400, 440)]
    import_papers(engine, ids)
    now = dt.datetime.now(dt.UTC)
    with Session(engine) as session:
        paper_ids = session.scalars(select(Paper.id).where(Paper.arxiv_id.in_(ids)).order_by(Paper.id)).all()
        for n, paper_id in enumerate(paper_ids[:30]):
            session.add(
                AbstractIndex(
                    paper_id=paper_id,
                    collection="c",
                    content_hash="h",
                    chunk_id=f"x#{n}",
                    indexed_at=now - dt.timedelta(seconds=30 - n),
                )
            )
        session.commit()
        progress = indexing_progress(session, "c", now=now)
    assert progress.phase == "abstracts" and progress.abstracts_pending == 10
    assert progress.abstracts_per_minute == pytest.approx(60, rel=0.05)
    assert progress.eta_seconds == pytest.approx(10, rel=0.05)


def test_the_endpoint_embedder_decodes_what_the_endpoint_sends(configure, peer: EmbeddingServer) -> None:
    """The openai client asks for base64 float32 vectors; the peer answers in the format asked (as
    OpenAI does), so a client that misread either format would get other vectors than these."""
    from tests.integration.indexing_peers import hashed_vector

    embedder = make_embedder(configure())
    before = len(peer.encodings)
    texts = ["sparse attention for long documents", "a queue of jobs"]
    vectors = embedder.embed(texts)
    assert peer.encodings[before:] == ["base64"]
    for text, vector in zip(texts, vectors, strict=True):
        assert vector == pytest.approx(hashed_vector(text, peer.dim), abs=1e-6)
