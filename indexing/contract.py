"""The job contract between whoever enqueues work (CLI, web app) and the worker that does it: job
kinds, payloads and the handle of a running worker. Nothing here imports the machinery; the web app
gets that through ``indexing.wiring`` in its composition root.

Jobs are idempotent (queues deliver at least once) and keyed: enqueuing a key that is already
queued or running is a no-op, so enqueuing the same work twice never runs it twice at once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

JobKind = Literal["pdf", "abstracts"]
PDF: JobKind = "pdf"
ABSTRACTS: JobKind = "abstracts"
# The embedded queue claims lower numbers first: PDFs before the abstract backfill.
PRIORITY = {PDF: 10, ABSTRACTS: 50}
SAQ_FUNCTION = "wovepaper_job"  # the one function name registered with SAQ


@dataclass(frozen=True, slots=True)
class PdfJob:
    """Ingest one paper's PDF: from a local file when ``path`` is set, else fetched from arXiv.

    ``arxiv_id`` may be None for a local file whose name carries no id: the worker reads the id
    from the PDF's arXiv stamp. ``force`` re-ingests a paper that is already done."""

    arxiv_id: str | None
    path: str | None = None
    version: int | None = None
    force: bool = False

    @property
    def key(self) -> str:
        if self.arxiv_id:
            return f"pdf:{self.arxiv_id}"
        digest = hashlib.sha1(
            (self.path or "").encode("utf-8", "surrogatepass"), usedforsecurity=False
        ).hexdigest()[:16]
        return f"pdf-file:{digest}"

    def spec(self) -> JobSpec:
        payload = {"arxiv_id": self.arxiv_id, "path": self.path, "version": self.version, "force": self.force}
        return JobSpec(PDF, self.key, payload, PRIORITY[PDF])


@dataclass(frozen=True, slots=True)
class AbstractsJob:
    """Embed the title + abstract chunk of every paper whose catalogue id falls in one bucket
    (``bucket * size`` up to the next bucket) and is not yet in ``collection`` in its current form.
    Buckets make the key deterministic, so re-enqueuing while a bucket is pending is a no-op."""

    bucket: int
    size: int
    collection: str

    @property
    def key(self) -> str:
        return f"abstracts:{self.collection}:{self.size}:{self.bucket}"

    def spec(self) -> JobSpec:
        payload = {"bucket": self.bucket, "size": self.size, "collection": self.collection}
        return JobSpec(ABSTRACTS, self.key, payload, PRIORITY[ABSTRACTS])


@dataclass(frozen=True, slots=True)
class JobSpec:
    """What a queue stores: a kind, a dedupe key, a JSON payload and a priority."""

    kind: JobKind
    key: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    priority: int = 100

    def __post_init__(self) -> None:
        # Queues store payloads as JSON in PostgreSQL, SQLite or Redis: text must be valid UTF-8
        # (a file name with undecodable bytes arrives as lone surrogates and would break them).
        try:
            json.dumps([self.key, self.payload], ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"job {self.key!r}: the payload is not JSON of valid UTF-8 text ({exc})"
            ) from exc

    def job(self) -> PdfJob | AbstractsJob:
        """The typed job; raises ``ValueError`` for a payload this version cannot read."""
        p = self.payload
        try:
            if self.kind == PDF:
                version = p.get("version")
                return PdfJob(
                    arxiv_id=p.get("arxiv_id") or None,
                    path=p.get("path") or None,
                    version=int(version) if version is not None else None,
                    force=bool(p.get("force", False)),
                )
            if self.kind == ABSTRACTS:
                return AbstractsJob(
                    bucket=int(p["bucket"]), size=int(p["size"]), collection=str(p["collection"])
                )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"job {self.key}: unreadable payload {dict(p)!r}: {exc}") from exc
        raise ValueError(f"job {self.key}: unknown kind {self.kind!r}")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "payload": dict(self.payload), "priority": self.priority}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JobSpec:
        kind = data.get("kind")
        if kind not in (PDF, ABSTRACTS):
            raise ValueError(f"unknown job kind {kind!r}")
        return cls(kind, str(data["key"]), dict(data.get("payload") or {}), int(data.get("priority", 100)))


class WorkerHandle(Protocol):
    """A running background worker; ``stop`` lets the current job finish or hands it back."""

    def stop(self, timeout: float = 30.0) -> None: ...

    @property
    def alive(self) -> bool: ...


# -- the page reader -----------------------------------------------------------------------------
# The web app shows pages of the PDFs the worker indexed; drawing them needs the PDF parser's
# sandbox, which the app reaches only through this protocol (built by ``indexing.wiring``).


@dataclass(frozen=True, slots=True)
class PageView:
    """One page of a stored PDF as the reader shows it: its size in points, its text, and the
    quote's rectangles in points from the page's top-left corner (one per line it spans)."""

    number: int
    pages: int  # in the document
    width: float
    height: float
    text: str
    rects: tuple[tuple[float, float, float, float], ...] = ()
    partial: bool = False  # the quote was not printed as given; ``rects`` mark its first/last words


class PageUnavailable(Exception):
    """The stored PDF cannot be shown (gone from disk, changed since it was indexed, or refused by
    the parser); the reader falls back to arXiv's PDF. ``reason`` is for people."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PageReader(Protocol):
    """Pages of stored PDFs, each named by its file and the SHA-256 it was indexed with (a file
    that no longer has that hash is :class:`PageUnavailable`). Safe to call from many threads."""

    zoom: float  # the PNG's scale: 1.0 is 72 dpi

    def view(self, path: str, sha256: str, number: int, quote: str) -> PageView: ...

    def image(self, path: str, sha256: str, number: int) -> bytes: ...

    def close(self) -> None: ...
