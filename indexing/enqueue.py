"""Putting work on the queue: PDFs (local files or arXiv ids) and the abstract backfill.

Enqueueing marks each known paper ``queued`` in the catalogue first (the status source of truth),
then adds the keyed job; files already indexed unchanged in the current collection are skipped, so
running the same command again does nothing new.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine, select

from catalog import arxiv_ids
from catalog.models import Paper
from indexing import status
from indexing.contract import PdfJob
from indexing.pipeline import abstract_buckets
from indexing.queue import EmbeddedQueue, SaqQueue
from settings import Settings

Queue = EmbeddedQueue | SaqQueue

# An arXiv id inside a file name: "1706.03762v7.pdf", "tejalkul__1706.03762.pdf", "hep-th_9901001.pdf".
_NEW_ID = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v(\d+))?(?![\d])")
_OLD_ID = re.compile(r"(?<![a-z-])([a-z][a-z-]*(?:\.[A-Z]{2})?)[_/]?(\d{7})(?:v(\d+))?(?!\d)")


def make_queue(settings: Settings, engine: Engine) -> Queue:
    """SAQ on Redis when ``WOVEPAPER_REDIS_URL`` is set, else the catalogue's own queue."""
    if settings.redis.redis_url:
        return SaqQueue.from_settings(settings)
    return EmbeddedQueue(engine)


def id_from_filename(path: Path) -> tuple[str | None, int | None]:
    """The arXiv id (canonical) and version a file name carries, or (None, None)."""
    stem = path.name.removesuffix(path.suffix)
    if m := _NEW_ID.search(stem):
        candidate = m[1] + (f"v{m[2]}" if m[2] else "")
    elif (m := _OLD_ID.search(stem)) and m[1].split(".")[0] in arxiv_ids.OLD_ARCHIVES:
        candidate = f"{m[1]}/{m[2]}" + (f"v{m[3]}" if m[3] else "")
    else:
        return None, None
    try:
        parsed = arxiv_ids.parse(candidate)
    except arxiv_ids.InvalidArxivId:
        return None, None
    return parsed.canonical, parsed.version


def pdf_files(paths: Iterable[Path]) -> list[Path]:
    """PDF files among ``paths``; directories are searched recursively, in name order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf")
        else:
            found.append(path)
    return found


def jobs_for_files(files: Sequence[Path], *, force: bool = False) -> tuple[list[PdfJob], list[str]]:
    """Jobs for the files, and the files refused (with why): a name that is not valid UTF-8 cannot
    be stored in the queue or the catalogue, so it is reported to be renamed, not mangled."""
    jobs, refused = [], []
    for path in files:
        resolved = str(path.resolve())
        try:
            resolved.encode("utf-8")
        except UnicodeEncodeError:
            shown = resolved.encode("utf-8", "backslashreplace").decode()
            refused.append(f"{shown}: the file name is not valid UTF-8; rename the file")
            continue
        arxiv_id, version = id_from_filename(path)
        jobs.append(PdfJob(arxiv_id, path=resolved, version=version, force=force))
    return jobs, refused


@dataclass
class EnqueueReport:
    queued: int = 0
    already_done: int = 0
    already_pending: int = 0
    unknown: list[str] = field(default_factory=list)  # jobs whose paper the PDF itself must name


def enqueue_pdfs(engine: Engine, queue: Queue, jobs: Sequence[PdfJob], *, collection: str) -> EnqueueReport:
    report, to_queue = _mark_queued(engine, jobs, collection)
    report.queued = queue.enqueue([job.spec() for job in to_queue])
    return report


async def enqueue_pdfs_async(
    engine: Engine, queue: Queue, jobs: Sequence[PdfJob], *, collection: str
) -> EnqueueReport:
    """:func:`enqueue_pdfs` for an event loop (the web app): the catalogue writes run in a thread,
    SAQ is awaited natively."""
    report, to_queue = await asyncio.to_thread(_mark_queued, engine, jobs, collection)
    report.queued = await queue.enqueue_async([job.spec() for job in to_queue])
    return report


def _mark_queued(
    engine: Engine, jobs: Sequence[PdfJob], collection: str
) -> tuple[EnqueueReport, list[PdfJob]]:
    """Mark the known papers queued in the catalogue (the status source of truth) and return the
    jobs to put on the queue."""
    report = EnqueueReport()
    ids = sorted({job.arxiv_id for job in jobs if job.arxiv_id})
    with engine.connect() as conn:
        papers: dict[str, int] = {}
        for start in range(0, len(ids), 500):
            found = conn.execute(
                select(Paper.arxiv_id, Paper.id).where(Paper.arxiv_id.in_(ids[start : start + 500]))
            ).all()
            papers.update(dict(found))
    held = status.indexed_many(engine, list(papers.values()))
    to_queue: list[PdfJob] = []
    rows: list[status.Queued] = []
    for job in jobs:
        pid = papers.get(job.arxiv_id or "")
        if pid is None:
            report.unknown.append(job.path or job.arxiv_id or "?")
            to_queue.append(job)
            continue
        current = held.get(pid)
        if current and not job.force:
            if current.status in ("queued", "running"):
                report.already_pending += 1
                to_queue.append(job)  # keyed: a no-op when the queue still has it
                continue
            if (
                current.status == "done"
                and current.collection == collection
                and _same_file(job, current.sha256)
            ):
                report.already_done += 1
                continue
        rows.append(status.Queued(pid, job.path, job.version))
        to_queue.append(job)
    if rows:
        status.mark_queued(engine, rows)
    return report, to_queue


def _same_file(job: PdfJob, sha256: str | None) -> bool:
    """True when the job would index what is already indexed: the same local file bytes, or (for
    an arXiv download, whose bytes we cannot know beforehand) any done version of the paper."""
    if not job.path:
        return job.version is None
    try:
        digest = hashlib.sha256(Path(job.path).read_bytes()).hexdigest()
    except OSError:
        return False  # let the job fail with the reason
    return digest == sha256


def enqueue_abstracts(settings: Settings, engine: Engine, queue: Queue, collection: str) -> int:
    """Queue every bucket of papers whose title + abstract chunk is missing or stale; returns the
    number of jobs added (buckets already queued are left alone)."""
    jobs = abstract_buckets(engine, collection, settings.worker.worker_abstract_batch)
    return queue.enqueue([job.spec() for job in jobs])
