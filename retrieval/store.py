"""The vector store: chunks and their embeddings in Chroma (the only module that imports chromadb).

Two ways to reach Chroma, one interface (:class:`ChunkStore`):

- **embedded** (default): a ``PersistentClient`` on a local directory. A Chroma directory must have
  ONE writing process (several corrupt it), so the path is guarded by an ``flock`` lock file: a
  second process is refused with a message naming the holder. The kernel drops the lock when its
  holder dies, so a stale lock file left by a killed process never blocks a restart.
- **follower** (the search processes beside an embedded writer): the same directory opened to read
  only. Another process's client loads the vector index once and does not see vectors added after
  it opened (measured with chromadb 1.5.9; ``get`` and ``count`` do, ``query`` does not), so the
  writer rewrites a generation file after every write and a follower, at most every
  ``poll_seconds``, compares it with the one it opened at and re-opens its client when it changed.
- **server**: an ``HttpClient`` to a ``chroma run`` server, shared by any number of workers and web
  processes.

The collection name is derived from what built the vectors (embedding model, chunking settings,
parser version): changing any of them builds a new index instead of mixing incompatible vectors.
Writes are ``upsert`` with deterministic chunk ids, so a job that runs twice (at-least-once delivery)
changes nothing; replacing a paper deletes its chunks that are not in the new set (no orphans).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import chromadb
import httpx
import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings as ChromaClientSettings
from chromadb.errors import ChromaError

from catalog.text import scrub
from retrieval.types import Chunk

log = logging.getLogger(__name__)

Scalar = str | int | float | bool
MetaValue = Scalar | list[str]  # lists (e.g. categories) are filterable with ``$contains``
# Chroma caps the records per call (max_batch_size, about 5k on SQLite); stay well below it.
WRITE_BATCH = 1000
LOCK_FILE = ".wovepaper-writer.lock"
GENERATION_FILE = ".wovepaper-generation"  # rewritten after every write; followers re-open on a change


# What a Chroma call raises when the store is broken or away: its own errors, bad input it refuses,
# a failing disk, and (HttpClient) the server being unreachable.
CHROMA_ERRORS: tuple[type[Exception], ...] = (ChromaError, ValueError, OSError, httpx.HTTPError)


class StoreError(RuntimeError):
    """Chroma is unreachable or refused an operation; the message says which and where."""


class StoreLocked(StoreError):
    """Another process writes this embedded Chroma directory."""


def collection_name(*, embedder: str, chunking: Mapping[str, object], parser_version: str) -> str:
    """``chunks-<16 hex>``: a hash of everything that shapes the vectors and the chunks."""
    payload = json.dumps(
        {"embedder": embedder, "chunking": dict(chunking), "parser": parser_version}, sort_keys=True
    )
    return "chunks-" + hashlib.sha256(payload.encode()).hexdigest()[:16]


def date_key(day: dt.date | None) -> int | None:
    """Dates are stored as ``YYYYMMDD`` integers so Chroma can filter ranges with ``$gte``/``$lte``."""
    return day.year * 10_000 + day.month * 100 + day.day if day else None


def chunk_metadata(chunk: Chunk, paper: Mapping[str, MetaValue | None]) -> dict[str, MetaValue]:
    """Provenance of a chunk plus the paper fields search filters on. Chroma has no null: absent
    values are left out (a filter on them simply does not match)."""
    fields: dict[str, MetaValue | None] = {
        "arxiv_id": chunk.arxiv_id,
        "version": chunk.version or 0,
        "n": chunk.n,
        "kind": chunk.kind,
        "page_start": chunk.page_start,
        "page_end": chunk.page_end,
        "section": chunk.section,
        "parser": chunk.parser,
        "parser_version": chunk.parser_version,
        **paper,
    }
    return {key: _safe(value) for key, value in fields.items() if value is not None and value != ""}


def _safe(value: MetaValue) -> MetaValue:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub(v) if isinstance(v, str) else v for v in value]
    return value


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: str
    text: str
    metadata: dict[str, Scalar]


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    distance: float  # cosine distance: 0 identical, 2 opposite
    text: str
    metadata: dict[str, Scalar]


class WriterLock:
    """An exclusive ``flock`` on ``<path>/.wovepaper-writer.lock``, held for the store's lifetime.

    The file records who holds it (pid, host, command, since) so a refused process can say who to
    stop. ``flock`` (not ``fcntl.lockf``) so that closing another descriptor of the same file in
    this process does not silently release it."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._read_holder(fd)
            os.close(fd)
            raise StoreLocked(
                f"the embedded Chroma at {self.path.parent} is already open for writing by {holder}; "
                "only one process may write it. Stop that process, let it do the work (a running web "
                "app indexes in the background), or run a Chroma server (WOVEPAPER_CHROMA_HOST)."
            ) from None
        me = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": " ".join(sys.argv)[:300],
            "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        self._fd = fd

    @staticmethod
    def _read_holder(fd: int) -> str:
        try:
            info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        except (OSError, ValueError):
            return "another process"
        if not info:
            return "another process"
        pid, host, command, since = (info.get(k) for k in ("pid", "host", "command", "since"))
        return f"process {pid} on {host} ({command}, since {since})"

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


class ChunkStore:
    """Chunks of one collection. Thread-safe: the client is built once, on first use (a follower's
    again whenever the writer's generation changed)."""

    def __init__(
        self,
        *,
        name: str,
        dim: int,
        path: Path | None = None,
        host: str = "",
        port: int = 8000,
        lock: bool = True,
        follow_seconds: float | None = None,
    ) -> None:
        if not path and not host:
            raise ValueError("a ChunkStore needs an embedded path or a server host")
        self.name = name
        self.dim = dim
        self.path = path
        self.host = host
        self.port = port
        embedded = path is not None and not host
        self._lock = WriterLock(path) if path and not host and lock and follow_seconds is None else None
        self._client: ClientAPI | None = None
        self._collection: Collection | None = None
        self._guard = threading.Lock()
        # A follower: the generation its client was opened at, how often it looks, when it looks next.
        self._follow = follow_seconds if embedded else None
        self._generation: str | None = None
        self._next_look = 0.0
        if self._lock:
            self._lock.acquire()  # refuse early, before anything else is opened

    @classmethod
    def embedded(cls, path: Path, *, name: str, dim: int) -> ChunkStore:
        return cls(name=name, dim=dim, path=path)

    @classmethod
    def follower(cls, path: Path, *, name: str, dim: int, poll_seconds: float) -> ChunkStore:
        """Reads an embedded Chroma that another process writes, seeing its writes within
        ``poll_seconds`` (plus the time to re-open). Never writes; takes no lock. Meant for a
        process with no other client of ``path`` (chromadb shares one per path and process)."""
        return cls(name=name, dim=dim, path=path, follow_seconds=poll_seconds)

    @classmethod
    def server(cls, host: str, port: int, *, name: str, dim: int) -> ChunkStore:
        return cls(name=name, dim=dim, host=host, port=port)

    @property
    def where(self) -> str:
        return f"chroma server {self.host}:{self.port}" if self.host else f"embedded chroma {self.path}"

    # -- connection ------------------------------------------------------------------------------

    @property
    def client(self) -> ClientAPI:
        with self._guard:
            if self._client is None:
                settings = ChromaClientSettings(anonymized_telemetry=False)
                try:
                    if self.host:
                        self._client = chromadb.HttpClient(host=self.host, port=self.port, settings=settings)
                    else:
                        assert self.path is not None
                        self._client = chromadb.PersistentClient(path=str(self.path), settings=settings)
                except CHROMA_ERRORS as exc:
                    raise StoreError(f"cannot open the {self.where}: {exc}") from exc
            return self._client

    @property
    def collection(self) -> Collection:
        """The chromadb collection (cosine space), created on first use. Retrieval code that wants
        the raw collection (e.g. llama-index's ``ChromaVectorStore``) takes it from here: a
        follower's is a new object after each re-open."""
        if self._follow is not None:
            self._catch_up()
        if self._collection is None:
            client = self.client
            with self._guard:
                if self._collection is None:
                    try:
                        self._collection = client.get_or_create_collection(
                            self.name,
                            configuration={"hnsw": {"space": "cosine"}},
                            metadata={"dim": self.dim},
                            embedding_function=None,
                        )
                    except CHROMA_ERRORS as exc:
                        raise StoreError(
                            f"cannot open collection {self.name} in the {self.where}: {exc}"
                        ) from exc
        return self._collection

    def ping(self) -> None:
        try:
            self.client.heartbeat()
        except CHROMA_ERRORS as exc:
            raise StoreError(f"the {self.where} does not answer: {exc}") from exc

    def close(self) -> None:
        with self._guard:
            self._close_client()
            if self._lock:
                self._lock.release()

    def _close_client(self) -> None:
        if self._client is not None:
            try:
                cast(Any, self._client).close()  # Client has close(); the ClientAPI protocol does not
            except (ChromaError, OSError, RuntimeError) as exc:  # closing must not mask shutdown
                log.warning("closing the %s failed: %s", self.where, exc)
            self._client = None
            self._collection = None

    # -- following another process's writes ----------------------------------------------------

    def _generation_file(self) -> Path:
        assert self.path is not None
        return self.path / GENERATION_FILE

    def _read_generation(self) -> str:
        try:
            return self._generation_file().read_text()
        except FileNotFoundError:
            return ""

    def _bump_generation(self) -> None:
        """The writer: a new generation after a write (written whole, then renamed into place)."""
        if self._lock is None:
            return
        target = self._generation_file()
        part = target.with_name(f"{GENERATION_FILE}.{os.getpid()}.{threading.get_ident()}")
        part.write_text(f"{time.time_ns()} {os.getpid()}")
        part.replace(target)

    def _catch_up(self) -> None:
        """A follower: re-open when the writer's generation differs from the one the client was
        opened at. The generation is read before opening, so a write after it is seen next time."""
        assert self._follow is not None
        now = time.monotonic()
        if now < self._next_look:
            return
        self._next_look = now + self._follow
        current = self._read_generation()
        with self._guard:
            if current != self._generation:
                # close() drops chromadb's shared system for the path, so the next client loads the
                # vector index as it is on disk now; a new client of the same open path would not.
                self._close_client()
                self._generation = current

    # -- writes ----------------------------------------------------------------------------------

    def replace_paper(
        self,
        arxiv_id: str,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]],
        paper: Mapping[str, MetaValue | None],
    ) -> int:
        """Make ``chunks`` the paper's only chunks: upsert them, then delete every other chunk of the
        paper (older versions, a longer previous chunking). Idempotent; returns chunks deleted."""
        if any(c.arxiv_id != arxiv_id for c in chunks):
            raise ValueError(f"replace_paper({arxiv_id!r}) was given chunks of another paper")
        self._upsert(chunks, vectors, [paper] * len(chunks))
        keep = {c.id for c in chunks}
        stale = [i for i in self.ids(where={"arxiv_id": arxiv_id}) if i not in keep]
        self._delete(stale)
        return len(stale)

    def replace_abstracts(
        self,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]],
        papers: Sequence[Mapping[str, MetaValue | None]],
    ) -> int:
        """Upsert one title + abstract chunk per paper and delete the papers' other abstract chunks
        (an older version's). Body chunks are left alone. Returns chunks deleted."""
        self._upsert(chunks, vectors, papers)
        keep = {c.id for c in chunks}
        ids = sorted({c.arxiv_id for c in chunks})
        stale: list[str] = []
        for start in range(0, len(ids), WRITE_BATCH):
            where: dict[str, Any] = {
                "$and": [{"arxiv_id": {"$in": ids[start : start + WRITE_BATCH]}}, {"kind": "abstract"}]
            }
            stale += [i for i in self.ids(where=where) if i not in keep]
        self._delete(stale)
        return len(stale)

    def delete_paper(
        self, arxiv_id: str, *, kind: str | None = None, except_version: int | None = None
    ) -> int:
        """Delete a paper's chunks (only of ``kind``; keeping those of ``except_version``)."""
        clauses: list[dict[str, Any]] = [{"arxiv_id": arxiv_id}]
        if kind:
            clauses.append({"kind": kind})
        if except_version is not None:
            clauses.append({"version": {"$ne": except_version}})
        ids = self.ids(where=clauses[0] if len(clauses) == 1 else {"$and": clauses})
        self._delete(ids)
        return len(ids)

    def _upsert(
        self,
        chunks: Sequence[Chunk],
        vectors: Sequence[Sequence[float]],
        papers: Sequence[Mapping[str, MetaValue | None]],
    ) -> None:
        self._writable()
        if not (len(chunks) == len(vectors) == len(papers)):
            raise ValueError("chunks, vectors and paper metadata must have the same length")
        for vector in vectors:
            if len(vector) != self.dim:
                raise ValueError(f"a {len(vector)}-d vector for a {self.dim}-d collection {self.name}")
        for start in range(0, len(chunks), WRITE_BATCH):
            part = slice(start, start + WRITE_BATCH)
            batch = chunks[part]
            try:
                self.collection.upsert(
                    ids=[c.id for c in batch],
                    embeddings=np.asarray(vectors[part], dtype=np.float32),
                    documents=[scrub(c.text) for c in batch],  # no NUL or lone surrogate, ever
                    metadatas=[chunk_metadata(c, p) for c, p in zip(batch, papers[part], strict=True)],  # type: ignore[misc]
                )
            except CHROMA_ERRORS as exc:
                raise StoreError(f"upsert of {len(batch)} chunks into {self.where} failed: {exc}") from exc
            finally:
                self._bump_generation()  # even a failed batch may have written part of itself

    def _delete(self, ids: Sequence[str]) -> None:
        self._writable()
        for start in range(0, len(ids), WRITE_BATCH):
            try:
                self.collection.delete(ids=list(ids[start : start + WRITE_BATCH]))
            except CHROMA_ERRORS as exc:
                raise StoreError(f"deleting chunks in the {self.where} failed: {exc}") from exc
            finally:
                self._bump_generation()

    def _writable(self) -> None:
        if self._follow is not None:
            raise StoreError(f"a follower of the {self.where} only reads; its writer process writes")

    # -- reads -----------------------------------------------------------------------------------

    def count(self) -> int:
        return self.collection.count()

    def ids(self, *, where: Mapping[str, Any] | None = None) -> list[str]:
        try:
            result = self.collection.get(where=cast(Any, where) if where else None, include=[])
        except CHROMA_ERRORS as exc:
            raise StoreError(f"reading ids from {self.where} failed: {exc}") from exc
        return list(result["ids"])

    def get(
        self, ids: Iterable[str] | None = None, *, where: Mapping[str, Any] | None = None
    ) -> list[StoredChunk]:
        try:
            result = self.collection.get(
                ids=list(ids) if ids is not None else None,
                where=cast(Any, where) if where else None,
                include=["documents", "metadatas"],
            )
        except CHROMA_ERRORS as exc:
            raise StoreError(f"reading chunks from {self.where} failed: {exc}") from exc
        documents = result["documents"] or []
        metadatas = result["metadatas"] or []
        return [
            StoredChunk(i, d or "", dict(m or {}))  # type: ignore[arg-type]
            for i, d, m in zip(result["ids"], documents, metadatas, strict=True)
        ]

    def query(
        self, vector: Sequence[float], *, k: int = 10, where: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        """Nearest chunks to one query vector (raw Chroma; hybrid search lives in ``retrieval.search``)."""
        try:
            result = self.collection.query(
                query_embeddings=np.asarray([vector], dtype=np.float32),
                n_results=k,
                where=cast(Any, where) if where else None,
                include=["documents", "metadatas", "distances"],
            )
        except CHROMA_ERRORS as exc:
            raise StoreError(f"query on {self.where} failed: {exc}") from exc
        ids = result["ids"][0]
        documents = (result["documents"] or [[]])[0]
        metadatas = (result["metadatas"] or [[]])[0]
        distances = (result["distances"] or [[]])[0]
        return [
            Hit(i, float(dist), doc or "", dict(meta or {}))  # type: ignore[arg-type]
            for i, doc, meta, dist in zip(ids, documents, metadatas, distances, strict=True)
        ]


def wait_for_server(host: str, port: int, *, timeout: float = 30.0) -> None:
    """Block until a Chroma server answers its heartbeat (used by tests and start-up scripts)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            chromadb.HttpClient(
                host=host, port=port, settings=ChromaClientSettings(anonymized_telemetry=False)
            ).heartbeat()
            return
        except Exception as exc:
            last = exc
            time.sleep(0.2)
    raise StoreError(f"no Chroma server answered on {host}:{port} within {timeout:.0f} s: {last}")
