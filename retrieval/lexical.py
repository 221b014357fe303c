"""The lexical index: BM25 (bm25s) over English-stemmed tokens (PyStemmer), kept on disk.

Two corpora, searched separately:

- ``papers``: one document per paper — title, abstract and author names;
- ``chunks``: one document per full-text (body) chunk of an ingested PDF, with its pages.

**How it stays in step.** A bm25s index is static (a new document means a new index), so:

- Documents and their stemmed tokens live in a small SQLite document store
  (``<root>/documents.sqlite3``). Every change bumps its corpus' change counter; unchanged
  re-upserts (a redelivered job) change nothing.
- A *generation* is a bm25s index built from the store at one counter value, saved under
  ``<root>/<corpus>/gen-<counter>-<params>/``; ``<root>/<corpus>/CURRENT`` names the live one and is
  replaced atomically. Rebuilding reuses the stored tokens (no re-tokenising); it still takes
  about 20 s per 20k papers on a busy 2-core machine, which is why changes are batched.
- Writers (the indexing worker) call :meth:`LexicalIndex.upsert_paper` / :meth:`remove_paper` /
  :meth:`upsert_papers`. A corpus with changes is rebuilt at most every ``refresh_seconds``
  (a timer in the writing process; or :meth:`flush` now); changes not built yet are *pending* and
  any process's next refresh builds them. Builds are serialised across processes by an ``flock``.
- Readers (every web process) ``stat`` ``CURRENT`` before a search (at most every
  ``poll_seconds``) and load a newer generation built by another process: no restart needed.
- :meth:`sync_catalogue` brings the ``papers`` corpus in line with the catalogue (new, changed and
  deleted papers); :meth:`rebuild` (``python -m indexing reindex-lexical``) re-reads all of it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import bm25s
import numpy as np
import Stemmer
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from catalog.search_queries import catalogue_paper_ids, paper_texts
from retrieval.types import Chunk
from settings import Settings

log = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets itself to DEBUG and logs every build

Corpus = Literal["papers", "chunks"]
CORPORA: tuple[Corpus, ...] = ("papers", "chunks")
# Bump when tokenisation changes: stored tokens are then re-made from the stored text.
TOKENIZER = "bm25s-en-stopwords+snowball-english-v1"
SYNC_OVERLAP = dt.timedelta(minutes=10)
KEEP_GENERATIONS = 2  # the live one and its predecessor (a reader may still be loading it)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    corpus TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    arxiv_id TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens TEXT NOT NULL,
    page_start INTEGER,
    page_end INTEGER,
    section TEXT,
    source_hash TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (corpus, doc_id)
);
CREATE INDEX IF NOT EXISTS documents_paper ON documents (corpus, arxiv_id);
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


_CHUNK_SELECT = "SELECT doc_id, arxiv_id, text, page_start, page_end, section FROM documents"


class LexicalError(RuntimeError):
    """The lexical index on disk is unreadable or could not be written; the message says where."""


@dataclass(frozen=True, slots=True)
class PaperText:
    """What the ``papers`` corpus indexes for one paper."""

    arxiv_id: str
    title: str
    abstract: str = ""
    authors: Sequence[str] = ()

    @property
    def text(self) -> str:
        return "\n".join(part for part in (self.title, self.abstract, ", ".join(self.authors)) if part)


@dataclass(frozen=True, slots=True)
class LexicalHit:
    doc_id: str  # the arXiv id (papers) or the chunk id (chunks)
    arxiv_id: str
    score: float
    rank: int  # 1-based, within this search


@dataclass(frozen=True, slots=True)
class ChunkText:
    doc_id: str
    arxiv_id: str
    text: str
    page_start: int | None
    page_end: int | None
    section: str | None


@dataclass(frozen=True, slots=True)
class Bm25Params:
    k1: float = 1.2
    b: float = 0.75
    method: str = "lucene"

    @property
    def key(self) -> str:
        raw = json.dumps([self.k1, self.b, self.method, TOKENIZER])
        return hashlib.sha1(raw.encode(), usedforsecurity=False).hexdigest()[:8]


@dataclass(frozen=True, slots=True)
class SyncSummary:
    changed: int
    removed: int
    papers: int


class Tokenizer:
    """Lower-cased words of two or more characters, English stop words removed, Snowball-stemmed.
    PyStemmer objects are not thread-safe, so each thread gets its own."""

    def __init__(self) -> None:
        self._local = threading.local()

    def stemmer(self) -> Stemmer.Stemmer:
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            stemmer = self._local.stemmer = Stemmer.Stemmer("english")
        return stemmer

    def __call__(self, texts: Sequence[str]) -> list[list[str]]:
        if not texts:
            return []
        tokens = bm25s.tokenize(
            list(texts), stopwords="en", stemmer=self.stemmer(), return_ids=False, show_progress=False
        )
        return [list(t) for t in tokens]


_WORD = re.compile(r"(?u)\b\w\w+\b")  # bm25s's own token pattern
_TOKENIZE = Tokenizer()


def highlight_spans(text: str, query: str | Collection[str]) -> list[tuple[int, int]]:
    """``[start, end)`` offsets of the words in ``text`` that match a query term the way the index
    matches them (same words, stop words ignored, stems compared: "estimates" matches "estimate").
    ``query`` is the query text or its stems (from :attr:`LexicalIndex.tokenize`, to reuse them)."""
    stems = set(_TOKENIZE([query])[0] if isinstance(query, str) else query) if query else set()
    if not stems:
        return []
    matches = list(_WORD.finditer(text))
    words = _TOKENIZE.stemmer().stemWords([m.group().lower() for m in matches])  # one C call
    return [m.span() for m, stem in zip(matches, words, strict=True) if stem in stems]


class _Generation:
    """One loaded bm25s index and its documents' ids (an empty corpus has no bm25s index)."""

    def __init__(self, name: str, directory: Path) -> None:
        self.name = name
        ids = json.loads((directory / "ids.json").read_text())
        self.doc_ids: list[str] = ids["doc_ids"]
        self.arxiv_ids: list[str] = ids["arxiv_ids"]
        self.bm25 = bm25s.BM25.load(str(directory), mmap=True, load_corpus=False) if self.doc_ids else None
        self.by_paper: dict[str, list[int]] = {}
        for position, arxiv_id in enumerate(self.arxiv_ids):
            self.by_paper.setdefault(arxiv_id, []).append(position)

    def __len__(self) -> int:
        return len(self.doc_ids)

    def scores(self, tokens: Sequence[str]) -> np.ndarray | None:
        if self.bm25 is None:
            return None
        ids = self.bm25.get_tokens_ids(list(tokens))
        if not ids:
            return None
        return np.asarray(self.bm25.get_scores_from_ids(ids), dtype=np.float32)

    def document_frequencies(self, tokens: Collection[str]) -> dict[str, int]:
        """How many documents hold each token (0: none): its column's length in bm25s's sparse
        score matrix (one stored score per document holding the token)."""
        if self.bm25 is None:
            return dict.fromkeys(tokens, 0)
        vocab, indptr = self.bm25.vocab_dict, self.bm25.scores["indptr"]
        return {t: int(indptr[vocab[t] + 1] - indptr[vocab[t]]) if t in vocab else 0 for t in tokens}

    def mask(self, allowed: Collection[str]) -> np.ndarray:
        mask = np.zeros(len(self.doc_ids), dtype=bool)
        positions = [p for arxiv_id in allowed for p in self.by_paper.get(arxiv_id, ())]
        if positions:
            mask[np.asarray(positions)] = True
        return mask


class LexicalIndex:
    """The maintained lexical index under ``root``. Thread-safe; any number of processes may read
    it, and writers coordinate through the document store and a build lock."""

    def __init__(
        self,
        root: Path,
        *,
        params: Bm25Params | None = None,
        refresh_seconds: float = 30.0,
        poll_seconds: float = 1.0,
    ) -> None:
        self.root = root
        self.params = params or Bm25Params()
        self.refresh_seconds = refresh_seconds
        self.poll_seconds = poll_seconds
        self.tokenize = Tokenizer()
        self._loaded: dict[Corpus, _Generation | None] = {}
        self._checked: dict[Corpus, float] = {}
        self._load_lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._timer_lock = threading.Lock()
        try:
            root.mkdir(parents=True, exist_ok=True)
            with self._db() as db:
                db.executescript(_SCHEMA)
                columns = {row[1] for row in db.execute("PRAGMA table_info(documents)")}
                if "context" not in columns:  # a store from before chunks had a context
                    db.execute("ALTER TABLE documents ADD COLUMN context TEXT NOT NULL DEFAULT ''")
                stored = self._get_state(db, "tokenizer")
                if stored is None:
                    self._set_state(db, "tokenizer", TOKENIZER)
            if stored not in (None, TOKENIZER):
                self._retokenize()
        except (OSError, sqlite3.Error) as exc:
            raise LexicalError(f"cannot open the lexical index at {root}: {exc}") from exc

    # -- the document store ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.root / "documents.sqlite3", timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            yield db
        finally:
            db.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    @staticmethod
    def _get_state(db: sqlite3.Connection, key: str) -> str | None:
        row = db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @staticmethod
    def _set_state(db: sqlite3.Connection, key: str, value: str) -> None:
        db.execute(
            "INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = ?",
            (key, value, value),
        )

    def _bump(self, db: sqlite3.Connection, corpus: Corpus) -> None:
        seq = int(self._get_state(db, f"seq:{corpus}") or 0) + 1
        self._set_state(db, f"seq:{corpus}", str(seq))

    def _replace(
        self,
        db: sqlite3.Connection,
        corpus: Corpus,
        arxiv_id: str,
        rows: Sequence[tuple[str, str, int | None, int | None, str | None, str]],
    ) -> bool:
        """Make ``rows`` (doc_id, text, page_start, page_end, section, context) the paper's only
        documents in ``corpus``; the tokens are those of the context and the text. Returns whether
        anything changed; unchanged documents are not re-tokenised."""
        existing: dict[str, str] = dict(
            db.execute(
                "SELECT doc_id, source_hash FROM documents WHERE corpus = ? AND arxiv_id = ?",
                (corpus, arxiv_id),
            ).fetchall()
        )
        wanted = {row[0]: _hash(row) for row in rows}
        stale = [doc_id for doc_id in existing if doc_id not in wanted]
        fresh = [row for row in rows if existing.get(row[0]) != wanted[row[0]]]
        if not stale and not fresh:
            return False
        db.executemany("DELETE FROM documents WHERE corpus = ? AND doc_id = ?", [(corpus, d) for d in stale])
        tokens = self.tokenize([_indexed(row[1], row[5]) for row in fresh])
        db.executemany(
            "INSERT OR REPLACE INTO documents (corpus, doc_id, arxiv_id, text, tokens, page_start, page_end,"
            " section, source_hash, context) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (corpus, doc_id, arxiv_id, text, " ".join(toks), start, end, section, wanted[doc_id], context)
                for (doc_id, text, start, end, section, context), toks in zip(fresh, tokens, strict=True)
            ],
        )
        return True

    # -- writes (the worker's hooks) ---------------------------------------------------------------

    def upsert_paper(self, arxiv_id: str, chunks: Sequence[Chunk], *, paper: PaperText | None = None) -> bool:
        """Call after ``ChunkStore.replace_paper``: the paper's body chunks become exactly ``chunks``'
        body chunks (an older version's are dropped; the title + abstract chunk is covered by the
        ``papers`` corpus), and ``paper``, when given, replaces its ``papers`` document.
        Returns whether anything changed; the index is rebuilt within ``refresh_seconds``."""
        body = [
            (c.id, c.text, c.page_start, c.page_end, c.section, c.context)
            for c in chunks
            if c.kind == "body" and c.arxiv_id == arxiv_id
        ]
        if len(body) != sum(1 for c in chunks if c.kind == "body"):
            raise ValueError(f"upsert_paper({arxiv_id!r}) was given chunks of another paper")
        changed: set[Corpus] = set()
        with self._write() as db:
            if self._replace(db, "chunks", arxiv_id, body):
                changed.add("chunks")
            if paper is not None:
                if paper.arxiv_id != arxiv_id:
                    raise ValueError(f"upsert_paper({arxiv_id!r}) was given the text of {paper.arxiv_id}")
                if self._replace(db, "papers", arxiv_id, [(arxiv_id, paper.text, None, None, None, "")]):
                    changed.add("papers")
            for corpus in changed:
                self._bump(db, corpus)
        if changed:
            self._schedule()
        return bool(changed)

    def upsert_papers(self, papers: Iterable[PaperText]) -> int:
        """Replace the ``papers`` documents of these papers (title, abstract, authors); returns how
        many changed."""
        changed = 0
        batch: list[PaperText] = []

        def write() -> None:
            nonlocal changed
            with self._write() as db:
                n = sum(
                    self._replace(db, "papers", p.arxiv_id, [(p.arxiv_id, p.text, None, None, None, "")])
                    for p in batch
                )
                if n:
                    self._bump(db, "papers")
            changed += n
            batch.clear()

        for paper in papers:
            batch.append(paper)
            if len(batch) >= 1000:
                write()
        if batch:
            write()
        if changed:
            self._schedule()
        return changed

    def remove_paper(self, arxiv_id: str) -> bool:
        """Drop every document of the paper from both corpora (a paper withdrawn from the catalogue)."""
        changed = False
        with self._write() as db:
            for corpus in CORPORA:
                if self._replace(db, corpus, arxiv_id, []):
                    self._bump(db, corpus)
                    changed = True
        if changed:
            self._schedule()
        return changed

    def sync_catalogue(self, engine: Engine, *, full: bool = False) -> SyncSummary:
        """Bring the ``papers`` corpus in line with the catalogue: papers modified since the last
        sync (all of them when ``full``) are re-read, and papers no longer there are removed.
        The window reaches ``SYNC_OVERLAP`` back so a transaction that committed late is not missed;
        re-reading an unchanged paper costs a hash comparison."""
        with self._db() as db:
            mark = None if full else self._get_state(db, "catalogue_mark")
        since = dt.datetime.fromisoformat(mark) - SYNC_OVERLAP if mark else None
        newest = dt.datetime.fromisoformat(mark) if mark else None
        changed = 0
        batch: list[PaperText] = []
        for row in paper_texts(engine, modified_since=since):
            batch.append(PaperText(row.arxiv_id, row.title, row.abstract, row.authors))
            if row.modified_at and (newest is None or row.modified_at > newest):
                newest = row.modified_at
            if len(batch) >= 2000:
                changed += self.upsert_papers(batch)
                batch = []
        changed += self.upsert_papers(batch)
        in_catalogue = catalogue_paper_ids(engine)
        with self._db() as db:
            indexed = {r[0] for r in db.execute("SELECT arxiv_id FROM documents WHERE corpus = 'papers'")}
        removed = sum(self.remove_paper(arxiv_id) for arxiv_id in indexed - in_catalogue)
        if newest is not None:
            with self._write() as db:
                self._set_state(db, "catalogue_mark", newest.isoformat())
        return SyncSummary(changed=changed, removed=removed, papers=len(in_catalogue))

    def index_catalogue_papers(self, engine: Engine, arxiv_ids: Collection[str]) -> int:
        """Re-read these papers' title, abstract and authors from the catalogue (the worker calls
        this for the papers it just indexed); returns how many documents changed."""
        ids = list(arxiv_ids)
        changed = 0
        for start in range(0, len(ids), 500):
            rows = paper_texts(engine, arxiv_ids=ids[start : start + 500])
            changed += self.upsert_papers(PaperText(r.arxiv_id, r.title, r.abstract, r.authors) for r in rows)
        return changed

    @classmethod
    def from_settings(cls, settings: Settings) -> LexicalIndex:
        """The lexical index of the configured data dir (``<data_dir>/lexical``)."""
        conf = settings.search
        return cls(
            settings.core.data_dir / "lexical",
            params=Bm25Params(k1=conf.lexical_k1, b=conf.lexical_b),
            refresh_seconds=conf.lexical_refresh_seconds,
            poll_seconds=conf.lexical_poll_seconds,
        )

    def rebuild(self, engine: Engine) -> SyncSummary:
        """Re-read every paper from the catalogue and rebuild both corpora now (``reindex-lexical``).
        Full-text chunks are kept from the document store: the catalogue does not hold chunk text."""
        summary = self.sync_catalogue(engine, full=True)
        with self._write() as db:
            for corpus in CORPORA:
                self._bump(db, corpus)  # force a new generation even when nothing changed
        self.flush()
        return summary

    def _retokenize(self) -> None:
        log.warning("lexical tokenizer changed: re-tokenising the stored documents")
        with self._write() as db:
            rows = db.execute("SELECT corpus, doc_id, text, context FROM documents").fetchall()
            for start in range(0, len(rows), 2000):
                part = rows[start : start + 2000]
                tokens = self.tokenize([_indexed(r[2], r[3]) for r in part])
                db.executemany(
                    "UPDATE documents SET tokens = ? WHERE corpus = ? AND doc_id = ?",
                    [(" ".join(t), r[0], r[1]) for r, t in zip(part, tokens, strict=True)],
                )
            for corpus in CORPORA:
                self._bump(db, corpus)
            self._set_state(db, "tokenizer", TOKENIZER)

    # -- building generations ----------------------------------------------------------------------

    def _schedule(self) -> None:
        """Rebuild within ``refresh_seconds`` of the first pending change (debounced)."""
        if self.refresh_seconds <= 0:
            self.flush()
            return
        with self._timer_lock:
            if self._timer is not None and self._timer.is_alive():
                return
            self._timer = threading.Timer(self.refresh_seconds, self._timed_refresh)
            self._timer.daemon = True
            self._timer.start()

    def _timed_refresh(self) -> None:
        try:
            self.flush()
        except LexicalError:
            log.exception("rebuilding the lexical index failed; the next change retries")

    def pending(self) -> dict[Corpus, bool]:
        """Which corpora have changes not yet in their live generation (or a stale one)."""
        with self._db() as db:
            return {c: self._current_name(c) != self._wanted_name(db, c) for c in CORPORA}

    def flush(self) -> list[Corpus]:
        """Build every corpus whose live generation is behind the document store, now. Returns
        the corpora built."""
        built: list[Corpus] = []
        with self._build_lock():
            for corpus in CORPORA:
                if self._build(corpus):
                    built.append(corpus)
        return built

    def close(self) -> None:
        """Cancel a scheduled rebuild and build now, so nothing pending is left behind."""
        with self._timer_lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
            self.flush()

    @contextlib.contextmanager
    def _build_lock(self) -> Iterator[None]:
        fd = os.open(self.root / "build.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # another process's build finishes first
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _wanted_name(self, db: sqlite3.Connection, corpus: Corpus) -> str:
        seq = int(self._get_state(db, f"seq:{corpus}") or 0)
        return f"gen-{seq:09d}-{self.params.key}"

    def _current_name(self, corpus: Corpus) -> str | None:
        try:
            return (self.root / corpus / "CURRENT").read_text().strip() or None
        except FileNotFoundError:
            return None

    def _build(self, corpus: Corpus) -> bool:
        with self._db() as db:
            db.execute("BEGIN")  # one snapshot: the counter and the documents it counts
            name = self._wanted_name(db, corpus)
            if self._current_name(corpus) == name:
                db.execute("COMMIT")
                return False
            rows = db.execute(
                "SELECT doc_id, arxiv_id, tokens FROM documents WHERE corpus = ? ORDER BY doc_id", (corpus,)
            ).fetchall()
            db.execute("COMMIT")
        started = time.perf_counter()
        directory = self.root / corpus
        target = directory / name
        tmp = directory / f".{name}.{os.getpid()}.tmp"
        try:
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            if rows:
                bm25 = bm25s.BM25(k1=self.params.k1, b=self.params.b, method=self.params.method)
                bm25.index([r[2].split() for r in rows], show_progress=False)
                bm25.save(str(tmp), show_progress=False)
            (tmp / "ids.json").write_text(
                json.dumps({"doc_ids": [r[0] for r in rows], "arxiv_ids": [r[1] for r in rows]})
            )
            if target.exists():
                shutil.rmtree(target)
            tmp.rename(target)
            current_tmp = directory / f".CURRENT.{os.getpid()}.tmp"
            current_tmp.write_text(name + "\n")
            current_tmp.replace(directory / "CURRENT")
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise LexicalError(f"cannot write the lexical index {target}: {exc}") from exc
        self._prune(corpus, keep=name)
        self._checked.pop(corpus, None)  # this process's readers load it on their next search
        log.info(
            "lexical %s: built %s (%d documents) in %.2f s",
            corpus,
            name,
            len(rows),
            time.perf_counter() - started,
        )
        return True

    def _prune(self, corpus: Corpus, keep: str) -> None:
        generations = sorted(p for p in (self.root / corpus).glob("gen-*") if p.is_dir())
        for old in [g for g in generations if g.name != keep][: max(0, len(generations) - KEEP_GENERATIONS)]:
            shutil.rmtree(old, ignore_errors=True)

    # -- reads -------------------------------------------------------------------------------------

    def _generation(self, corpus: Corpus) -> _Generation | None:
        """The live generation, reloaded when another process (or thread) built a newer one."""
        now = time.monotonic()
        if corpus in self._loaded and now - self._checked.get(corpus, 0.0) < self.poll_seconds:
            return self._loaded[corpus]
        with self._load_lock:
            self._checked[corpus] = now
            name = self._current_name(corpus)
            loaded = self._loaded.get(corpus)
            if loaded is not None and loaded.name == name:
                return loaded
            if name is None:
                self._loaded[corpus] = None
                return None
            try:
                generation = _Generation(name, self.root / corpus / name)
            except (OSError, ValueError, KeyError) as exc:
                log.warning("lexical %s: cannot load %s (%s); keeping the previous one", corpus, name, exc)
                return loaded
            self._loaded[corpus] = generation
            return generation

    def document_frequencies(self, corpus: Corpus, tokens: Collection[str]) -> tuple[int, dict[str, int]]:
        """The corpus's document count and each (stemmed) token's document frequency."""
        generation = self._generation(corpus)
        if generation is None:
            return 0, dict.fromkeys(tokens, 0)
        return len(generation), generation.document_frequencies(tokens)

    def generation(self, corpus: Corpus) -> str | None:
        """The live generation's name (for status pages and tests)."""
        return self._current_name(corpus)

    def size(self, corpus: Corpus) -> int:
        generation = self._generation(corpus)
        return len(generation) if generation else 0

    def search(
        self,
        corpus: Corpus,
        query: str | Sequence[str],
        *,
        k: int = 100,
        allowed: Collection[str] | None = None,
    ) -> list[LexicalHit]:
        """The ``k`` best documents for ``query`` (text, or tokens already made by
        :attr:`tokenize`), only among papers in ``allowed`` when given. Documents sharing no term
        with the query are never returned; a query of stop words only returns nothing."""
        generation = self._generation(corpus)
        if generation is None or k <= 0:
            return []
        tokens = self.tokenize([query])[0] if isinstance(query, str) else list(query)
        scores = generation.scores(tokens)
        if scores is None:
            return []
        if allowed is not None:
            scores = np.where(generation.mask(allowed), scores, 0.0)
        return _top(scores, k, generation)

    def chunks(self, doc_ids: Sequence[str]) -> dict[str, ChunkText]:
        """Stored text and pages of these full-text chunks (for snippets)."""
        if not doc_ids:
            return {}
        found: dict[str, ChunkText] = {}
        with self._db() as db:
            for start in range(0, len(doc_ids), 500):
                part = list(doc_ids[start : start + 500])
                marks = ",".join("?" * len(part))
                # The f-string adds only "?" placeholders; values are bound.
                sql = f"{_CHUNK_SELECT} WHERE corpus = 'chunks' AND doc_id IN ({marks})"
                for row in db.execute(sql, part):
                    found[row[0]] = ChunkText(*row)
        return found

    def document_count(self, corpus: Corpus) -> int:
        with self._db() as db:
            return int(db.execute("SELECT count(*) FROM documents WHERE corpus = ?", (corpus,)).fetchone()[0])

    def tokens_of(self, corpus: Corpus, doc_ids: Sequence[str]) -> dict[str, list[str]]:
        """Stored tokens of some documents (pseudo-relevance feedback reads the top hits' terms)."""
        if not doc_ids:
            return {}
        marks = ",".join("?" * len(doc_ids))
        with self._db() as db:
            return {
                doc_id: tokens.split()
                for doc_id, tokens in db.execute(
                    f"SELECT doc_id, tokens FROM documents WHERE corpus = ? AND doc_id IN ({marks})",  # noqa: S608
                    [corpus, *doc_ids],
                )
            }


def _top(scores: np.ndarray, k: int, generation: _Generation) -> list[LexicalHit]:
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return []
    if positive.size > k:
        part = np.argpartition(-scores[positive], k - 1)[:k]
        positive = positive[part]
    order = positive[np.argsort(-scores[positive], kind="stable")]
    return [
        LexicalHit(generation.doc_ids[i], generation.arxiv_ids[i], float(scores[i]), rank)
        for rank, i in enumerate(order, start=1)
    ]


def _indexed(text: str, context: str) -> str:
    """What is tokenised: the context (e.g. title and section of a chunk) and the text."""
    return f"{context}\n{text}" if context else text


def _hash(row: Sequence[object]) -> str:
    # Without a context, the hash of the five fields stores held before chunks had one (no re-tokenising).
    fields = list(row) if row[5:] and row[5] else list(row[:5])
    return hashlib.sha1(json.dumps(fields).encode(), usedforsecurity=False).hexdigest()


class CatalogueSync:
    """Keeps the ``papers`` corpus in step with the catalogue from a daemon thread: a sync at start
    (the first one indexes the whole catalogue) and then every ``interval`` seconds, which catches
    papers imported by another process (``python -m ingest listings …``) without a restart.

    The indexing worker runs it. However many workers run, one process syncs at a time: the one
    holding a non-blocking ``flock`` on ``<root>/catalogue-sync.lock``. The others try again every
    interval, so when the holder dies (the kernel drops its lock) another one takes over."""

    def __init__(self, index: LexicalIndex, engine: Engine, *, interval: float = 60.0) -> None:
        self.index = index
        self.engine = engine
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lexical-sync", daemon=True)
        self._lock_fd: int | None = None
        self.last: SyncSummary | None = None

    def start(self) -> CatalogueSync:
        self._thread.start()
        return self

    @property
    def leading(self) -> bool:
        """Whether this process is the one that syncs."""
        return self._lock_fd is not None

    def _lead(self) -> bool:
        if self._lock_fd is None:
            fd = os.open(self.index.root / "catalogue-sync.lock", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            self._lock_fd = fd
        return True

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    if self._lead():
                        self.last = self.index.sync_catalogue(self.engine)
                        if self.last.changed or self.last.removed:
                            self.index.flush()
                except (LexicalError, sqlite3.Error, OSError, SQLAlchemyError) as exc:
                    log.warning("lexical sync with the catalogue failed (retrying later): %s", exc)
                self._stop.wait(self.interval)
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # releases the flock: another process takes over
                self._lock_fd = None

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
