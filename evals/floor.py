"""Calibrating ``search_min_similarity``: how similar a query that matches nothing gets to a corpus,
against how similar real queries are to the documents judged relevant to them.

The search drops a paper that only the embedding found when its best cosine similarity is below the
floor (a nonsense query still has nearest neighbours). The floor must sit above what nonsense
reaches — and that grows with the corpus (the best of more documents) and depends on the embedder —
while a relevant paper found only by the embedding should rarely fall under it. Measured here with
exact cosines (numpy, no HNSW) over a BEIR corpus's cached document vectors:

- *nonsense*: seeded random letter strings (the shape of a mistyped or garbage query), made-up
  pseudo-words from syllables, and digit/symbol soup; for each, its best similarity to any document;
- *unrelated*: everyday questions about nothing the corpus is about (reported, not calibrated on:
  a scientific corpus may well hold a paper on diet or sport);
- *real*: the dataset's judged queries: the similarity of every judged-relevant document (the ones
  a floor could drop) and of each query's best document.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from retrieval.embedder import Embedder

SEED = 12
LETTERS = string.ascii_lowercase
SYLLABLES = (
    "ka",
    "zu",
    "mo",
    "ri",
    "pel",
    "ton",
    "vrak",
    "quo",
    "blen",
    "dro",
    "fis",
    "gar",
    "hul",
    "jin",
    "lom",
    "nep",
    "sor",
    "tav",
    "wix",
    "yem",
    "zorb",
)
UNRELATED = (
    "best pizza restaurant in naples",
    "how do I fix a flat bicycle tyre",
    "lyrics of yesterday by the beatles",
    "cheap flights from london to lisbon in may",
    "who won the football world cup in 1998",
    "how long to boil an egg",
    "knitting pattern for a wool scarf",
    "what time does the post office close on saturday",
    "reviews of the new smartphone camera",
    "how to train a puppy to sit",
    "second hand cars for sale near me",
    "recipe for chocolate chip cookies",
    "when is the next full moon",
    "how to renew my passport",
    "best hiking trails in the alps",
    "tips for learning to play the guitar",
    "how to get red wine out of a carpet",
    "funny cat videos",
    "weather forecast for tomorrow in berlin",
    "what to wear to a summer wedding",
)
THRESHOLDS = (0.15, 0.175, 0.2, 0.225, 0.25, 0.275, 0.3, 0.35)


def nonsense_queries(count: int = 100) -> dict[str, list[str]]:
    """Three kinds of query that mean nothing, ``count`` of each, always the same (seeded)."""
    rng = random.Random(SEED)

    def letters() -> str:
        words = rng.randint(1, 4)
        return " ".join("".join(rng.choices(LETTERS, k=rng.randint(3, 8))) for _ in range(words))

    def pseudo_words() -> str:
        words = rng.randint(1, 4)
        return " ".join("".join(rng.choices(SYLLABLES, k=rng.randint(2, 3))) for _ in range(words))

    def symbols() -> str:
        pool = string.digits + "-_#/.%"
        return " ".join("".join(rng.choices(pool, k=rng.randint(2, 6))) for _ in range(rng.randint(1, 3)))

    return {
        "random letters": [letters() for _ in range(count)],
        "pseudo-words": [pseudo_words() for _ in range(count)],
        "digits and symbols": [symbols() for _ in range(count)],
    }


def _stats(values: Sequence[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    pct = np.percentile(a, [1, 5, 50, 95, 99])
    return {
        "n": len(a),
        "min": round(float(a.min()), 3),
        "p1": round(float(pct[0]), 3),
        "p5": round(float(pct[1]), 3),
        "median": round(float(pct[2]), 3),
        "p95": round(float(pct[3]), 3),
        "p99": round(float(pct[4]), 3),
        "max": round(float(a.max()), 3),
    }


def calibrate(
    embedder: Embedder,
    documents: np.ndarray,
    doc_ids: Sequence[str],
    queries: dict[str, list[float]],
    qrels: dict[str, dict[str, int]],
) -> dict[str, Any]:
    """The similarity distributions and, per candidate floor, what it would let through or drop."""
    docs = documents / np.clip(np.linalg.norm(documents, axis=1, keepdims=True), 1e-12, None)
    position = {d: i for i, d in enumerate(doc_ids)}

    def best(vectors: np.ndarray) -> list[float]:
        return (vectors @ docs.T).max(axis=1).tolist()

    groups = nonsense_queries()
    nonsense_best = {name: best(np.asarray(embedder.embed(texts))) for name, texts in groups.items()}
    unrelated_best = best(np.asarray(embedder.embed(list(UNRELATED))))
    qids = [q for q in queries if qrels.get(q)]
    real = np.asarray([queries[q] for q in qids], dtype=np.float32)
    sims = real @ docs.T
    real_best = sims.max(axis=1).tolist()
    gold = [
        float(sims[row, position[d]])
        for row, q in enumerate(qids)
        for d, grade in qrels[q].items()
        if grade > 0 and d in position
    ]
    all_nonsense = [s for values in nonsense_best.values() for s in values]
    return {
        "embedder": embedder.name,
        "documents": len(doc_ids),
        "best similarity of a nonsense query": {k: _stats(v) for k, v in nonsense_best.items()}
        | {"all": _stats(all_nonsense)},
        "best similarity of an unrelated everyday query": _stats(unrelated_best),
        "similarity of a judged-relevant document": _stats(gold),
        "best similarity of a real query": _stats(real_best),
        "floors": [
            {
                "floor": t,
                "nonsense with a paper above it": round(float(np.mean(np.asarray(all_nonsense) >= t)), 3),
                "unrelated with a paper above it": round(float(np.mean(np.asarray(unrelated_best) >= t)), 3),
                "relevant documents below it": round(float(np.mean(np.asarray(gold) < t)), 4),
            }
            for t in THRESHOLDS
        ],
    }
