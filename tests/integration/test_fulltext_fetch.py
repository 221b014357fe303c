"""Full text on request, the worker's half: a paper's PDF fetched by id from a loopback server that
stands in for arXiv's PDF host (``WOVEPAPER_ARXIV_PDF_URL``), through the real polite client, the
real sandboxed parser, chunker, embedding endpoint (loopback) and embedded Chroma. Each failure
ends with the sentence a person who asked for the paper reads."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from catalog.indexing import FullTextRow, full_text_row, paper_pdf
from catalog.models import Job
from indexing.contract import PdfJob
from indexing.enqueue import enqueue_pdfs
from indexing.pipeline import Pipeline
from indexing.queue import EmbeddedQueue
from indexing.wiring import make_embedder, open_store
from indexing.worker import EmbeddedWorker, WorkerStats
from retrieval.store import ChunkStore
from settings import SHARED_DATA, Settings, get_settings
from tests.integration.indexing_peers import (
    EmbeddingServer,
    embedding_env,
    embedding_server,
    import_papers,
    paper_text,
    text_pdf,
)
from tests.integration.loopback_http import LoopbackServer, Reply, Request, serve
from tests.integration.pdf_samples import font_bomb

REAL = "1502.03167"  # a real arXiv PDF (165 kB, 11 pages), stamped with its id
REAL_PDF = SHARED_DATA / "pdfs" / "arxiv" / f"{REAL}.pdf"
PAPER = "2408.00001"


@pytest.fixture(scope="module")
def peer() -> Iterator[EmbeddingServer]:
    with embedding_server() as server:
        yield server


class Arxiv:
    """The loopback stand-in for arXiv's PDF host: ``answers[path]`` is a list of replies given in
    turn (the last one repeats)."""

    def __init__(self) -> None:
        self.answers: dict[str, list[Reply]] = {}
        self.server: LoopbackServer | None = None

    def __call__(self, request: Request) -> Reply:
        replies = self.answers.get(request.path)
        if not replies:
            return Reply(404, b"not found", {"Content-Type": "text/plain"})
        return replies.pop(0) if len(replies) > 1 else replies[0]

    @property
    def asked(self) -> list[str]:
        assert self.server is not None
        return [r.path for r in self.server.requests]


@pytest.fixture
def arxiv() -> Iterator[Arxiv]:
    host = Arxiv()
    with serve(host) as server:
        host.server = server
        yield host


def pdf_reply(data: bytes) -> Reply:
    return Reply(200, data, {"Content-Type": "application/pdf"})


class Harness:
    def __init__(self, settings: Settings, engine: Engine) -> None:
        self.settings = settings
        self.engine = engine
        self.embedder = make_embedder(settings)
        self.store: ChunkStore = open_store(settings, self.embedder)
        self.queue = EmbeddedQueue(engine)
        self.after_each: list[FullTextRow | None] = []  # the paper's state after each job ran

    def ask(self, *ids: str) -> None:
        enqueue_pdfs(self.engine, self.queue, [PdfJob(i) for i in ids], collection=self.store.name)

    def state(self, arxiv_id: str = PAPER) -> FullTextRow:
        with Session(self.engine) as session:
            row = full_text_row(session, arxiv_id)
        assert row is not None
        return row

    def run(self) -> WorkerStats:
        worker = EmbeddedWorker(Pipeline(self.settings, self.engine, self.store, self.embedder))
        worker.on_job = lambda: self.after_each.append(self.state())
        return worker.run(until_empty=True)

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def harness(
    monkeypatch: pytest.MonkeyPatch, peer: EmbeddingServer, engine: Engine, arxiv: Arxiv
) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def build(**extra: str) -> Harness:
        assert arxiv.server is not None
        for name, value in {
            **embedding_env(peer),
            "WOVEPAPER_ARXIV_PDF_URL": f"{arxiv.server.url}/pdf/",
            "WOVEPAPER_ARXIV_INTERVAL_SECONDS": "0",
            "WOVEPAPER_ARXIV_RETRIES": "0",
            "WOVEPAPER_ARXIV_TIMEOUT_SECONDS": "5",
            "WOVEPAPER_WORKER_RETRY_DELAY_SECONDS": "0.2",
            "WOVEPAPER_WORKER_POLL_SECONDS": "0.05",
            **extra,
        }.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        made.append(Harness(get_settings(), engine))
        import_papers(engine, [PAPER])
        return made[-1]

    yield build
    for h in made:
        h.close()


def test_a_real_arxiv_pdf_is_fetched_by_id_parsed_and_indexed_with_its_pages(harness, arxiv: Arxiv) -> None:
    h = harness()
    import_papers(h.engine, [REAL])
    arxiv.answers[f"/pdf/{REAL}"] = [pdf_reply(REAL_PDF.read_bytes())]
    h.ask(PAPER, REAL)  # PAPER has no PDF there: it fails first, REAL waits behind it
    queued = h.state(REAL)
    assert (queued.status, queued.stage, queued.ahead) == ("queued", None, 1)

    stats = h.run()

    assert (stats.done, stats.failed) == (1, 1)
    assert arxiv.asked == [f"/pdf/{PAPER}", f"/pdf/{REAL}"]
    done = h.state(REAL)
    assert (done.status, done.stage, done.reason) == ("done", None, None)
    assert done.pages == 11 and done.chunks and done.chunks > 11
    ids = sorted(h.store.ids(where={"arxiv_id": REAL}))
    body = [c for c in h.store.get(ids) if c.metadata["kind"] == "body"]
    assert len(body) == done.chunks - 1  # chunk 0 is the title + abstract
    assert {c.metadata["page_start"] for c in body} >= set(range(1, 10))  # the pages survive
    assert any("Batch Normalization" in c.text for c in body)
    with Session(h.engine) as db:  # kept on disk, so the page reader draws its pages
        pdf = paper_pdf(db, REAL)
    assert pdf is not None and pdf.stored_path is not None
    kept = Path(pdf.stored_path)
    assert kept.parent == h.settings.fetched_pdf_dir
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == pdf.sha256 == kept.stem


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (
            Reply(404, b"<html>no such paper</html>", {"Content-Type": "text/html"}),
            "arXiv has no PDF for this paper",
        ),
        (
            Reply(200, b"<!DOCTYPE html><html>maintenance</html>", {"Content-Type": "text/html"}),
            "the file is not a PDF",
        ),
        (
            Reply(200, b"%PDF-1.7\n" + b"0" * 50_000, {"Content-Type": "application/pdf"}),
            "the PDF is too large",
        ),
        (Reply(200, b"%PDF-1.7\nthis is not really a PDF at all\n%%EOF\n"), "the PDF could not be read"),
    ],
    ids=["404", "not-a-pdf", "oversize", "unreadable"],
)
def test_a_fetch_that_cannot_succeed_fails_at_once_with_a_plain_reason(
    harness, arxiv: Arxiv, reply: Reply, reason: str
) -> None:
    h = harness(WOVEPAPER_PDF_MAX_BYTES="20000")
    arxiv.answers[f"/pdf/{PAPER}"] = [reply]
    h.ask(PAPER)
    stats = h.run()
    assert (stats.done, stats.failed, stats.retried) == (0, 1, 0)  # not retried
    failed = h.state()
    assert failed.status == "failed" and (failed.reason or "").startswith(reason + " ("), failed.reason
    assert arxiv.asked == [f"/pdf/{PAPER}"]
    assert h.store.ids(where={"arxiv_id": PAPER}) == [] or all(
        c.metadata["kind"] == "abstract" for c in h.store.get(h.store.ids(where={"arxiv_id": PAPER}))
    )


def test_a_pdf_that_crashes_the_parser_fails_the_paper_and_the_worker_goes_on(harness, arxiv: Arxiv) -> None:
    """A font that inflates to 512 MiB: the sandboxed child dies at its memory limit; the worker
    (the parent) marks the paper failed and runs the next job."""
    h = harness()
    bomb = font_bomb(512)
    second = "2408.00002"
    import_papers(h.engine, [second])
    arxiv.answers[f"/pdf/{PAPER}"] = [pdf_reply(bomb)]
    arxiv.answers[f"/pdf/{second}"] = [pdf_reply(text_pdf([paper_text(second, 20)]))]
    h.ask(PAPER, second)
    stats = h.run()
    assert (stats.done, stats.failed) == (1, 1)
    failed = h.state()
    assert failed.status == "failed" and (failed.reason or "").startswith("the PDF could not be read ("), (
        failed.reason
    )
    assert h.state(second).status == "done"


def test_429_with_retry_after_keeps_the_paper_queued_until_arxiv_allows_another_try(
    harness, arxiv: Arxiv, engine: Engine
) -> None:
    # Retry-After over the client's own wait: the worker does not sleep on it, the job is put
    # back on the queue for at least that long.
    h = harness(WOVEPAPER_ARXIV_MAX_WAIT_SECONDS="0.5")
    arxiv.answers[f"/pdf/{PAPER}"] = [
        Reply(429, b"slow down", {"Retry-After": "2"}),
        pdf_reply(text_pdf([paper_text(PAPER, 20)])),
    ]
    h.ask(PAPER)
    started = time.monotonic()
    stats = h.run()

    assert (stats.done, stats.retried, stats.failed) == (1, 1, 0)
    waiting = h.after_each[0]
    assert waiting is not None and waiting.status == "queued" and waiting.stage is None
    assert (waiting.reason or "").startswith("arXiv could not be reached (it asked us to wait"), (
        waiting.reason
    )
    assert "trying again in about 2 s" in (waiting.reason or "")
    requests = arxiv.server.requests if arxiv.server else []
    assert len(requests) == 2 and requests[1].arrived - requests[0].arrived >= 1.9
    assert time.monotonic() - started >= 1.9
    assert h.state().status == "done"
    with Session(engine) as session:
        assert session.scalar(select(Job.status).where(Job.key == f"pdf:{PAPER}")) == "done"


@pytest.mark.parametrize("kind", ["timeout", "offline"])
def test_arxiv_out_of_reach_is_retried_then_reads_could_not_be_reached(
    harness, arxiv: Arxiv, kind: str, tmp_path: Path
) -> None:
    extra = {"WOVEPAPER_ARXIV_TIMEOUT_SECONDS": "0.3", "WOVEPAPER_WORKER_MAX_ATTEMPTS": "2"}
    if kind == "offline":  # the demo without a network: nothing listens at the address
        from tests.integration.indexing_peers import free_port

        extra["WOVEPAPER_ARXIV_PDF_URL"] = f"http://127.0.0.1:{free_port()}/pdf/"
    h = harness(**extra)
    arxiv.answers[f"/pdf/{PAPER}"] = [Reply(200, b"%PDF-late", delay=1.5)]
    h.ask(PAPER)
    stats = h.run()
    assert (stats.done, stats.failed, stats.retried) == (0, 1, 1)
    assert h.after_each[0] is not None and h.after_each[0].status == "queued"  # between the attempts
    failed = h.state()
    assert failed.status == "failed"
    assert (failed.reason or "").startswith("arXiv could not be reached ("), failed.reason
    assert (failed.reason or "").endswith("; gave up after 2 attempts")
    if kind == "timeout":
        assert len(arxiv.asked) == 2
