"""The indexing worker's two loops, sharing one :class:`~indexing.runner.JobRunner`:

- :class:`EmbeddedWorker` works the catalogue's own queue (``indexing.queue.EmbeddedQueue``). In the
  embedded default it runs as a daemon thread of the web app (``indexing.wiring.start_in_thread``),
  because only the process that writes the embedded Chroma sees its newest vectors; ``python -m
  indexing worker`` runs it in the foreground when no app is up.
- :func:`run_saq_worker` works SAQ on Redis when scaled out (``python -m indexing worker``, one
  process per core), reconciling the catalogue with Redis so a lost job is enqueued again.

A job whose worker died is taken over when its lease (embedded) or heartbeat (SAQ) runs out.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from indexing import status
from indexing.contract import JobSpec, PdfJob
from indexing.pipeline import Interrupted, Pipeline
from indexing.progress import ProgressReporter
from indexing.queue import Claimed, EmbeddedQueue, SaqQueue
from indexing.runner import JobRunner, RetryLater, describe
from retrieval.embedder import Embedder
from retrieval.lexical import CatalogueSync
from retrieval.store import ChunkStore
from settings import Settings, WorkerSettings

log = logging.getLogger(__name__)

DB_RETRY = 30.0  # seconds between attempts to reach an unreachable catalogue


# -- the embedded worker -----------------------------------------------------------------------


@contextmanager
def _working(settings: Settings, pipeline: Pipeline, engine: Engine, *, until_empty: bool) -> Iterator[None]:
    """While a worker works the queue: a long-running one keeps the lexical index in step with the
    catalogue (metadata imported by other processes; one worker process at a time), a drain that
    stops when the queue is empty does not. Then the pipeline is closed."""
    sync = None
    if not until_empty:
        sync = CatalogueSync(pipeline.lexical, engine, interval=settings.search.lexical_sync_seconds).start()
    try:
        yield
    finally:
        if sync is not None:
            sync.stop()
        pipeline.close()


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
    """Runs ``pipeline``'s jobs from the embedded queue until stopped (or, for a drain, until the
    queue is empty)."""

    def __init__(self, pipeline: Pipeline, *, name: str | None = None) -> None:
        self.settings = pipeline.settings
        self.engine = pipeline.engine
        self.pipeline = pipeline
        self.name = name or worker_name()
        self.stop_event = threading.Event()
        self.queue = EmbeddedQueue(self.engine)
        self.foreground = pipeline.foreground
        self.runner = JobRunner(self.settings, self.engine, pipeline)
        self.reporter = ProgressReporter(self.engine, pipeline.store.name, self.settings.core.data_dir)
        self.stats = WorkerStats()
        self.on_job: Callable[[], None] = lambda: None  # after each job (a progress bar)

    def run(self, *, until_empty: bool = False) -> WorkerStats:
        conf = self.settings.worker
        log.info("worker %s started (embedded queue, %s)", self.name, self.pipeline.store.where)
        with _working(self.settings, self.pipeline, self.engine, until_empty=until_empty):
            self._loop(conf, until_empty)
        return self.stats

    def _loop(self, conf: WorkerSettings, until_empty: bool) -> None:
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

    def _step(self, lease: float, poll: float, until_empty: bool) -> bool:
        """Claim and run one job, or wait for one; False once ``until_empty`` finds nothing left.
        Foreground work (a question being answered, the model being built) goes first."""
        self.foreground.wait(self.stop_event.is_set)
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
                outcome = self.runner.run(
                    claimed.spec,
                    queue_attempt=claimed.attempts,
                    run_id=claimed.worker,
                    should_stop=self.stop_event.is_set,
                )
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
    """The embedded worker running in a daemon thread (see ``indexing.contract.WorkerHandle``)."""

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
    with _working(settings, pipeline, engine, until_empty=until_empty):
        queue.run_worker(
            handle,
            until_empty=until_empty,
            reconcile=reconcile,
            reconcile_every=max(5.0, settings.worker.worker_lease_seconds),
            unfinished=unfinished,
        )
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
