"""Read-side queries about indexing: per-paper full-text status and overall progress.

The catalogue is the source of truth for status whichever queue carries the jobs: ``full_texts``
holds one row per paper whose PDF was ever queued (queued / running / done / failed + reason and
attempts), ``abstract_index`` one row per paper whose title + abstract chunk is in a collection.
The CLI (``python -m indexing status``), ``/api/ingest/status`` and the home page read these.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Row, Select, func, select
from sqlalchemy.orm import Session

from catalog.db import as_utc
from catalog.models import AbstractIndex, FullText, Paper

STATUSES = ("queued", "running", "done", "failed")
RATE_WINDOW = dt.timedelta(minutes=2)  # recent throughput, for the ETA
MIN_RATE_SPAN = dt.timedelta(seconds=20)  # no rate from a burst shorter than this


@dataclass(frozen=True, slots=True)
class PaperIndexStatus:
    arxiv_id: str
    title: str
    status: str  # queued | running | done | failed | none (never queued)
    reason: str | None = None
    attempts: int = 0
    version: int | None = None
    pages: int | None = None
    chunks: int | None = None
    hidden_text: int = 0  # invisible text passages found (and kept out of the chunks)
    updated_at: dt.datetime | None = None
    abstract_indexed: bool = False


@dataclass(frozen=True, slots=True)
class IndexingProgress:
    papers: int
    abstracts_indexed: int
    full_texts: dict[str, int] = field(default_factory=dict)
    abstracts_per_minute: float = 0.0
    pdfs_per_minute: float = 0.0

    @property
    def abstracts_pending(self) -> int:
        return max(0, self.papers - self.abstracts_indexed)

    @property
    def pdfs_pending(self) -> int:
        return self.full_texts.get("queued", 0) + self.full_texts.get("running", 0)

    @property
    def phase(self) -> str:
        """What the worker is on: PDFs go first, then the abstract backfill."""
        if self.pdfs_pending:
            return "pdfs"
        return "abstracts" if self.abstracts_pending else "done"

    @property
    def eta_seconds(self) -> float | None:
        """Time to finish the current phase at its recent rate; None when it is not moving yet
        (the abstracts' rate is unknown while PDFs are being indexed)."""
        if self.phase == "pdfs":
            return 60 * self.pdfs_pending / self.pdfs_per_minute if self.pdfs_per_minute else None
        if self.phase == "abstracts" and self.abstracts_per_minute:
            return 60 * self.abstracts_pending / self.abstracts_per_minute
        return None


# What a status row shows, read by both the per-paper lookup and the failure list.
_STATUS_COLUMNS = (
    Paper.arxiv_id,
    Paper.title,
    FullText.status,
    FullText.reason,
    FullText.attempts,
    FullText.version,
    FullText.pages,
    FullText.chunk_count,
    FullText.hidden_text,
    FullText.updated_at,
)


def paper_status(session: Session, arxiv_ids: list[str], collection: str) -> list[PaperIndexStatus]:
    """Status of each requested paper that is in the catalogue, in the order asked."""
    rows = session.execute(
        select(*_STATUS_COLUMNS, AbstractIndex.chunk_id)
        .outerjoin(FullText, FullText.paper_id == Paper.id)
        .outerjoin(
            AbstractIndex, (AbstractIndex.paper_id == Paper.id) & (AbstractIndex.collection == collection)
        )
        .where(Paper.arxiv_id.in_(arxiv_ids))
    ).all()
    found = {r.arxiv_id: _status(r, abstract_indexed=r.chunk_id is not None) for r in rows}
    return [found[i] for i in arxiv_ids if i in found]


def failures(session: Session, limit: int = 20) -> list[PaperIndexStatus]:
    rows = session.execute(
        select(*_STATUS_COLUMNS)
        .join(FullText, FullText.paper_id == Paper.id)
        .where(FullText.status == "failed")
        .order_by(FullText.updated_at.desc())
        .limit(limit)
    ).all()
    return [_status(r, abstract_indexed=False) for r in rows]


def indexing_progress(
    session: Session, collection: str, *, now: dt.datetime | None = None
) -> IndexingProgress:
    now = now or dt.datetime.now(dt.UTC)
    since = now - RATE_WINDOW
    papers = session.execute(select(func.count()).select_from(Paper)).scalar_one()
    indexed = session.execute(
        select(func.count()).select_from(AbstractIndex).where(AbstractIndex.collection == collection)
    ).scalar_one()
    counts = dict.fromkeys(STATUSES, 0)
    counts.update(
        dict(session.execute(select(FullText.status, func.count()).group_by(FullText.status)).all())
    )
    recent_abstracts, first_abstract = session.execute(
        select(func.count(), func.min(AbstractIndex.indexed_at)).where(
            AbstractIndex.collection == collection, AbstractIndex.indexed_at >= since
        )
    ).one()
    recent_pdfs, first_pdf = session.execute(
        select(func.count(), func.min(FullText.updated_at)).where(
            FullText.status.in_(("done", "failed")), FullText.updated_at >= since
        )
    ).one()
    return IndexingProgress(
        papers=papers,
        abstracts_indexed=indexed,
        full_texts=counts,
        abstracts_per_minute=_per_minute(recent_abstracts, first_abstract, now),
        pdfs_per_minute=_per_minute(recent_pdfs, first_pdf, now),
    )


def _status(row: Row[Any] | Any, *, abstract_indexed: bool) -> PaperIndexStatus:
    return PaperIndexStatus(
        arxiv_id=row.arxiv_id,
        title=row.title,
        status=row.status or "none",
        reason=row.reason,
        attempts=row.attempts or 0,
        version=row.version,
        pages=row.pages,
        chunks=row.chunk_count,
        hidden_text=len(row.hidden_text or []),
        updated_at=as_utc(row.updated_at),
        abstract_indexed=abstract_indexed,
    )


def _per_minute(count: int, first: dt.datetime | None, now: dt.datetime) -> float:
    """Events per minute over the window, or over the time since the first of them when work began
    inside the window (dividing a fresh start by the whole window made the first ETAs far too long)."""
    if not count or first is None:
        return 0.0
    elapsed = min(RATE_WINDOW, max(now - as_utc(first), MIN_RATE_SPAN))
    return count / (elapsed.total_seconds() / 60)


def _with_full_text(arxiv_id: str, *columns: Any) -> Select[Any]:
    """``columns`` of one paper (by canonical id) and of its full text (None: it has none)."""
    return (
        select(*columns).outerjoin(FullText, FullText.paper_id == Paper.id).where(Paper.arxiv_id == arxiv_id)
    )


@dataclass(frozen=True, slots=True)
class PaperPdf:
    """A paper and the PDF its full text was indexed from (the page reader's source)."""

    arxiv_id: str
    title: str
    abs_url: str
    pdf_url: str
    status: str | None  # the full text's status; None: never queued
    source_path: str | None  # a local file (a fetched PDF is kept under the data dir), or a URL
    sha256: str | None
    pages: int | None

    @property
    def stored_path(self) -> str | None:
        """The local file the indexed full text came from; None when there is none on disk
        (never indexed, not finished, or fetched by an earlier version that did not keep it)."""
        path = self.source_path
        if self.status != "done" or not path or not self.sha256 or not self.pages:
            return None
        return None if path.startswith(("http://", "https://")) else path


def paper_pdf(session: Session, arxiv_id: str) -> PaperPdf | None:
    """The paper (by canonical arXiv id) with its indexed PDF's file, hash and page count; None
    when the paper is not in the catalogue."""
    row = session.execute(
        _with_full_text(
            arxiv_id,
            Paper.arxiv_id,
            Paper.title,
            Paper.abs_url,
            Paper.pdf_url,
            FullText.status,
            FullText.source_path,
            FullText.sha256,
            FullText.pages,
        )
    ).first()
    return PaperPdf(*row) if row is not None else None


@dataclass(frozen=True, slots=True)
class FullTextRow:
    """One paper's full text as a person waiting for it sees it (``status`` none: never queued)."""

    paper_id: int
    arxiv_id: str
    title: str
    status: str  # none | queued | running | done | failed
    stage: str | None  # while running: fetching | parsing | indexing
    reason: str | None
    pages: int | None
    chunks: int | None
    updated_at: dt.datetime | None
    ahead: int = 0  # while queued: papers queued before it, plus those running


def full_text_row(session: Session, arxiv_id: str) -> FullTextRow | None:
    """The full-text state of one catalogue paper (by canonical id); None when it is not there."""
    row = session.execute(
        _with_full_text(
            arxiv_id,
            Paper.id,
            Paper.arxiv_id,
            Paper.title,
            FullText.status,
            FullText.stage,
            FullText.reason,
            FullText.pages,
            FullText.chunk_count,
            FullText.updated_at,
        )
    ).one_or_none()
    if row is None:
        return None
    ahead = 0
    if row.status == "queued":
        # Jobs of one kind are claimed oldest first; a row's updated_at is when it was (re)queued.
        ahead = session.execute(
            select(func.count())
            .select_from(FullText)
            .where(
                (FullText.status == "running")
                | ((FullText.status == "queued") & (FullText.updated_at < row.updated_at))
            )
        ).scalar_one()
    return FullTextRow(
        paper_id=row.id,
        arxiv_id=row.arxiv_id,
        title=row.title,
        status=row.status or "none",
        stage=row.stage,
        reason=row.reason,
        pages=row.pages,
        chunks=row.chunk_count,
        updated_at=as_utc(row.updated_at),
        ahead=ahead,
    )
