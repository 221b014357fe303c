"""Per-paper full-text status in the catalogue (``full_texts``): the source of truth for
queued / running / done / failed whichever queue carries the jobs.

Transitions (every one a short write transaction):

- ``mark_queued``: enqueue resets the row to queued with no attempts;
- ``begin``: a worker takes it (queued or running → running, attempts + 1, ``run_id`` = this run);
  a row already done or failed means the job is a redelivery of finished work: nothing to do;
- ``finish_done`` / ``finish_failed``: only the run that holds the row may finish it, and only from
  running, so a paper is finished exactly once per enqueue (``completions`` counts finishes);
- ``requeue``: a retry will follow (the reason says why the attempt failed);
- ``release``: the worker is stopping; the attempt does not count;
- ``set_stage``: while running, what the run is doing (fetching, parsing, indexing), for a person
  waiting for the paper; cleared by every other transition.

Attempts are counted here, not by the queue, so a job whose worker keeps dying is failed after
``worker_max_attempts`` even when the queue itself loses count (a Redis restart, SAQ's sweep).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Engine, select, update
from sqlalchemy.exc import IntegrityError

from catalog.db import as_utc, transaction
from catalog.models import FullText, Paper
from catalog.text import scrub

if TYPE_CHECKING:
    from indexing.pipeline import PdfResult

REASON_LIMIT = 2000


def _write(engine: Engine):  # type: ignore[no-untyped-def]
    return transaction(engine)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def clean_reason(reason: str) -> str:
    text = scrub(reason).strip() or "unknown error"
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"


@dataclass(frozen=True, slots=True)
class Queued:
    paper_id: int
    source_path: str | None  # a local file; None: fetched from arXiv
    version: int | None  # the version asked for, if any


def mark_queued(engine: Engine, items: Sequence[Queued]) -> None:
    ids = [item.paper_id for item in items]
    with _write(engine) as session:
        existing = set(session.scalars(select(FullText.paper_id).where(FullText.paper_id.in_(ids))))
        for item in items:
            values = {
                "status": "queued",
                "stage": None,
                "reason": None,
                "attempts": 0,
                "run_id": None,
                "source_path": item.source_path,
                "updated_at": _now(),
            }
            if item.paper_id in existing:
                session.execute(update(FullText).where(FullText.paper_id == item.paper_id).values(**values))
            else:
                session.add(FullText(paper_id=item.paper_id, version=item.version, hidden_text=[], **values))


def begin(
    engine: Engine, paper_id: int, run_id: str, *, source: str | None, force: bool = False
) -> int | None:
    """Take the paper for this run; the attempt number, or None when it is already finished."""
    allowed = ("queued", "running", "done", "failed") if force else ("queued", "running")
    for _ in range(2):
        try:
            with _write(engine) as session:
                row = session.execute(
                    select(FullText.status, FullText.attempts).where(FullText.paper_id == paper_id)
                ).one_or_none()
                if row is None:
                    session.add(
                        FullText(
                            paper_id=paper_id,
                            status="running",
                            attempts=1,
                            run_id=run_id,
                            source_path=source,
                            hidden_text=[],
                            updated_at=_now(),
                        )
                    )
                    return 1
                if row.status not in allowed:
                    return None
                attempts = (row.attempts or 0) + 1 if row.status in ("queued", "running") else 1
                session.execute(
                    update(FullText)
                    .where(FullText.paper_id == paper_id)
                    .values(status="running", stage=None, attempts=attempts, run_id=run_id, updated_at=_now())
                )
                return attempts
        except IntegrityError:  # another worker inserted the row first: read it again
            continue
    return None


def finish_done(engine: Engine, paper_id: int, run_id: str, result: PdfResult, collection: str) -> bool:
    """Done: record what indexing ``result`` made of the PDF in ``collection``."""
    return _finish(
        engine,
        paper_id,
        run_id,
        status="done",
        reason=clean_reason(result.note) if result.note else None,
        version=result.version,
        sha256=result.sha256,
        pages=result.pages,
        chunk_count=result.chunks,
        parser=result.parser,
        collection=collection,
        hidden_text=[scrub(t) for t in result.hidden_text],
        source_path=result.source,
    )


def finish_unchanged(engine: Engine, paper_id: int, run_id: str, note: str) -> bool:
    """Done without new work (an older version, the same file): keep what the row records."""
    return _finish(engine, paper_id, run_id, status="done", reason=clean_reason(note))


def finish_failed(engine: Engine, paper_id: int, run_id: str, reason: str) -> bool:
    return _finish(engine, paper_id, run_id, status="failed", reason=clean_reason(reason))


def _finish(engine: Engine, paper_id: int, run_id: str, **values: object) -> bool:
    return _held_update(engine, paper_id, run_id, completions=FullText.completions + 1, stage=None, **values)


def _held_update(engine: Engine, paper_id: int, run_id: str, /, **values: object) -> bool:
    """Write ``values`` to the paper's row only while this run holds it (running, under ``run_id``);
    False when it does not (any more)."""
    with _write(engine) as session:
        result = session.execute(
            update(FullText)
            .where(FullText.paper_id == paper_id, FullText.run_id == run_id, FullText.status == "running")
            .values(updated_at=_now(), **values)
        )
        return bool(result.rowcount)


STAGES = ("fetching", "parsing", "indexing")


def set_stage(engine: Engine, paper_id: int, run_id: str, stage: str) -> bool:
    """Record what the run holding the paper is doing now (one of :data:`STAGES`)."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}")
    return _held_update(engine, paper_id, run_id, stage=stage)


def requeue(engine: Engine, paper_id: int, run_id: str, reason: str) -> bool:
    return _held_update(engine, paper_id, run_id, status="queued", stage=None, reason=clean_reason(reason))


def release(engine: Engine, paper_id: int, run_id: str) -> bool:
    return _held_update(
        engine, paper_id, run_id, status="queued", stage=None, attempts=FullText.attempts - 1, run_id=None
    )


@dataclass(frozen=True, slots=True)
class Unfinished:
    paper_id: int
    arxiv_id: str
    status: str
    attempts: int
    source_path: str | None
    updated_at: dt.datetime


def unfinished(engine: Engine) -> list[Unfinished]:
    """Papers queued or running (for reconciling the catalogue with a queue that may have lost jobs)."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                FullText.paper_id,
                Paper.arxiv_id,
                FullText.status,
                FullText.attempts,
                FullText.source_path,
                FullText.updated_at,
            )
            .join(Paper, Paper.id == FullText.paper_id)
            .where(FullText.status.in_(("queued", "running")))
        ).all()
    return [
        Unfinished(r.paper_id, r.arxiv_id, r.status, r.attempts, r.source_path, as_utc(r.updated_at))
        for r in rows
    ]


def fail_stale(engine: Engine, paper_id: int, reason: str) -> bool:
    """Fail an unfinished row nobody holds any more (its worker died on the last attempt)."""
    with _write(engine) as session:
        result = session.execute(
            update(FullText)
            .where(FullText.paper_id == paper_id, FullText.status.in_(("queued", "running")))
            .values(
                status="failed",
                stage=None,
                reason=clean_reason(reason),
                completions=FullText.completions + 1,
                updated_at=_now(),
            )
        )
        return bool(result.rowcount)


@dataclass(frozen=True, slots=True)
class Indexed:
    """What the last successful run of a paper recorded."""

    sha256: str | None
    collection: str | None
    version: int | None
    status: str


def indexed(engine: Engine, paper_id: int) -> Indexed | None:
    return indexed_many(engine, [paper_id]).get(paper_id)


def indexed_many(engine: Engine, paper_ids: Sequence[int]) -> dict[int, Indexed]:
    """For each paper with a status row: the file and collection its chunks came from."""
    out: dict[int, Indexed] = {}
    ids = list(paper_ids)
    with engine.connect() as conn:
        for start in range(0, len(ids), 500):
            for r in conn.execute(
                select(
                    FullText.paper_id, FullText.sha256, FullText.collection, FullText.version, FullText.status
                ).where(FullText.paper_id.in_(ids[start : start + 500]))
            ):
                out[r.paper_id] = Indexed(r.sha256, r.collection, r.version, r.status)
    return out
