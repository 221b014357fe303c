"""How far indexing has got, overall (:func:`summary`, also on the home page and an empty search)
and per paper (:func:`status_of`): the documents ``/api/ingest/status`` answers. The catalogue is the
source of truth whichever queue carries the jobs."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

from litestar.exceptions import NotFoundException
from sqlalchemy.orm import Session

from app.services import Services
from catalog import arxiv_ids
from catalog.db import as_utc
from catalog.indexing import IndexingProgress, PaperIndexStatus, failures, indexing_progress, paper_status


@dataclass
class FullTextCounts:
    queued: int
    running: int
    done: int
    failed: int


@dataclass
class PaperStatus:
    """One paper's full text: ``none`` when its PDF was never queued."""

    arxiv_id: str
    title: str
    status: Literal["queued", "running", "done", "failed", "none"]
    reason: str | None
    attempts: int
    version: int | None
    pages: int | None
    chunks: int | None
    hidden_text_passages: int
    abstract_indexed: bool
    updated_at: dt.datetime | None


@dataclass
class IndexingSummary:
    """Everything indexed so far; search already uses it."""

    papers: int
    abstracts_indexed: int
    abstracts_pending: int
    full_texts: FullTextCounts
    pdfs_pending: int
    abstracts_per_minute: float
    pdfs_per_minute: float
    phase: Literal["pdfs", "abstracts", "done"]
    eta_seconds: float | None  # of the current phase; null until it is moving
    complete: bool
    queue: Literal["embedded", "redis"]
    worker_in_app: bool
    collection: str
    recent_failures: list[PaperStatus]


def summary(db: Session, services: Services) -> IndexingSummary:
    progress: IndexingProgress = indexing_progress(db, services.store.name)
    ft = progress.full_texts
    return IndexingSummary(
        papers=progress.papers,
        abstracts_indexed=progress.abstracts_indexed,
        abstracts_pending=progress.abstracts_pending,
        full_texts=FullTextCounts(ft["queued"], ft["running"], ft["done"], ft["failed"]),
        pdfs_pending=progress.pdfs_pending,
        abstracts_per_minute=round(progress.abstracts_per_minute, 1),
        pdfs_per_minute=round(progress.pdfs_per_minute, 2),
        phase=progress.phase,  # type: ignore[arg-type]
        eta_seconds=round(progress.eta_seconds) if progress.eta_seconds is not None else None,
        complete=progress.pdfs_pending == 0 and progress.abstracts_pending == 0,
        queue="redis" if services.settings.redis.redis_url else "embedded",
        worker_in_app=services.worker is not None and services.worker.alive,
        collection=services.store.name,
        recent_failures=[_paper(s) for s in failures(db, limit=10)],
    )


def _paper(s: PaperIndexStatus) -> PaperStatus:
    return PaperStatus(
        arxiv_id=s.arxiv_id,
        title=s.title,
        status=s.status,  # type: ignore[arg-type]
        reason=s.reason,
        attempts=s.attempts,
        version=s.version,
        pages=s.pages,
        chunks=s.chunks,
        hidden_text_passages=s.hidden_text,
        abstract_indexed=s.abstract_indexed,
        updated_at=as_utc(s.updated_at),
    )


def status_of(db: Session, services: Services, raw: str) -> PaperStatus:
    try:
        canonical = arxiv_ids.canonical(raw)
    except arxiv_ids.InvalidArxivId as exc:  # an address that names no paper: 404, saying why
        raise NotFoundException(detail=str(exc)) from exc
    found = paper_status(db, [canonical], services.store.name)
    if not found:
        raise NotFoundException(detail=f"arXiv:{canonical} is not in this archive (yet).")
    return _paper(found[0])
