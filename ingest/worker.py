"""The indexing worker: takes jobs from a queue, runs them through ``ingest.pipeline`` and keeps
each paper's status in the catalogue.

Two loops share one :class:`JobRunner`:

- :class:`EmbeddedWorker` works the catalogue's own queue (``ingest.queue.EmbeddedQueue``). In the
  embedded default it runs as a daemon thread of the web app (:func:`start_in_thread`), because
  only the process that writes the embedded Chroma sees its newest vectors; ``python -m ingest
  worker`` runs it in the foreground when no app is up.
- :func:`run_saq_worker` works SAQ on Redis when scaled out (``python -m ingest worker``, one
  process per core), reconciling the catalogue with Redis so a lost job is enqueued again.

Failures: a bad PDF, a refused URL or an unidentifiable paper fail at once with the reason; anything
else (Chroma or the embedding endpoint down, a network error) is retried with exponential backoff and
failed with its last reason after ``worker_max_attempts``. A job whose worker died is taken over when
its lease (embedded) or heartbeat (SAQ) runs out.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from catalog.indexing import IndexingProgress, indexing_progress
from ingest import status
from ingest.contract import AbstractsJob, JobSpec, PdfJob
from ingest.fetch import FetchError
from ingest.pipeline import Interrupted, PaperRow, PermanentFailure, Pipeline, load_papers
from ingest.queue import Claimed, EmbeddedQueue, SaqQueue
from retrieval.embedder import Embedder
from retrieval.store import ChunkStore, StoreError
from settings import Settings

log = logging.getLogger(__name__)

FIRST_RUN_FILE = "first-run.json"
DB_RETRY = 30.0  # seconds between attempts to reach an unreachable catalogue


class RetryLater(Exception):
    """This attempt failed for a reason that may pass; the queue should run the job again later."""

    def __init__(self, reason: str, delay: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay


@dataclass(frozen=True, slots=True)
class Outcome:
    status: Literal["done", "failed", "skipped"]
    detail: str = ""


def backoff(settings: Settings, attempt: int) -> float:
    """Delay before attempt ``attempt + 1``: the base delay doubled for each earlier attempt."""
    conf = settings.worker
    return min(
        conf.worker_retry_max_delay_seconds, conf.worker_retry_delay_seconds * 2 ** max(0, attempt - 1)
    )


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class JobRunner:
    """Runs one job and keeps the per-paper status; shared by the embedded and the SAQ worker."""

    def __init__(self, settings: Settings, engine: Engine, pipeline: Pipeline) -> None:
        self.settings = settings
        self.engine = engine
        self.pipeline = pipeline
        self.max_attempts = settings.worker.worker_max_attempts

    def run(
        self,
        spec: JobSpec,
        *,
        queue_attempt: int,
        run_id: str,
        should_stop: Callable[[], bool] | None = None,
    ) -> Outcome:
        """Done, failed or skipped (already finished); raises :class:`RetryLater` or
        :class:`~ingest.pipeline.Interrupted` (when ``should_stop`` turns true). One job at a
        time per runner."""
        try:
            job = spec.job()
        except ValueError as exc:
            return Outcome("failed", str(exc))
        default = self.pipeline.should_stop
        if should_stop is not None:
            self.pipeline.should_stop = should_stop
        try:
            if isinstance(job, PdfJob):
                return self._run_pdf(job, run_id, queue_attempt)
            return self._run_abstracts(job, queue_attempt)
        finally:
            self.pipeline.should_stop = default

    # -- one PDF -----------------------------------------------------------------------------------

    def _run_pdf(self, job: PdfJob, run_id: str, queue_attempt: int) -> Outcome:
        paper: PaperRow | None = None
        attempt = queue_attempt  # until the paper is known; then the catalogue counts
        if job.arxiv_id:
            found = load_papers(self.engine, arxiv_ids_=[job.arxiv_id])
            paper = found[0] if found else None
        if paper is not None:
            taken = status.begin(self.engine, paper.id, run_id, source=job.path, force=False)
            if taken is None:
                return Outcome("skipped", f"{paper.arxiv_id} is already finished (a redelivered job)")
            attempt = taken
            if attempt > self.max_attempts:
                reason = f"gave up after {self.max_attempts} attempts: the worker stopped while processing it"
                status.finish_failed(self.engine, paper.id, run_id, reason)
                return Outcome("failed", reason)
        try:
            data, source = self.pipeline.read_source(job)
            parsed = self.pipeline.parse(data)
            identified = self.pipeline.identify(job, parsed)
            if paper is None:  # the PDF itself told us which paper it is
                paper = identified
                taken = status.begin(self.engine, paper.id, run_id, source=job.path, force=True)
                if taken is None:  # pragma: no cover - force always takes the row
                    return Outcome("skipped", f"{paper.arxiv_id} is held by another run")
                attempt = taken
            unchanged = self._unchanged(
                job, paper, parsed.sha256, parsed.metadata.version if parsed.metadata else None
            )
            if unchanged:
                status.finish_unchanged(self.engine, paper.id, run_id, unchanged)
                return Outcome("done", unchanged)
            result = self.pipeline.index_pdf(job, data, source, parsed, paper)
        except Interrupted:
            if paper is not None:
                status.release(self.engine, paper.id, run_id)
            raise
        except PermanentFailure as exc:
            return self._fail(paper, run_id, exc.reason)
        except Exception as exc:  # anything else may be transient: retry with backoff
            if isinstance(exc, FetchError) and not exc.retryable:
                return self._fail(paper, run_id, exc.reason)
            reason = describe(exc)
            log.warning("%s: attempt %d failed: %s", job.arxiv_id or job.path, attempt, reason, exc_info=True)
            if attempt >= self.max_attempts:
                if paper is not None:
                    self._remove_partial(paper)
                return self._fail(paper, run_id, f"failed after {attempt} attempts: {reason}")
            delay = backoff(self.settings, attempt)
            if paper is None:  # no status row yet: the queue alone keeps count
                raise RetryLater(reason, delay) from exc
            status.requeue(
                self.engine,
                paper.id,
                run_id,
                f"attempt {attempt} of {self.max_attempts} failed: {reason}; retrying",
            )
            raise RetryLater(reason, delay) from exc
        finished = status.finish_done(
            self.engine,
            paper.id,
            run_id,
            version=result.version,
            sha256=result.sha256,
            pages=result.pages,
            chunks=result.chunks,
            parser=result.parser,
            collection=self.pipeline.store.name,
            hidden_text=result.hidden_text,
            source=result.source,
        )
        if not finished:
            log.warning("%s: another run finished it first; this run's result is discarded", paper.arxiv_id)
            return Outcome("skipped", "finished by another run")
        return Outcome("done", f"{paper.arxiv_id}: {result.pages} pages, {result.chunks} chunks")

    def _unchanged(self, job: PdfJob, paper: PaperRow, sha256: str, stamped: int | None) -> str | None:
        """Why this file needs no work (the same file, or an older version than the one indexed)."""
        held = status.indexed(self.engine, paper.id)
        if job.force or held is None or held.collection != self.pipeline.store.name or not held.sha256:
            return None
        if held.sha256 == sha256:
            return "unchanged: this file is already indexed"
        version = job.version or stamped
        if held.version and version and version < held.version:
            return f"kept v{held.version}: this file is the older v{version}"
        return None

    def _fail(self, paper: PaperRow | None, run_id: str, reason: str) -> Outcome:
        if paper is not None:
            status.finish_failed(self.engine, paper.id, run_id, reason)
        log.warning("%s failed: %s", paper.arxiv_id if paper else "PDF", reason)
        return Outcome("failed", reason)

    def _remove_partial(self, paper: PaperRow) -> None:
        """After a final failure mid-write, drop the paper's body chunks that a done run did not
        record (a half-written new version), so no orphan chunks are left behind."""
        held = status.indexed(self.engine, paper.id)
        try:
            if held and held.sha256 and held.collection == self.pipeline.store.name:
                self.pipeline.store.delete_paper(
                    paper.arxiv_id, kind="body", except_version=held.version or 0
                )
            else:
                self.pipeline.store.delete_paper(paper.arxiv_id, kind="body")
        except StoreError as exc:
            log.warning("%s: could not remove partial chunks: %s", paper.arxiv_id, exc)

    # -- a bucket of abstracts ---------------------------------------------------------------------

    def _run_abstracts(self, job: AbstractsJob, attempt: int) -> Outcome:
        if attempt > self.max_attempts:
            return Outcome("failed", f"gave up after {self.max_attempts} attempts")
        try:
            count = self.pipeline.index_abstracts(job)
        except Interrupted:
            raise
        except PermanentFailure as exc:
            return Outcome("failed", exc.reason)
        except Exception as exc:
            reason = describe(exc)
            if attempt >= self.max_attempts:
                return Outcome("failed", f"failed after {attempt} attempts: {reason}")
            raise RetryLater(reason, backoff(self.settings, attempt)) from exc
        return Outcome("done", f"{count} abstracts embedded")


# -- progress on the console -------------------------------------------------------------------


class ProgressReporter:
    """Log lines with counts, rate and ETA while the worker is busy, and a summary when the queue
    drains (including, once, how long the first ``make run`` took to index everything)."""

    def __init__(self, engine: Engine, collection: str, data_dir: Path, *, every: float = 15.0) -> None:
        self.engine = engine
        self.collection = collection
        self.data_dir = data_dir
        self.every = every
        self._last = 0.0
        self._busy_since: float | None = None
        self._jobs = 0

    def progress(self) -> IndexingProgress:
        with Session(self.engine) as session:
            return indexing_progress(session, self.collection)

    def job_done(self) -> None:
        if self._busy_since is None:
            self._busy_since = time.monotonic()
        self._jobs += 1
        if time.monotonic() - self._last >= self.every:
            self._last = time.monotonic()
            log.info(format_progress(self.progress()))

    def drained(self) -> None:
        if self._busy_since is None:
            return
        took = time.monotonic() - self._busy_since
        log.info(
            "queue drained: %d jobs in %s — %s", self._jobs, _duration(took), format_progress(self.progress())
        )
        first = finish_first_run(self.data_dir)
        if first is not None:
            log.info("first run: everything indexed %s after `make run` started", _duration(first))
        self._busy_since = None
        self._jobs = 0


def format_progress(p: IndexingProgress) -> str:
    ft = p.full_texts
    total_pdfs = sum(ft.values())
    eta = p.eta_seconds
    parts = [
        f"PDFs {ft.get('done', 0)}/{total_pdfs} done "
        f"({ft.get('failed', 0)} failed, {p.pdfs_pending} pending)",
        f"abstracts {p.abstracts_indexed:,}/{p.papers:,} ({p.abstracts_per_minute:,.0f}/min)",
    ]
    if eta is not None:
        parts.append(f"{'PDFs' if p.phase == 'pdfs' else 'abstracts'} done in about {_duration(eta)}")
    return "indexing: " + ", ".join(parts)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def record_first_run_start(data_dir: Path, started: float) -> bool:
    """Remember when the first ``make run`` started (only once: later runs are not "first")."""
    path = data_dir / FIRST_RUN_FILE
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"started": started, "finished": None}))
    return True


def finish_first_run(data_dir: Path) -> float | None:
    """Seconds from the first run's start to now, the first time the queue drains; else None."""
    path = data_dir / FIRST_RUN_FILE
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if info.get("finished") is not None or not isinstance(info.get("started"), int | float):
        return None
    info["finished"] = time.time()
    path.write_text(json.dumps(info))
    return float(info["finished"] - info["started"])


def console_logging() -> None:
    """Make the worker's progress lines visible when nothing else configured logging (the web app
    runs uvicorn at warning level)."""
    logger = logging.getLogger("ingest")
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    if not logging.getLogger().handlers and not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        logger.addHandler(handler)
        logger.propagate = False


# -- the embedded worker -----------------------------------------------------------------------


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class _Heartbeat:
    """Renews a claimed job's lease every third of the lease time, from its own thread."""

    def __init__(self, queue: EmbeddedQueue, claimed: Claimed, lease: float) -> None:
        self.queue = queue
        self.claimed = claimed
        self.lease = lease
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="wovepaper-heartbeat", daemon=True)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        while not self._stop.wait(self.lease / 3):
            try:
                if not self.queue.heartbeat(self.claimed, lease=self.lease):
                    log.warning("lost the lease on %s: another worker took it over", self.claimed.spec.key)
                    return
            except Exception:  # a missed beat is retried at the next tick
                log.exception("heartbeat for %s failed", self.claimed.spec.key)


@dataclass
class WorkerStats:
    done: int = 0
    failed: int = 0
    retried: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)


class EmbeddedWorker:
    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        store: ChunkStore,
        embedder: Embedder,
        *,
        pipeline: Pipeline | None = None,
        name: str | None = None,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.name = name or worker_name()
        self.stop_event = threading.Event()
        self.queue = EmbeddedQueue(engine)
        self.pipeline = pipeline or Pipeline(
            settings, engine, store, embedder, should_stop=self.stop_event.is_set
        )
        self.runner = JobRunner(settings, engine, self.pipeline)
        self.reporter = ProgressReporter(engine, store.name, settings.core.data_dir)
        self.stats = WorkerStats()
        self.on_job: Callable[[], None] = lambda: None  # after each job (a progress bar)

    def run(self, *, until_empty: bool = False) -> WorkerStats:
        conf = self.settings.worker
        log.info("worker %s started (embedded queue, %s)", self.name, self.pipeline.store.where)
        while not self.stop_event.is_set():
            try:
                if not self._step(conf.worker_lease_seconds, conf.worker_poll_seconds, until_empty):
                    break
            except SQLAlchemyError as exc:
                # The catalogue is away or not migrated yet: keep trying, quietly. A job whose
                # completion was lost keeps its lease until it lapses and then runs again
                # (jobs are idempotent), so nothing is lost.
                log.warning(
                    "the job queue cannot be reached (%s); retrying in %.0f s", describe(exc), DB_RETRY
                )
                self.stop_event.wait(DB_RETRY)
        self.pipeline.close()
        return self.stats

    def _step(self, lease: float, poll: float, until_empty: bool) -> bool:
        """Claim and run one job, or wait for one; False once ``until_empty`` finds nothing left."""
        claimed = self.queue.claim(self._run_id(), lease=lease)
        if claimed is None:
            if self.queue.pending() == 0:
                self.reporter.drained()
                if until_empty:
                    return False
            self.stop_event.wait(self._idle_wait(poll, until_empty))
            return True
        self._work(claimed)
        self.reporter.job_done()
        self.on_job()
        return True

    def _idle_wait(self, poll: float, until_empty: bool) -> float:
        if not until_empty:
            return poll
        due = self.queue.next_due()  # only retries scheduled later remain: sleep until the first
        return poll if due is None else min(max(0.05, due - time.time()), 60.0)

    def _run_id(self) -> str:
        return f"{self.name}:{uuid.uuid4().hex[:10]}"

    def _work(self, claimed: Claimed) -> None:
        conf = self.settings.worker
        with _Heartbeat(self.queue, claimed, conf.worker_lease_seconds):
            try:
                outcome = self.runner.run(claimed.spec, queue_attempt=claimed.attempts, run_id=claimed.worker)
            except Interrupted:
                self.queue.release(claimed)
                log.info("%s handed back: the worker is stopping", claimed.spec.key)
                return
            except RetryLater as retry:
                self.queue.retry(claimed, retry.reason, delay=retry.delay)
                self.stats.retried += 1
                log.info("%s: will retry in %.0f s (%s)", claimed.spec.key, retry.delay, retry.reason)
                return
            except Exception as exc:  # a bug in the runner itself: fail the job, keep the worker
                log.exception("%s crashed the runner", claimed.spec.key)
                self.queue.fail(claimed, describe(exc))
                self.stats.failed += 1
                return
        if outcome.status == "failed":
            self.queue.fail(claimed, outcome.detail)
            self.stats.failed += 1
            what = claimed.spec.payload.get("path") or claimed.spec.key
            self.stats.failures.append(f"{what}: {outcome.detail}")
        else:
            self.queue.complete(claimed)
            if outcome.status == "done":
                self.stats.done += 1
            else:
                self.stats.skipped += 1
        log.debug("%s: %s %s", claimed.spec.key, outcome.status, outcome.detail)


class ThreadHandle:
    """The embedded worker running in a daemon thread (see ``ingest.contract.WorkerHandle``)."""

    def __init__(self, worker: EmbeddedWorker) -> None:
        self.worker = worker
        self._thread = threading.Thread(target=self._main, name="wovepaper-worker", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            self.worker.run()
        except Exception:  # the web app keeps serving; the log says why indexing stopped
            log.exception("the background indexing worker stopped")

    def stop(self, timeout: float = 30.0) -> None:
        self.worker.stop_event.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("the indexing worker did not stop within %.0f s; its job will be retried", timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


def start_in_thread(
    settings: Settings, engine: Engine, store: ChunkStore, embedder: Embedder
) -> ThreadHandle:
    console_logging()
    return ThreadHandle(EmbeddedWorker(settings, engine, store, embedder))


# -- the SAQ worker ----------------------------------------------------------------------------


def run_saq_worker(
    settings: Settings,
    engine: Engine,
    store: ChunkStore,
    embedder: Embedder,
    *,
    queue: SaqQueue | None = None,
    until_empty: bool = False,
) -> None:
    queue = queue or SaqQueue.from_settings(settings)
    pipeline = Pipeline(settings, engine, store, embedder)
    runner = JobRunner(settings, engine, pipeline)
    name = worker_name()
    beat_every = settings.worker.worker_lease_seconds / 3
    reporter = ProgressReporter(engine, store.name, settings.core.data_dir)

    async def handle(spec: JobSpec, attempt: int, beat: Callable[[], Awaitable[None]]) -> dict[str, str]:
        run_id = f"{name}:{uuid.uuid4().hex[:10]}"
        stop = threading.Event()  # this job's: set when SAQ cancels it (shutdown, abort)
        task = asyncio.ensure_future(
            asyncio.to_thread(runner.run, spec, queue_attempt=attempt, run_id=run_id, should_stop=stop.is_set)
        )
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=beat_every)
                if done:
                    break
                await beat()
        except asyncio.CancelledError:  # SAQ is shutting down: let the pipeline hand the job back
            stop.set()
            await asyncio.wait({task})
            raise
        try:
            outcome = task.result()
        except Interrupted as exc:
            raise RetryLater("the worker stopped", 0) from exc
        reporter.job_done()
        return {"status": outcome.status, "detail": outcome.detail}

    async def reconcile(saq: SaqQueue, client: Any) -> None:
        await reconcile_with_catalogue(settings, engine, saq, client)

    async def unfinished() -> int:
        return len(await asyncio.to_thread(status.unfinished, engine))

    log.info(
        "worker %s started (SAQ queue %r on %s, %s)", name, queue.name, settings.redis.redis_url, store.where
    )
    try:
        queue.run_worker(
            handle,
            until_empty=until_empty,
            reconcile=reconcile,
            reconcile_every=max(5.0, settings.worker.worker_lease_seconds),
            unfinished=unfinished,
        )
    finally:
        pipeline.close()
        reporter.drained()


async def reconcile_with_catalogue(
    settings: Settings, engine: Engine, saq: SaqQueue, client: Any = None, *, grace: float | None = None
) -> int:
    """Enqueue again every unfinished paper whose job Redis no longer has (Redis restarted, SAQ gave
    up on a job whose workers kept dying, or a sweeper died half-way); fail those that used up their
    attempts. A row younger than ``grace`` (default: two leases, at least 10 s) is left alone: its
    enqueuer may not have reached Redis yet. Returns how many rows were acted on."""
    if grace is None:
        grace = max(10.0, 2 * settings.worker.worker_lease_seconds)
    rows = await asyncio.to_thread(status.unfinished, engine)
    if not rows:
        return 0
    keys = [PdfJob(r.arxiv_id).key for r in rows]
    alive = await saq.alive_async(keys, client)
    now = time.time()
    lost = []
    acted = 0
    for row, key in zip(rows, keys, strict=True):
        if alive[key] or now - row.updated_at.timestamp() < grace:
            continue
        if row.attempts >= settings.worker.worker_max_attempts and row.status == "running":
            reason = f"gave up after {row.attempts} attempts: the worker stopped while processing it"
            await asyncio.to_thread(status.fail_stale, engine, row.paper_id, reason)
        else:
            lost.append(PdfJob(row.arxiv_id, path=row.source_path).spec())
        acted += 1
    if lost:
        log.info("re-enqueuing %d papers whose jobs the queue lost", len(lost))
        await saq.enqueue_async(lost, client)
    return acted
