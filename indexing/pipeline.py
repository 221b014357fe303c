"""One paper's full text through fetch → parse → chunk → embed → upsert, and the abstract backfill.

Everything here is idempotent: chunk ids are deterministic and the store replaces a paper's chunks
as a set, so running a step twice (a redelivered job) leaves the same state as running it once.
Per-paper status bookkeeping is the runner's (``indexing.runner``); this module does the work.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, delete, insert, select

from catalog import arxiv_ids
from catalog.db import transaction
from catalog.models import AbstractIndex, FullText, Paper, PaperCategory
from catalog.text import clean_text, scrub
from coordination.foreground import Foreground
from indexing.contract import AbstractsJob, PdfJob
from ingest.chunking import chunk_paper
from ingest.fetch import NotPdf, PdfFetcher
from ingest.http import HttpError, Refused, TooLarge
from ingest.importer import Importer
from ingest.pdf import ParsedPdf, PdfLimits, PdfRejected, parse_pdf
from ingest.records import PaperRecord, Version
from retrieval.embedder import Embedder
from retrieval.lexical import LexicalIndex
from retrieval.store import ChunkStore, MetaValue, date_key
from retrieval.types import Chunk
from settings import Settings

log = logging.getLogger(__name__)

EMBED_SLICE = 8  # texts per embed call between stop and foreground checks (well under a second)


class PermanentFailure(Exception):
    """Retrying will not help (bad input, a refused URL, a paper we cannot identify)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FetchDeferred(Exception):
    """arXiv could not be reached, or asked us to wait: the job is tried again later (the paper
    stays queued), after ``retry_after`` seconds when arXiv said how long."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


# What a person is told when a PDF fetched from arXiv fails (the technical detail follows in
# parentheses); the page, the API and the MCP tool show these sentences as they are.
UNREACHABLE = "arXiv could not be reached"
NO_PDF = "arXiv has no PDF for this paper"
NOT_A_PDF = "the file is not a PDF"
TOO_LARGE = "the PDF is too large"
UNREADABLE = "the PDF could not be read"


def fetch_failure(exc: HttpError) -> PermanentFailure | FetchDeferred:
    """A failed download as a person reads it: retried later when it may pass, else final."""
    detail = exc.reason  # the URL, what went wrong, after how many attempts
    if isinstance(exc, TooLarge):
        return PermanentFailure(f"{TOO_LARGE} ({detail})")
    if isinstance(exc, NotPdf):
        return PermanentFailure(f"{NOT_A_PDF} ({detail})")
    if isinstance(exc, Refused):
        return PermanentFailure(f"the PDF's address is not allowed ({detail})")
    if exc.retryable:
        if exc.status == 429:
            detail = f"it asked us to wait: {detail}"
        return FetchDeferred(f"{UNREACHABLE} ({detail})", exc.retry_after)
    if exc.status in (404, 410):
        return PermanentFailure(f"{NO_PDF} ({detail})")
    return PermanentFailure(f"arXiv refused the download ({detail})")


class Interrupted(Exception):
    """The worker is stopping; the job goes back to the queue without counting an attempt."""


# -- catalogue reads ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PaperRow:
    id: int
    arxiv_id: str
    title: str
    abstract: str
    latest_version: int | None
    primary_category: str | None
    categories: tuple[str, ...]
    activity_on: dt.date | None
    content_hash: str

    def fields(self) -> dict[str, MetaValue | None]:
        """Paper-level metadata copied onto every chunk, for filtering in search."""
        return {
            "primary_category": self.primary_category,
            "categories": " ".join(self.categories) or None,
            "category_list": list(self.categories) or None,
            "date": date_key(self.activity_on),
        }


def load_papers(
    engine: Engine, *, arxiv_ids_: Sequence[str] = (), id_range: tuple[int, int] | None = None
) -> list[PaperRow]:
    query = select(
        Paper.id,
        Paper.arxiv_id,
        Paper.title,
        Paper.abstract,
        Paper.latest_version,
        Paper.primary_category,
        Paper.activity_on,
        Paper.content_hash,
    ).order_by(Paper.id)
    if arxiv_ids_:
        query = query.where(Paper.arxiv_id.in_(list(arxiv_ids_)))
    if id_range:
        query = query.where(Paper.id >= id_range[0], Paper.id < id_range[1])
    with engine.connect() as conn:
        rows = conn.execute(query).all()
        categories: dict[int, list[str]] = {}
        ids = [r.id for r in rows]
        for start in range(0, len(ids), 500):
            for pid, category in conn.execute(
                select(PaperCategory.paper_id, PaperCategory.category)
                .where(PaperCategory.paper_id.in_(ids[start : start + 500]))
                .order_by(PaperCategory.paper_id, PaperCategory.position)
            ):
                categories.setdefault(pid, []).append(category)
    return [
        PaperRow(
            r.id,
            r.arxiv_id,
            r.title,
            r.abstract or "",
            r.latest_version,
            r.primary_category,
            tuple(categories.get(r.id, ())),
            r.activity_on,
            r.content_hash,
        )
        for r in rows
    ]


def abstract_hash(paper: PaperRow, version: int | None) -> str:
    return _abstract_digest(paper.content_hash, version)


def _abstract_digest(content_hash: str, version: int | None) -> str:
    """Changes exactly when the abstract chunk would change: the paper's metadata or its version."""
    return hashlib.sha1(f"{content_hash}:{version or 0}".encode(), usedforsecurity=False).hexdigest()


# -- results -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PdfResult:
    paper_id: int
    arxiv_id: str
    version: int | None
    sha256: str
    pages: int
    chunks: int
    parser: str
    hidden_text: list[str] = field(default_factory=list)
    source: str | None = None
    note: str | None = None  # set when nothing was (re)indexed, e.g. an older version


class Pipeline:
    """The work of the two job kinds. ``should_stop`` (set per job by its runner) is polled between
    steps so a stopping worker can hand its job back (:class:`Interrupted`) instead of being killed
    mid-way."""

    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        store: ChunkStore,
        embedder: Embedder,
        *,
        fetcher: PdfFetcher | None = None,
        limits: PdfLimits | None = None,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.foreground = Foreground(settings.foreground_dir)
        self.should_stop: Callable[[], bool] = lambda: False  # a job's runner sets its own
        self.store = store
        self.embedder = embedder
        self._fetcher = fetcher
        self.limits = limits or PdfLimits.from_settings(settings.parser)
        # The lexical index (BM25) follows every upsert into Chroma; it rebuilds itself in the
        # background within ``lexical_refresh_seconds`` and web processes pick the new one up.
        self.lexical = LexicalIndex.from_settings(settings)

    @property
    def fetcher(self) -> PdfFetcher:
        if self._fetcher is None:
            self._fetcher = PdfFetcher.from_settings(self.settings)
        return self._fetcher

    def close(self) -> None:
        self.lexical.close()  # builds what is still pending, so nothing is left unsearchable
        if self._fetcher is not None:
            self._fetcher.close()

    def _check_stop(self) -> None:
        if self.should_stop():
            raise Interrupted

    def pause(self) -> None:
        """Between steps: yield the cores to foreground work (the chat model reading a prompt)."""
        self.foreground.wait(self.should_stop)

    # -- PDFs ------------------------------------------------------------------------------------

    def read_source(self, job: PdfJob) -> tuple[bytes, str]:
        """The PDF's bytes and where they came from (a path or a URL)."""
        if job.path:
            path = Path(job.path)
            try:
                size = path.stat().st_size
                if size > self.limits.max_bytes:
                    raise PermanentFailure(
                        f"{path.name} is {size:,} bytes, over the {self.limits.max_bytes:,}-byte limit"
                    )
                return path.read_bytes(), str(path)
            except FileNotFoundError as exc:
                raise PermanentFailure(f"file not found: {path}") from exc
            except IsADirectoryError as exc:
                raise PermanentFailure(f"not a file: {path}") from exc
            except PermissionError as exc:
                raise PermanentFailure(f"cannot read {path}: permission denied") from exc
        if not job.arxiv_id:
            raise PermanentFailure("a PDF job needs a file or an arXiv id")
        try:
            url = self.fetcher.url(job.arxiv_id, job.version)
            return self.fetcher.get(url), url
        except arxiv_ids.InvalidArxivId as exc:
            raise PermanentFailure(str(exc)) from exc
        except HttpError as exc:
            raise fetch_failure(exc) from exc

    def keep(self, data: bytes, sha256: str) -> str:
        """A fetched PDF written under the data dir (named by its hash, written once), so the page
        reader can draw its pages: its path, which the full text records as its source."""
        folder = self.settings.fetched_pdf_dir
        path = folder / f"{sha256}.pdf"
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.part")
            partial.write_bytes(data)
            partial.replace(path)  # atomic: a reader never sees half a file
        return str(path)

    def parse(self, data: bytes, *, fetched: bool = False) -> ParsedPdf:
        """The parsed PDF; a rejection fails the job with its reason (for a PDF fetched from
        arXiv, led by a sentence a person who asked for it understands)."""
        try:
            return parse_pdf(data, self.limits)
        except PdfRejected as exc:
            if not fetched:
                raise PermanentFailure(exc.reason) from exc
            lead = TOO_LARGE if len(data) > self.limits.max_bytes else UNREADABLE
            raise PermanentFailure(f"{lead} ({exc.reason})") from exc

    def identify(self, job: PdfJob, parsed: ParsedPdf) -> PaperRow:
        """The catalogue paper this PDF is, created from the PDF's own metadata when the catalogue
        does not have it yet."""
        stamp = parsed.metadata.arxiv_id if parsed.metadata else None
        arxiv_id = job.arxiv_id
        if arxiv_id and stamp and arxiv_ids.is_valid(stamp) and arxiv_ids.canonical(stamp) != arxiv_id:
            raise PermanentFailure(
                f"the PDF's arXiv stamp says {arxiv_ids.canonical(stamp)}, not {arxiv_id}: wrong file?"
            )
        arxiv_id = arxiv_id or (arxiv_ids.canonical(stamp) if stamp and arxiv_ids.is_valid(stamp) else None)
        if not arxiv_id:
            raise PermanentFailure("neither the file name nor the PDF's arXiv stamp gives an arXiv id")
        found = load_papers(self.engine, arxiv_ids_=[arxiv_id])
        if found:
            return found[0]
        meta = parsed.metadata
        title = clean_text(meta.title or "") if meta else ""
        if not meta or not title:
            raise PermanentFailure(
                f"{arxiv_id} is not in the catalogue and the PDF's first page gives no title"
            )
        version = job.version or meta.version
        record = PaperRecord(
            arxiv_id=arxiv_id,
            title=title,
            abstract=clean_text(meta.abstract or ""),
            authors=tuple(clean_text(a) for a in meta.authors if clean_text(a)),
            categories=(meta.primary_category,) if meta.primary_category else (),
            versions=(Version(version),) if version else (),
            announced_on=meta.date,
        )
        Importer(self.engine, source="pdf").run([record])
        found = load_papers(self.engine, arxiv_ids_=[arxiv_id])
        if not found:  # pragma: no cover - the import above either wrote it or raised
            raise PermanentFailure(f"{arxiv_id}: could not add the paper to the catalogue")
        log.info("added %s to the catalogue from its PDF", arxiv_id)
        return found[0]

    def chunks_for(self, paper: PaperRow, version: int | None, parsed: ParsedPdf | None) -> list[Chunk]:
        return chunk_paper(
            arxiv_id=paper.arxiv_id,
            version=version,
            title=paper.title,
            abstract=paper.abstract,
            parsed=parsed,
            settings=self.settings.chunks,
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), EMBED_SLICE):
            self._check_stop()
            self.pause()
            vectors += self.embedder.embed(texts[start : start + EMBED_SLICE])
        return vectors

    def index_pdf(
        self, job: PdfJob, data: bytes, source: str, parsed: ParsedPdf, paper: PaperRow
    ) -> PdfResult:
        version = (
            job.version or (parsed.metadata.version if parsed.metadata else None) or paper.latest_version
        )
        chunks = self.chunks_for(paper, version, parsed)
        if not chunks:
            raise PermanentFailure("the PDF has no text to index")
        self._check_stop()
        vectors = self.embed([c.indexed_text for c in chunks])
        self._check_stop()
        removed = self.store.replace_paper(paper.arxiv_id, chunks, vectors, paper.fields())
        self.lexical.upsert_paper(paper.arxiv_id, chunks)
        self.lexical.index_catalogue_papers(self.engine, [paper.arxiv_id])
        # The PDF's chunk 0 is the paper's title + abstract chunk: record it so the abstract
        # backfill does not embed it again (or replace it with another version's).
        head = chunks[0].id if chunks[0].kind == "abstract" else ""
        self._record_abstracts([(paper, head, abstract_hash(paper, version))])
        log.info(
            "%s v%s: %d pages, %d chunks (%d stale removed) from %s",
            paper.arxiv_id,
            version or "?",
            parsed.page_count,
            len(chunks),
            removed,
            source,
        )
        return PdfResult(
            paper_id=paper.id,
            arxiv_id=paper.arxiv_id,
            version=version,
            sha256=parsed.sha256,
            pages=parsed.page_count,
            chunks=len(chunks),
            parser=f"{parsed.parser} {parsed.parser_version}",
            hidden_text=[scrub(t) for t in parsed.hidden_text],
            source=source,
        )

    # -- the abstract backfill ---------------------------------------------------------------------

    def pending_abstracts(self, papers: Sequence[PaperRow]) -> list[tuple[PaperRow, int | None]]:
        """Papers whose abstract chunk is missing from this collection or out of date, each with the
        version its chunk id uses (the indexed full text's, else the catalogue's latest)."""
        if not papers:
            return []
        ids = [p.id for p in papers]
        with self.engine.connect() as conn:
            done_versions = dict(
                conn.execute(
                    select(FullText.paper_id, FullText.version).where(
                        FullText.paper_id.in_(ids), FullText.status == "done"
                    )
                ).all()
            )
            indexed = dict(
                conn.execute(
                    select(AbstractIndex.paper_id, AbstractIndex.content_hash).where(
                        AbstractIndex.paper_id.in_(ids), AbstractIndex.collection == self.store.name
                    )
                ).all()
            )
        pending = []
        for paper in papers:
            version = done_versions.get(paper.id, paper.latest_version)
            if indexed.get(paper.id) != abstract_hash(paper, version):
                pending.append((paper, version))
        return pending

    def index_abstracts(self, job: AbstractsJob) -> int:
        """Embed the bucket's pending abstract chunks; returns how many were (re)indexed."""
        if job.collection != self.store.name:
            raise PermanentFailure(
                f"job for collection {job.collection}, but this worker writes {self.store.name} "
                "(the embedding model or chunking changed): re-enqueue the abstracts"
            )
        low = job.bucket * job.size
        papers = load_papers(self.engine, id_range=(low, low + job.size))
        pending = self.pending_abstracts(papers)
        if not pending:
            return 0
        heads = [(paper, version, self.chunks_for(paper, version, None)) for paper, version in pending]
        todo = [(paper, version, chunks[0]) for paper, version, chunks in heads if chunks]
        vectors = self.embed([chunk.indexed_text for _, _, chunk in todo])
        self._check_stop()
        if todo:
            self.store.replace_abstracts(
                [chunk for _, _, chunk in todo], vectors, [paper.fields() for paper, _, _ in todo]
            )
            self.lexical.index_catalogue_papers(self.engine, [paper.arxiv_id for paper, _, _ in todo])
        # A paper with neither title nor abstract has no chunk: recorded with an empty id, so it
        # is not pending for ever.
        self._record_abstracts(
            [
                (paper, chunks[0].id if chunks else "", abstract_hash(paper, version))
                for paper, version, chunks in heads
            ]
        )
        return len(todo)

    def _record_abstracts(self, rows: Sequence[tuple[PaperRow, str, str]]) -> None:
        ids = [paper.id for paper, _, _ in rows]
        now = dt.datetime.now(dt.UTC)
        values: list[dict[str, Any]] = [
            {
                "paper_id": p.id,
                "collection": self.store.name,
                "content_hash": h,
                "chunk_id": c,
                "indexed_at": now,
            }
            for p, c, h in rows
        ]
        with transaction(self.engine) as session:
            session.execute(
                delete(AbstractIndex).where(
                    AbstractIndex.paper_id.in_(ids), AbstractIndex.collection == self.store.name
                )
            )
            session.execute(insert(AbstractIndex), values)


def abstract_buckets(engine: Engine, store_name: str, size: int) -> list[AbstractsJob]:
    """One job per bucket of catalogue ids that holds at least one paper whose abstract chunk is
    missing or stale in ``store_name`` (the cheap check: no row for this collection, or a row built
    from other metadata; the job itself re-checks everything)."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                Paper.id,
                Paper.content_hash,
                Paper.latest_version,
                AbstractIndex.content_hash,
                FullText.version,
                FullText.status,
            )
            .outerjoin(
                AbstractIndex,
                (AbstractIndex.paper_id == Paper.id) & (AbstractIndex.collection == store_name),
            )
            .outerjoin(FullText, FullText.paper_id == Paper.id)
        ).all()
    buckets: set[int] = set()
    for pid, content_hash, latest, indexed_hash, ft_version, ft_status in rows:
        version = ft_version if ft_status == "done" else latest
        if indexed_hash != _abstract_digest(content_hash, version):
            buckets.add(pid // size)
    return [AbstractsJob(bucket=b, size=size, collection=store_name) for b in sorted(buckets)]
