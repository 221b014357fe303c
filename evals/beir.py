"""Retrieval quality on any dataset in BEIR layout, measured through the search library itself.

A BEIR folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``,
``text``) and ``qrels/<split>.tsv`` (``query-id``, ``corpus-id``, ``score``). Each corpus document
is indexed the way the product indexes a paper: a ``papers`` document in the lexical index (title +
text) and a title + text chunk in a Chroma collection, embedded with the configured embedder. Then
every query goes through :class:`retrieval.search.Ranker` with the product's ranking settings.

The built index is cached under ``<data_dir>/evals/<dataset>-<key>/``, keyed by a hash of the
corpus file and of everything that shapes the index (embedder, BM25 parameters, tokenizer, the
document template); vectors are cached beside it, so even a lost Chroma directory is rebuilt
without embedding again. Query vectors are cached per queries file.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytrec_eval

from evals import jsonl
from retrieval.dense import DenseRetriever
from retrieval.embedder import Embedder
from retrieval.lexical import TOKENIZER, Bm25Params, LexicalIndex, PaperText
from retrieval.search import Mode, RankConfig, Ranker
from retrieval.store import ChunkStore
from retrieval.types import Chunk

DOC_TEMPLATE = "title\\ntext v1"  # how a BEIR document becomes the indexed text; part of the cache key
EMBED_BATCH = 64  # texts per progress step while embedding
T = TypeVar("T")


class DatasetError(ValueError):
    """The folder is not a readable BEIR dataset; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    root: Path
    corpus: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]  # only queries judged in the split
    qrels: dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class Report:
    dataset: str
    split: str
    mode: str
    queries: int
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float
    run_seconds: float
    build_seconds: float
    index_cached: bool
    fusion: str
    dense_weight: float
    documents: int

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {
            "dataset": data["dataset"],
            "split": data["split"],
            "mode": data["mode"],
            "queries": data["queries"],
            "nDCG@10": round(self.ndcg_at_10, 4),
            "recall@100": round(self.recall_at_100, 4),
            "MRR@10": round(self.mrr_at_10, 4),
            "run_seconds": round(self.run_seconds, 2),
            "build_seconds": round(self.build_seconds, 2),
            "index_cached": self.index_cached,
            "fusion": self.fusion,
            "dense_weight": self.dense_weight,
            "documents": self.documents,
        }


def _records(path: Path, parse: Callable[[Any, int], T], noun: str) -> list[T]:
    if not path.is_file():
        raise DatasetError(f"{path} is missing (a BEIR dataset has corpus.jsonl, queries.jsonl, qrels/)")
    return jsonl.load(path, parse, expected="a JSON object with an `_id`", error=DatasetError, noun=noun)


def _document(value: Any, number: int) -> tuple[str, tuple[str, str]]:
    return str(value["_id"]), (str(value.get("title") or ""), str(value.get("text") or ""))


def _query(value: Any, number: int) -> tuple[str, str]:
    return str(value["_id"]), str(value.get("text") or "")


def load(root: Path, split: str) -> Dataset:
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        found = sorted(p.stem for p in (root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
        raise DatasetError(
            f"no qrels for split {split!r} in {root}/qrels (found: {', '.join(found) or 'none'})"
        )
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if number == 1 and row and not row[-1].strip().lstrip("-").isdigit():
                continue  # the header
            if len(row) < 3:
                raise DatasetError(f"{qrels_path}:{number}: expected query-id, corpus-id, score")
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    corpus = dict(_records(root / "corpus.jsonl", _document, "documents"))
    queries = dict(_records(root / "queries.jsonl", _query, "queries"))
    missing = [q for q in qrels if q not in queries]
    if missing:
        raise DatasetError(f"{len(missing)} judged queries are not in queries.jsonl (e.g. {missing[0]})")
    return Dataset(root.name, root, corpus, {q: queries[q] for q in qrels}, qrels)


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def document_text(title: str, text: str) -> str:
    return f"{title}\n{text}" if title else text


def _progress(label: str) -> Callable[[int, int], None]:
    def report(done: int, total: int) -> None:
        print(f"\r{label}: {done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)

    return report


class BeirIndex:
    """The cached lexical index and Chroma collection of one dataset."""

    def __init__(self, dataset: Dataset, cache_root: Path, embedder: Embedder, params: Bm25Params) -> None:
        self.dataset = dataset
        self.embedder = embedder
        self.params = params
        settings = {
            "corpus": file_hash(dataset.root / "corpus.jsonl"),
            "embedder": embedder.name,
            "bm25": [params.k1, params.b, params.method],
            "tokenizer": TOKENIZER,
            "template": DOC_TEMPLATE,
        }
        self.key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
        self.root = cache_root / f"{dataset.name}-{self.key}"
        self.collection = f"beir-{self.key}"
        self.built = False  # whether this run had to build (part of) the index
        self.build_seconds = 0.0
        self.lexical: LexicalIndex | None = None
        self.store: ChunkStore | None = None

    def open(self, *, dense: bool = True) -> None:
        started = time.perf_counter()
        self.root.mkdir(parents=True, exist_ok=True)
        ids = list(self.dataset.corpus)
        self.lexical = LexicalIndex(self.root / "lexical", params=self.params, refresh_seconds=3600)
        if self.lexical.document_count("papers") != len(ids):
            shutil.rmtree(self.root / "lexical", ignore_errors=True)
            self.lexical = LexicalIndex(self.root / "lexical", params=self.params, refresh_seconds=3600)
            self.lexical.upsert_papers(PaperText(i, *self.dataset.corpus[i]) for i in ids)
            self.built = True
        self.lexical.flush()
        if not dense:
            self.build_seconds = time.perf_counter() - started
            return
        self.store = ChunkStore.embedded(self.root / "chroma", name=self.collection, dim=self.embedder.dim)
        if self.store.count() != len(ids):
            self.built = True
            vectors = self._vectors(ids)
            chunks = [Chunk(i, None, 0, document_text(*self.dataset.corpus[i]), "abstract") for i in ids]
            report = _progress("storing vectors in Chroma")
            for start in range(0, len(ids), 1000):
                part = slice(start, start + 1000)
                self.store.replace_abstracts(chunks[part], vectors[part].tolist(), [{}] * len(chunks[part]))
                report(min(start + 1000, len(ids)), len(ids))
        self.build_seconds = time.perf_counter() - started

    def document_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every document's id and vector (cached; embedded on the first call)."""
        self.root.mkdir(parents=True, exist_ok=True)
        ids = list(self.dataset.corpus)
        return ids, self._vectors(ids)

    def _vectors(self, ids: list[str]) -> np.ndarray:
        path = self.root / "vectors.npy"
        ids_path = self.root / "vector_ids.json"
        if path.is_file() and ids_path.is_file() and json.loads(ids_path.read_text()) == ids:
            return np.load(path)
        texts = [document_text(*self.dataset.corpus[i]) for i in ids]
        vectors = _embed_all(self.embedder, texts, _progress(f"embedding {len(texts)} documents"))
        np.save(path, vectors)
        ids_path.write_text(json.dumps(ids))
        return vectors

    def query_vectors(self) -> dict[str, list[float]]:
        queries = self.dataset.queries
        key = hashlib.sha256(json.dumps(sorted(queries.items())).encode()).hexdigest()[:16]
        path = self.root / f"queries-{key}.npy"
        ids = sorted(queries)
        if path.is_file():
            vectors = np.load(path)
        else:
            vectors = _embed_all(self.embedder, [queries[q] for q in ids], _progress("embedding queries"))
            np.save(path, vectors)
        return {q: vectors[i].tolist() for i, q in enumerate(ids)}

    def close(self) -> None:
        if self.lexical is not None:
            self.lexical.close()
        if self.store is not None:
            self.store.close()


def _embed_all(embedder: Embedder, texts: list[str], report: Callable[[int, int], None]) -> np.ndarray:
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    # Length-sorted slices keep each model batch's padding small (the embedder sorts within a call).
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), EMBED_BATCH):
        part = order[start : start + EMBED_BATCH]
        out[part] = np.asarray(embedder.embed([texts[i] for i in part]), dtype=np.float32)
        report(min(start + EMBED_BATCH, len(order)), len(order))
    return out


def evaluate(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """nDCG@10, recall@100 and MRR@10 (trec_eval's definitions, via pytrec_eval), averaged over the
    judged queries; a query with no results scores 0."""
    scored = {q: {d: 1.0 / rank for rank, d in enumerate(docs[:100], start=1)} for q, docs in run.items()}
    top10 = {q: {d: s for d, s in docs.items() if s >= 0.1} for q, docs in scored.items()}
    for q in qrels:
        scored.setdefault(q, {})
        top10.setdefault(q, {})
    full = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(scored)
    mrr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    n = len(qrels)
    return {
        "ndcg@10": sum(full.get(q, {}).get("ndcg_cut_10", 0.0) for q in qrels) / n,
        "recall@100": sum(full.get(q, {}).get("recall_100", 0.0) for q in qrels) / n,
        "mrr@10": sum(mrr.get(q, {}).get("recip_rank", 0.0) for q in qrels) / n,
    }


def run_retrieval(
    dataset: Dataset,
    *,
    mode: Mode,
    cache_root: Path,
    embedder: Embedder,
    params: Bm25Params,
    config: RankConfig,
) -> Report:
    index = BeirIndex(dataset, cache_root, embedder, params)
    try:
        index.open(dense=mode != "bm25")
        assert index.lexical is not None
        dense = DenseRetriever(index.store, embedder) if index.store is not None else None
        vectors = index.query_vectors() if mode != "bm25" else {}
        ranker = Ranker(index.lexical, dense, config)
        started = time.perf_counter()
        run = {
            qid: [c.arxiv_id for c in ranker.rank(text, mode=mode, vector=vectors.get(qid)).candidates[:100]]
            for qid, text in dataset.queries.items()
        }
        seconds = time.perf_counter() - started
    finally:
        index.close()
    scores = evaluate(run, dataset.qrels)
    return Report(
        dataset=dataset.name,
        split="",
        mode=mode,
        queries=len(dataset.queries),
        ndcg_at_10=scores["ndcg@10"],
        recall_at_100=scores["recall@100"],
        mrr_at_10=scores["mrr@10"],
        run_seconds=seconds,
        build_seconds=index.build_seconds,
        index_cached=not index.built,
        fusion=config.method,
        dense_weight=config.dense_weight,
        documents=len(dataset.corpus),
    )
