"""One job, run to an outcome: the per-paper status bookkeeping shared by both worker loops.

Failures: a bad PDF, a refused URL or an unidentifiable paper fail at once with the reason; anything
else (Chroma or the embedding endpoint down, a network error) is retried with exponential backoff and
failed with its last reason after ``worker_max_attempts``. arXiv out of reach (or answering 429) is
retried the same way, but never sooner than its ``Retry-After``; meanwhile the paper reads queued,
with the reason and when it is tried again.

While a PDF job runs, the paper's status row says what it is doing (fetching, parsing, indexing),
for a person waiting for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import Engine

from indexing import status
from indexing.contract import AbstractsJob, JobSpec, PdfJob
from indexing.pipeline import (
    FetchDeferred,
    Interrupted,
    PaperRow,
    PermanentFailure,
    Pipeline,
    load_papers,
)
from retrieval.store import StoreError
from settings import Settings

log = logging.getLogger(__name__)


class RetryLater(Exception):
    """This attempt failed for a reason that may pass; the queue should run the job again later.
    ``exact``: not sooner than ``delay`` (the server said how long to wait), whatever the queue's
    own backoff would do."""

    def __init__(self, reason: str, delay: float, *, exact: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay
        self.exact = exact


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
        :class:`~indexing.pipeline.Interrupted` (when ``should_stop`` turns true). One job at a
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
            if job.path is None:
                self._stage(paper, run_id, "fetching")
            data, source = self.pipeline.read_source(job)
            self._stage(paper, run_id, "parsing")
            parsed = self.pipeline.parse(data, fetched=job.path is None)
            if job.path is None:  # fetched: kept, so our page reader can draw it
                source = self.pipeline.keep(data, parsed.sha256)
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
            self._stage(paper, run_id, "indexing")
            result = self.pipeline.index_pdf(job, data, source, parsed, paper)
        except Interrupted:
            if paper is not None:
                status.release(self.engine, paper.id, run_id)
            raise
        except PermanentFailure as exc:
            return self._fail(paper, run_id, exc.reason)
        except FetchDeferred as exc:
            return self._defer(paper, run_id, attempt, exc)
        except Exception as exc:  # anything else may be transient: retry with backoff
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
        finished = status.finish_done(self.engine, paper.id, run_id, result, self.pipeline.store.name)
        if not finished:
            log.warning("%s: another run finished it first; this run's result is discarded", paper.arxiv_id)
            return Outcome("skipped", "finished by another run")
        return Outcome("done", f"{paper.arxiv_id}: {result.pages} pages, {result.chunks} chunks")

    def _stage(self, paper: PaperRow | None, run_id: str, stage: str) -> None:
        if paper is not None:
            status.set_stage(self.engine, paper.id, run_id, stage)

    def _defer(self, paper: PaperRow | None, run_id: str, attempt: int, exc: FetchDeferred) -> Outcome:
        """arXiv out of reach: fail after the last attempt, else retry after the backoff or the
        server's ``Retry-After``, whichever is longer (the paper stays queued, saying why)."""
        if attempt >= self.max_attempts:
            tries = f"; gave up after {attempt} attempts" if attempt > 1 else ""
            return self._fail(paper, run_id, exc.reason + tries)
        delay = max(backoff(self.settings, attempt), exc.retry_after or 0.0)
        log.warning(
            "%s: attempt %d: %s; retrying in %.0f s",
            paper.arxiv_id if paper else "PDF",
            attempt,
            exc.reason,
            delay,
        )
        if paper is not None:
            status.requeue(
                self.engine, paper.id, run_id, f"{exc.reason}; trying again in about {delay:.0f} s"
            )
        raise RetryLater(exc.reason, delay, exact=exc.retry_after is not None) from exc

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
