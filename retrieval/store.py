"""The vector store: chunks and their embeddings in Chroma (the only module that imports chromadb).

Two ways to reach Chroma, one interface (:class:`ChunkStore`):

- **embedded** (default): a ``PersistentClient`` on a local directory. A Chroma directory must have
  ONE writing process (several corrupt it), so the path is guarded by an ``flock`` lock file: a
  second process is refused with a message naming the holder. The kernel drops the lock when its
  holder dies, so a stale lock file left by a killed process never blocks a restart.
- **relayed** (the search processes beside an embedded writer): the writer process's collection,
  read through a :class:`StoreRelay` it serves on an authenticated Unix socket. Only ONE process
  may open an embedded directory at all, readers included: chromadb 1.5.9 applies the pending log
  to its HNSW segment and writes the segment's files (and ``chroma.sqlite3``) on a *read*, so a
  second process that "only reads" rewrites the files the writer writes. Measured: a reader process
  beside a writer got ``InternalError: ... Error finding id`` and ``... Failed to apply logs to the
  hnsw segment writer`` from its queries, and died of SIGSEGV in the Rust bindings within a minute
  (``docs/decisions/search-processes.md``).
- **server**: an ``HttpClient`` to a ``chroma run`` server, shared by any number of workers and web
  processes.

The collection name is derived from what built the vectors (embedding model, chunking settings,
parser version): changing any of them builds a new index instead of mixing incompatible vectors.
Writes are ``upsert`` with deterministic chunk ids, so a job that runs twice (at-least-once delivery)
changes nothing; replacing a paper deletes its chunks that are not in the new set (no orphans).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import logging
import multiprocessing
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import Any, TypeVar, cast

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


class RelayError(RuntimeError):
    """A read through the writer process's :class:`StoreRelay` failed there, or the relay is away."""


# What a Chroma call raises when the store is broken or away: its own errors, bad input it refuses,
# a failing disk, (HttpClient) the server being unreachable, and (relayed) the writer's relay.
CHROMA_ERRORS: tuple[type[Exception], ...] = (ChromaError, ValueError, OSError, httpx.HTTPError, RelayError)


class StoreError(RuntimeError):
    """Chroma is unreachable or refused an operation; the message says which and where."""


T = TypeVar("T")


def read_twice(read: Callable[[], T], what: str) -> T:
    """A Chroma read, and once more when chromadb itself failed it (here, or at the writer for a
    relayed read): a k-NN with a ``where`` filter that races a delete in the same process sometimes
    gets ``InternalError: ... Error finding id`` (chromadb 1.5.9; 4 in 830 such queries under
    constant writes), and the same query a moment later answers. Bad input, a failing disk or an
    unreachable server are not retried; a second failure is raised as it is."""
    try:
        return read()
    except (ChromaError, RelayError) as exc:
        log.info("%s failed, reading once more: %s", what, exc)
        return read()


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
    """Chunks of one collection. Thread-safe: the client is built once, on first use."""

    def __init__(
        self,
        *,
        name: str,
        dim: int,
        path: Path | None = None,
        host: str = "",
        port: int = 8000,
        lock: bool = True,
        relay: RelayAddress | None = None,
    ) -> None:
        if not path and not host and relay is None:
            raise ValueError("a ChunkStore needs an embedded path, a server host or a writer's relay")
        self.name = name
        self.dim = dim
        self.path = path
        self.host = host
        self.port = port
        self.relay = relay
        self._lock = WriterLock(path) if path and not host and lock and relay is None else None
        self._client: ClientAPI | None = None
        self._collection: Collection | None = None
        self._guard = threading.Lock()
        if self._lock:
            self._lock.acquire()  # refuse early, before anything else is opened

    @classmethod
    def embedded(cls, path: Path, *, name: str, dim: int) -> ChunkStore:
        return cls(name=name, dim=dim, path=path)

    @classmethod
    def relayed(cls, relay: RelayAddress, *, name: str, dim: int) -> ChunkStore:
        """Reads the collection of the process that writes an embedded Chroma, through its
        :class:`StoreRelay`: sees every write at once, never opens the directory, never writes."""
        return cls(name=name, dim=dim, relay=relay)

    @classmethod
    def server(cls, host: str, port: int, *, name: str, dim: int) -> ChunkStore:
        return cls(name=name, dim=dim, host=host, port=port)

    @property
    def where(self) -> str:
        if self.host:
            return f"chroma server {self.host}:{self.port}"
        if self.relay is not None:
            return f"embedded chroma of the writing process (relay {self.relay.path})"
        return f"embedded chroma {self.path}"

    # -- connection ------------------------------------------------------------------------------

    @property
    def client(self) -> ClientAPI:
        if self.relay is not None:
            raise StoreError(f"the {self.where} is read through its relay; this process opens no client")
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
        the raw collection (e.g. llama-index's ``ChromaVectorStore``) takes it from here. Relayed:
        an object with the collection's reads (``query``, ``get``, ``count``) done by the writer."""
        if self.relay is not None:
            with self._guard:
                if self._collection is None:
                    self._collection = cast(Collection, RelayedCollection(self.relay))
            return self._collection
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
            if self.relay is not None:
                self.collection.count()
            else:
                self.client.heartbeat()
        except CHROMA_ERRORS as exc:
            raise StoreError(f"the {self.where} does not answer: {exc}") from exc

    def close(self) -> None:
        with self._guard:
            self._close_client()
            if self._lock:
                self._lock.release()

    def _close_client(self) -> None:
        if isinstance(self._collection, RelayedCollection):
            self._collection.close()
            self._collection = None
        if self._client is not None:
            try:
                cast(Any, self._client).close()  # Client has close(); the ClientAPI protocol does not
            except (ChromaError, OSError, RuntimeError) as exc:  # closing must not mask shutdown
                log.warning("closing the %s failed: %s", self.where, exc)
            self._client = None
            self._collection = None

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

    def _delete(self, ids: Sequence[str]) -> None:
        self._writable()
        for start in range(0, len(ids), WRITE_BATCH):
            try:
                self.collection.delete(ids=list(ids[start : start + WRITE_BATCH]))
            except CHROMA_ERRORS as exc:
                raise StoreError(f"deleting chunks in the {self.where} failed: {exc}") from exc

    def _writable(self) -> None:
        if self.relay is not None:
            raise StoreError(f"the {self.where} is only read here; the writing process writes")

    # -- reads -----------------------------------------------------------------------------------

    def count(self) -> int:
        return self.collection.count()

    def ids(self, *, where: Mapping[str, Any] | None = None) -> list[str]:
        try:
            result = read_twice(
                lambda: self.collection.get(where=cast(Any, where) if where else None, include=[]), "ids"
            )
        except CHROMA_ERRORS as exc:
            raise StoreError(f"reading ids from {self.where} failed: {exc}") from exc
        return list(result["ids"])

    def get(
        self, ids: Iterable[str] | None = None, *, where: Mapping[str, Any] | None = None
    ) -> list[StoredChunk]:
        wanted = list(ids) if ids is not None else None
        try:
            result = read_twice(
                lambda: self.collection.get(
                    ids=wanted, where=cast(Any, where) if where else None, include=["documents", "metadatas"]
                ),
                "get",
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
            result = read_twice(
                lambda: self.collection.query(
                    query_embeddings=np.asarray([vector], dtype=np.float32),
                    n_results=k,
                    where=cast(Any, where) if where else None,
                    include=["documents", "metadatas", "distances"],
                ),
                "query",
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


# -- the writer's relay: the collection's reads for the other processes of an embedded Chroma ------

RELAY_READS = frozenset({"query", "get", "count"})


@dataclass(frozen=True, slots=True)
class RelayAddress:
    """Where a :class:`StoreRelay` listens and the key that admits a reader (picklable: a spawned
    search process gets it with its settings)."""

    path: str
    authkey: bytes = field(repr=False)


class RelayedCollection:
    """The writing process's collection as a reader in another process sees it: ``query``, ``get``
    and ``count`` (the keyword arguments of chromadb's) sent through its relay and done there. One
    connection, one request at a time; a broken connection is opened again once per call. Every
    failure is a :class:`RelayError` (one of ``CHROMA_ERRORS``, so callers translate it as any)."""

    def __init__(self, relay: RelayAddress) -> None:
        self.relay = relay
        self._connection: Connection | None = None
        self._guard = threading.Lock()

    def query(self, **kwargs: Any) -> Any:
        return self._call("query", kwargs)

    def get(self, ids: Any = None, **kwargs: Any) -> Any:
        return self._call("get", {"ids": ids, **kwargs})

    def count(self) -> int:
        return cast(int, self._call("count", {}))

    def _call(self, read: str, kwargs: dict[str, Any]) -> Any:
        with self._guard:
            for attempt in (1, 2):
                try:
                    if self._connection is None:
                        self._connection = Client(self.relay.path, "AF_UNIX", authkey=self.relay.authkey)
                    self._connection.send((read, kwargs))
                    ok, value = self._connection.recv()
                    break
                except (OSError, EOFError, multiprocessing.AuthenticationError) as exc:
                    self._drop()  # the writer restarted its relay, or is gone: one new connection
                    if attempt == 2:
                        raise RelayError(f"the writing process's relay does not answer: {exc!r}") from exc
        if not ok:
            raise RelayError(value)
        return value

    def _drop(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(OSError):
                self._connection.close()
            self._connection = None

    def close(self) -> None:
        with self._guard:
            self._drop()


class StoreRelay:
    """The embedded store's reads served to the other processes of this machine (the search
    processes) on a Unix socket, so that only the writing process opens the directory. Each reader
    connects once (authenticated by a random key) and gets a thread here; a read runs on this
    process's own client, like one of its own searches. A failed read is answered with its message
    and the reader raises it as a :class:`RelayError`; the relay itself never stops on one."""

    def __init__(self, store: ChunkStore) -> None:
        if store.host or store.relay is not None:
            raise ValueError(f"only the process that writes an embedded Chroma relays it, not {store.where}")
        self.store = store
        authkey = secrets.token_bytes(32)
        self._listener = Listener(family="AF_UNIX", authkey=authkey)
        self.address = RelayAddress(str(self._listener.address), authkey)
        self._closed = threading.Event()
        self._readers: set[Connection] = set()
        self._readers_guard = threading.Lock()
        self._accepting = threading.Thread(target=self._accept, name="chroma-relay", daemon=True)
        self._accepting.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection = self._listener.accept()
            except (OSError, EOFError, multiprocessing.AuthenticationError) as exc:
                if not self._closed.is_set():
                    log.warning("the chroma relay refused a connection: %r", exc)
                    time.sleep(0.1)  # not a busy loop should accept() keep failing
                continue
            if self._closed.is_set():
                connection.close()
                break
            threading.Thread(
                target=self._serve, args=(connection,), name="chroma-relay-reader", daemon=True
            ).start()

    def _serve(self, connection: Connection) -> None:
        with self._readers_guard:
            if self._closed.is_set():
                connection.close()
                return
            self._readers.add(connection)
        try:
            self._answer(connection)
        finally:
            with self._readers_guard:
                self._readers.discard(connection)
            connection.close()

    def _answer(self, connection: Connection) -> None:
        while True:
            try:
                read, kwargs = connection.recv()
            except (OSError, EOFError):  # the reader is gone
                return
            try:
                if read not in RELAY_READS:
                    raise ValueError(f"the relay reads, and {read!r} is not a read")
                answer: tuple[bool, Any] = (True, getattr(self.store.collection, read)(**kwargs))
            except Exception as exc:  # the reader's search goes on without vectors, with a note
                answer = (False, f"{type(exc).__name__}: {exc}")
            try:
                connection.send(answer)
            except (OSError, ValueError):
                return

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        # Wakes the accepting thread: closing a listening socket does not interrupt its accept().
        with contextlib.suppress(OSError, EOFError, multiprocessing.AuthenticationError):
            Client(self.address.path, "AF_UNIX", authkey=self.address.authkey).close()
        self._accepting.join(timeout=5)
        self._listener.close()
        with self._readers_guard:  # the readers' threads wait in recv(): an end of file wakes them
            for connection in self._readers:
                with contextlib.suppress(OSError), socket.socket(fileno=os.dup(connection.fileno())) as end:
                    end.shutdown(socket.SHUT_RDWR)


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
