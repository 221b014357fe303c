"""Page-level retrieval measured on a corpus built here: the demo PDFs' full text among abstracts.

``python -m evals qa-retrieval --file Q.jsonl --build`` indexes the 35 demo PDFs (parsed with the
project's parser, chunked by ``ingest.chunking``, titles and abstracts from ``pdfs/papers.jsonl``)
together with the first ``--distractors`` abstracts of ``arxiv/listings-20k.jsonl.gz`` (default:
all 20,000), the way the indexing pipeline stores them: every chunk in a Chroma collection, body
chunks and paper records in the lexical index. Questions then go through
:class:`retrieval.search.Ranker` and :func:`retrieval.passages.rank_passages` with the configured
ranking settings.

Built indexes are cached under ``<data_dir>/evals/pages-<key>/`` (the key hashes every indexed
text and the embedder), and vectors are cached by text in ``<data_dir>/evals/vectors-<embedder>``:
a change to how chunks are cut or contextualised re-embeds only the texts that changed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ingest.chunking import chunk_paper
from ingest.pdf import ParsedPdf, PdfLimits, parse_pdf
from retrieval.dense import DenseRetriever
from retrieval.embedder import Embedder
from retrieval.lexical import TOKENIZER, Bm25Params, LexicalIndex, PaperText
from retrieval.store import ChunkStore
from retrieval.types import Chunk
from settings import SHARED_DATA, ChunkSettings

PDF_DIR = SHARED_DATA / "pdfs" / "arxiv"
PAPERS = SHARED_DATA / "pdfs" / "papers.jsonl"
DISTRACTORS = SHARED_DATA / "arxiv" / "listings-20k.jsonl.gz"
EMBED_BATCH = 64


@dataclass(frozen=True, slots=True)
class Corpus:
    chunks: dict[str, Chunk]  # by chunk id
    papers: list[PaperText]
    full_text: set[str]  # papers whose PDF is indexed


def build_corpus(settings: ChunkSettings, *, distractors: int) -> Corpus:
    chunks: dict[str, Chunk] = {}
    papers: list[PaperText] = []
    full_text: set[str] = set()

    def add(arxiv_id: str, title: str, abstract: str, authors: list[str], parsed: ParsedPdf | None) -> None:
        for chunk in chunk_paper(
            arxiv_id=arxiv_id, version=None, title=title, abstract=abstract, parsed=parsed, settings=settings
        ):
            chunks[chunk.id] = chunk
        papers.append(PaperText(arxiv_id, title, abstract, authors))

    for line in PAPERS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        arxiv_id = str(record["id"])
        title, abstract = " ".join(str(record["title"]).split()), str(record.get("abstract") or "")
        authors = [a.strip() for a in str(record.get("authors") or "").split(",") if a.strip()]
        add(arxiv_id, title, abstract, authors, parse_pdf(PDF_DIR / f"{arxiv_id}.pdf", PdfLimits()))
        full_text.add(arxiv_id)
    with gzip.open(DISTRACTORS, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if number >= distractors:
                break
            record = json.loads(line)
            arxiv_id = str(record["id"])
            if arxiv_id in full_text:
                continue
            title, abstract = " ".join(str(record["title"]).split()), str(record.get("summary") or "")
            add(arxiv_id, title, abstract, list(record.get("authors") or []), None)
    return Corpus(chunks, papers, full_text)


class VectorCache:
    """Embeddings by (embedder, text): a text embedded once is never embedded again."""

    def __init__(self, root: Path, embedder: Embedder) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder
        self.db = sqlite3.connect(root / f"vectors-{embedder.name}.sqlite3")
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def vectors(self, texts: Sequence[str]) -> tuple[np.ndarray, float]:
        """The texts' vectors, and the seconds spent embedding the ones not cached."""
        keys = [self.key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            wanted = keys[start : start + 500]
            marks = ",".join("?" * len(wanted))
            query = f"SELECT key, vector FROM vectors WHERE key IN ({marks})"  # noqa: S608 - placeholders only
            for key, blob in self.db.execute(query, wanted):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        pending = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in found}.items())
        started = time.perf_counter()
        for start in range(0, len(pending), EMBED_BATCH):
            part = pending[start : start + EMBED_BATCH]
            vectors = np.asarray(self.embedder.embed([t for _, t in part]), dtype=np.float32)
            self.db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                [(k, v.tobytes()) for (k, _), v in zip(part, vectors, strict=True)],
            )
            self.db.commit()
            for (k, _), v in zip(part, vectors, strict=True):
                found[k] = v
            done = min(start + EMBED_BATCH, len(pending))
            end = "" if done < len(pending) else "\n"
            print(f"\rembedding: {done}/{len(pending)}", end=end, file=sys.stderr)
        seconds = time.perf_counter() - started
        return np.stack([found[k] for k in keys]), seconds


@dataclass
class PagesIndex:
    corpus: Corpus
    lexical: LexicalIndex
    store: ChunkStore
    dense: DenseRetriever
    embed_seconds: float
    texts_embedded: int

    def close(self) -> None:
        self.lexical.close()
        self.store.close()


def embedded_text(chunk: Chunk) -> str:
    """What the embedder and BM25 see of a chunk (the stored text is the page text)."""
    return chunk.indexed_text


def open_index(
    cache_root: Path, embedder: Embedder, params: Bm25Params, settings: ChunkSettings, *, distractors: int
) -> PagesIndex:
    corpus = build_corpus(settings, distractors=distractors)
    ids = sorted(corpus.chunks)
    texts = [embedded_text(corpus.chunks[i]) for i in ids]
    digest = hashlib.sha256()
    for i, text in zip(ids, texts, strict=True):
        digest.update(f"{i}\0{text}\0".encode())
    for paper in corpus.papers:
        digest.update(f"{paper.arxiv_id}\0{paper.text}\0".encode())
    digest.update(json.dumps([embedder.name, TOKENIZER, params.k1, params.b, params.method]).encode())
    key = digest.hexdigest()[:16]
    root = cache_root / f"pages-{key}"
    root.mkdir(parents=True, exist_ok=True)
    cache = VectorCache(cache_root, embedder)
    before = cache.db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    vectors, seconds = cache.vectors(texts)
    embedded = cache.db.execute("SELECT count(*) FROM vectors").fetchone()[0] - before
    store = ChunkStore.embedded(root / "chroma", name=f"pages-{key}", dim=embedder.dim)
    if store.count() != len(ids):
        for start in range(0, len(ids), 1000):
            part = [corpus.chunks[i] for i in ids[start : start + 1000]]
            store.replace_abstracts(part, vectors[start : start + 1000].tolist(), [{}] * len(part))
    lexical = LexicalIndex(root / "lexical", params=params, refresh_seconds=3600)
    if lexical.document_count("papers") != len(corpus.papers):
        lexical.upsert_papers(corpus.papers)
        by_paper: dict[str, list[Chunk]] = {}
        for chunk in corpus.chunks.values():
            if chunk.arxiv_id in corpus.full_text:
                by_paper.setdefault(chunk.arxiv_id, []).append(chunk)
        for arxiv_id, chunks in by_paper.items():
            lexical.upsert_paper(arxiv_id, chunks)
    lexical.flush()
    return PagesIndex(corpus, lexical, store, DenseRetriever(store, embedder), seconds, embedded)
