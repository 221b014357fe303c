"""Job queues: the embedded one in the catalogue, and SAQ on Redis when scaled out (the only
module that imports saq).

Both deliver at least once; jobs are keyed and idempotent (see ``indexing.contract``).

**Embedded** (:class:`EmbeddedQueue`): rows of the ``jobs`` table. A claim takes the queued job with
the lowest priority number whose ``run_after`` has passed, or a running job whose lease expired (its
worker died), in one short write transaction: ``BEGIN IMMEDIATE`` on SQLite, ``FOR UPDATE SKIP
LOCKED`` on PostgreSQL, so concurrent workers never claim the same row. A running worker renews its
lease; every state change is conditional on the claim (``worker`` = the run id), so a worker that
lost its lease cannot overwrite the one that took over.

**SAQ** (:class:`SaqQueue`): one Redis queue; retries with exponential backoff are SAQ's, and a job
whose worker died is noticed by SAQ's sweep once its heartbeat is overdue and retried.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from saq import Queue as SaqClientQueue
from saq import Worker as SaqWorker
from saq.job import ABORT_ID_PREFIX
from saq.job import Job as SaqJob
from saq.types import Context
from sqlalchemy import Engine, and_, func, or_, select, update
from sqlalchemy.exc import IntegrityError

from catalog.db import transaction
from catalog.models import Job
from indexing.contract import SAQ_FUNCTION, JobSpec
from indexing.status import clean_reason
from settings import Settings

log = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
# SAQ's sweep takes a dead worker's job out of the queue for up to 5 s (waiting for an abort) before
# it retries it: "empty" must hold longer than that before an --until-empty worker stops.
EMPTY_FOR = 7.0
ACTIVE = (QUEUED, RUNNING)


@dataclass(frozen=True, slots=True)
class Claimed:
    """A job this worker now holds: run it, then complete, retry, fail or release it."""

    id: int
    spec: JobSpec
    attempts: int  # including this one
    worker: str
    expired_lease: bool  # the previous holder died while running it


class EmbeddedQueue:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def enqueue(self, specs: Iterable[JobSpec], *, now: float | None = None) -> int:
        """Add jobs; a key already queued or running is left alone, a finished one is queued again
        (with fresh attempts). Returns how many were (re)queued."""
        added = 0
        stamp = time.time() if now is None else now
        specs = list(specs)
        for start in range(0, len(specs), 500):
            batch = {spec.key: spec for spec in specs[start : start + 500]}
            with self._write() as session:
                existing = dict(
                    session.execute(select(Job.key, Job.status).where(Job.key.in_(list(batch)))).all()
                )
                for key, spec in batch.items():
                    status = existing.get(key)
                    if status in ACTIVE:
                        continue
                    if status is None:
                        session.add(
                            Job(
                                kind=spec.kind,
                                key=key,
                                payload=dict(spec.payload),
                                priority=spec.priority,
                                status=QUEUED,
                                attempts=0,
                                run_after=stamp,
                            )
                        )
                    else:
                        session.execute(
                            update(Job)
                            .where(Job.key == key)
                            .values(
                                status=QUEUED,
                                payload=dict(spec.payload),
                                priority=spec.priority,
                                attempts=0,
                                run_after=stamp,
                                lease_until=None,
                                worker=None,
                                error=None,
                            )
                        )
                    added += 1
        return added

    async def enqueue_async(self, specs: Sequence[JobSpec]) -> int:
        """:meth:`enqueue` for an event loop: the short write transaction runs in a thread."""
        return await asyncio.to_thread(self.enqueue, specs)

    def claim(self, worker: str, *, lease: float, now: float | None = None) -> Claimed | None:
        stamp = time.time() if now is None else now
        due = or_(
            and_(Job.status == QUEUED, Job.run_after <= stamp),
            and_(Job.status == RUNNING, Job.lease_until < stamp),
        )
        try:
            with self._write() as session:
                row = session.execute(
                    select(Job)
                    .where(due)
                    .order_by(Job.priority, Job.run_after, Job.id)
                    .limit(1)
                    .with_for_update(skip_locked=True)
                ).scalar_one_or_none()
                if row is None:
                    return None
                expired = row.status == RUNNING
                row.status = RUNNING
                row.attempts += 1
                row.lease_until = stamp + lease
                row.worker = worker
                spec = JobSpec.from_json(
                    {"kind": row.kind, "key": row.key, "payload": row.payload, "priority": row.priority}
                )
                return Claimed(row.id, spec, row.attempts, worker, expired)
        except IntegrityError:  # pragma: no cover - a racing enqueue; the next poll claims
            return None

    def heartbeat(self, claimed: Claimed, *, lease: float) -> bool:
        """Extend the lease; False when another worker has taken the job over."""
        return self._update(claimed, lease_until=time.time() + lease)

    def complete(self, claimed: Claimed) -> bool:
        return self._update(claimed, status=DONE, lease_until=None, error=None)

    def fail(self, claimed: Claimed, reason: str) -> bool:
        return self._update(claimed, status=FAILED, lease_until=None, error=clean_reason(reason))

    def retry(self, claimed: Claimed, reason: str, *, delay: float) -> bool:
        return self._update(
            claimed,
            status=QUEUED,
            lease_until=None,
            worker=None,
            error=clean_reason(reason),
            run_after=time.time() + delay,
        )

    def release(self, claimed: Claimed) -> bool:
        """Hand a job back untouched (graceful stop): its attempt does not count."""
        return self._update(
            claimed, status=QUEUED, lease_until=None, worker=None, attempts=Job.attempts - 1, run_after=0.0
        )

    def counts(self, kind: str | None = None) -> dict[str, int]:
        query = select(Job.status, func.count()).group_by(Job.status)
        if kind:
            query = query.where(Job.kind == kind)
        with self.engine.connect() as conn:
            return dict(conn.execute(query).all())

    def pending(self) -> int:
        """Jobs queued or running (including ones scheduled for a later retry)."""
        with self.engine.connect() as conn:
            return conn.execute(
                select(func.count()).select_from(Job).where(Job.status.in_(ACTIVE))
            ).scalar_one()

    def next_due(self) -> float | None:
        """Epoch seconds of the earliest queued job, or None when nothing is queued."""
        with self.engine.connect() as conn:
            return conn.execute(select(func.min(Job.run_after)).where(Job.status == QUEUED)).scalar_one()

    def failures(self, limit: int = 20) -> list[tuple[str, str, str]]:
        """The latest failed jobs: (key, what it was about — a file or the key, reason)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(Job.key, Job.payload, Job.error)
                .where(Job.status == FAILED)
                .order_by(Job.updated_at.desc())
                .limit(limit)
            )
            return [(key, (payload or {}).get("path") or key, error or "") for key, payload, error in rows]

    def _update(self, claimed: Claimed, **values: Any) -> bool:
        with self._write() as session:
            result = session.execute(
                update(Job)
                .where(Job.id == claimed.id, Job.worker == claimed.worker, Job.status == RUNNING)
                .values(**values)
            )
            return bool(result.rowcount)

    def _write(self) -> Any:
        return transaction(self.engine)


# -- SAQ on Redis ------------------------------------------------------------------------------

SaqHandler = Callable[[JobSpec, int, Callable[[], Awaitable[None]]], Awaitable[Any]]


def exact_retry(job: SaqJob, exc: BaseException) -> None:
    """A retry the runner timed exactly (arXiv's ``Retry-After``) waits that long on SAQ too:
    SAQ's own backoff has full jitter, so it could come back sooner than the server allowed."""
    delay = getattr(exc, "delay", None)
    if getattr(exc, "exact", False) and isinstance(delay, int | float) and delay > 0:
        job.retry_delay = float(delay)
        job.retry_backoff = False


class SaqQueue:
    """Enqueue to and work from one SAQ queue on Redis.

    ``retries`` counts attempts (SAQ's meaning): a job runs at most that many times, the delay before
    attempt n+1 being ``retry_delay * 2**(n-1)`` with jitter, capped at ``max_delay``. ``heartbeat``
    is the lease: SAQ's sweep retries an active job whose heartbeat is older than it."""

    def __init__(
        self,
        url: str,
        *,
        name: str = "wovepaper",
        retries: int = 3,
        retry_delay: float = 5.0,
        max_delay: float = 300.0,
        heartbeat: float = 60.0,
        timeout: int = 3600,
    ) -> None:
        self.url = url
        self.name = name
        self.retries = retries
        self.retry_delay = retry_delay
        self.max_delay = max_delay
        self.heartbeat = max(1, round(heartbeat))
        self.timeout = timeout

    @classmethod
    def from_settings(cls, settings: Settings) -> SaqQueue:
        conf = settings.worker
        return cls(
            settings.redis.redis_url,
            name=conf.worker_queue,
            # SAQ counts runs; the catalogue counts attempts per paper and decides when to give up,
            # so SAQ may deliver a little more often (runs cut short by a dead worker).
            retries=conf.worker_max_attempts + 2,
            retry_delay=conf.worker_retry_delay_seconds,
            max_delay=conf.worker_retry_max_delay_seconds,
            heartbeat=conf.worker_lease_seconds,
        )

    def _queue(self) -> SaqClientQueue:
        return SaqClientQueue.from_url(self.url, name=self.name)

    def enqueue(self, specs: Iterable[JobSpec]) -> int:
        """Enqueue from synchronous code (the CLI); a key still queued or running in Redis is left
        alone. Code on an event loop (the web app) awaits :meth:`enqueue_async` instead."""
        return asyncio.run(self.enqueue_async(list(specs)))

    async def enqueue_async(self, specs: Sequence[JobSpec], queue: SaqClientQueue | None = None) -> int:
        own = queue is None
        queue = queue or self._queue()
        added = 0
        try:
            if own:
                await queue.connect()
            for spec in specs:
                job = await queue.enqueue(
                    SAQ_FUNCTION,
                    key=spec.key,
                    spec=spec.to_json(),
                    retries=self.retries,
                    retry_delay=self.retry_delay,
                    retry_backoff=self.max_delay,
                    heartbeat=self.heartbeat,
                    timeout=self.timeout,
                    ttl=24 * 3600,
                )
                added += job is not None
        finally:
            if own:
                await queue.disconnect()
        return added

    def counts(self) -> dict[str, int]:
        """Jobs waiting (queued now), active, and not finished (queued + active + awaiting retry)."""
        return asyncio.run(self._counts())

    async def _counts(self) -> dict[str, int]:
        queue = self._queue()
        try:
            await queue.connect()
            return {kind: await queue.count(kind) for kind in ("queued", "active", "incomplete")}
        finally:
            await queue.disconnect()

    def alive(self, keys: Sequence[str]) -> dict[str, bool]:
        return asyncio.run(self.alive_async(keys))

    async def alive_async(self, keys: Sequence[str], queue: SaqClientQueue | None = None) -> dict[str, bool]:
        """Whether Redis will still run each job: it is queued, running or waiting for a retry
        (SAQ's "incomplete" set), or SAQ's sweep is in the middle of retrying it (an abort marker is
        set for a few seconds). A job that is neither — finished, never enqueued, or left half-swept
        by a sweeper that died — is lost as far as the catalogue is concerned."""
        own = queue is None
        queue = queue or self._queue()
        try:
            if own:
                await queue.connect()
            redis = queue.redis  # type: ignore[attr-defined]
            incomplete = queue.namespace("incomplete")  # type: ignore[attr-defined]
            async with redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.zscore(incomplete, queue.job_id(key))
                    pipe.exists(ABORT_ID_PREFIX + key)
                answers = await pipe.execute()
            return {key: answers[2 * n] is not None or bool(answers[2 * n + 1]) for n, key in enumerate(keys)}
        finally:
            if own:
                await queue.disconnect()

    def run_worker(
        self,
        handler: SaqHandler,
        *,
        until_empty: bool = False,
        reconcile: Callable[[SaqQueue, SaqClientQueue], Awaitable[None]] | None = None,
        reconcile_every: float = 30.0,
        unfinished: Callable[[], Awaitable[int]] | None = None,
    ) -> None:
        """Work jobs one at a time until SIGINT/SIGTERM, or with ``until_empty`` until no job is
        queued, running or waiting for a retry and ``unfinished()`` (the catalogue's view) is 0.
        ``reconcile`` runs at start and every ``reconcile_every`` seconds (it re-enqueues what the
        catalogue says is unfinished but Redis lost)."""
        asyncio.run(
            self._run(
                handler,
                until_empty=until_empty,
                reconcile=reconcile,
                reconcile_every=reconcile_every,
                unfinished=unfinished,
            )
        )

    async def _run(
        self,
        handler: SaqHandler,
        *,
        until_empty: bool,
        reconcile: Callable[[SaqQueue, SaqClientQueue], Awaitable[None]] | None,
        reconcile_every: float,
        unfinished: Callable[[], Awaitable[int]] | None,
    ) -> None:
        queue = self._queue()
        await queue.connect()

        async def wovepaper_job(ctx: Context, *, spec: dict[str, Any]) -> Any:
            job = ctx["job"]

            async def beat() -> None:
                await job.update()  # touches the job: the sweep sees it is alive

            job.retry_delay, job.retry_backoff = self.retry_delay, self.max_delay  # this run's default
            try:
                return await handler(JobSpec.from_json(spec), job.attempts, beat)
            except Exception as exc:
                exact_retry(job, exc)
                raise

        worker = SaqWorker(
            queue,
            functions=[(SAQ_FUNCTION, wovepaper_job)],
            concurrency=1,
            timers={"sweep": max(1, round(self.heartbeat / 2)), "schedule": 1, "abort": 1, "worker_info": 10},
            shutdown_grace_period_s=30,
        )

        async def housekeeping() -> None:
            last = time.monotonic()
            empty_since: float | None = None
            while True:
                await asyncio.sleep(1.0)
                if reconcile is not None and time.monotonic() - last >= reconcile_every:
                    last = time.monotonic()
                    try:
                        await reconcile(self, queue)
                    except Exception:  # keep working; the next round retries
                        log.exception("reconciling the catalogue with the queue failed")
                if not until_empty:
                    continue
                empty = await queue.count("incomplete") == 0 and (
                    unfinished is None or await unfinished() == 0
                )
                if not empty:
                    empty_since = None
                elif empty_since is None:
                    empty_since = time.monotonic()
                elif time.monotonic() - empty_since >= EMPTY_FOR:
                    worker.event.set()  # start() waits on this event, then stops cleanly
                    return

        if reconcile is not None:
            await reconcile(self, queue)  # before the first job: re-enqueue what a dead worker left
        task = asyncio.create_task(housekeeping())
        try:
            await worker.start()
        finally:
            task.cancel()
            await queue.disconnect()
