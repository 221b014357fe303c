"""Passages for a question: chunks fused across retrievers, aggregated to pages and papers.

What chat packs into its context (and ``qa-retrieval`` measures). Search ranks *papers*; a question
needs the *page*, so fusion happens per chunk here:

1. **Chunk lists.** BM25 over full-text chunks, BM25 over paper records (title, abstract, authors;
   it stands for the paper's title + abstract chunk), and the dense k-NN over all chunks. Each
   list is z-normalised over its own hits (the scale the ranker's fusion uses).
2. **Chunk score** = ``(1 - w) * z_lexical + w * z_dense`` (``PassageConfig.dense_weight``); a
   chunk missing from a list takes that list's lowest z (it ranked below everything it returned).
3. **Second stage** (``rescore_papers``): the first stage saw each list's global top k, so most
   chunks of the best paper were never scored. Every chunk of the best paper (by the paper score
   below) gets its exact BM25 score and cosine (a k-NN restricted to that paper), on the first
   stage's z-scales, and is fused the same way.
4. **Neighbours** (``neighbour_weight``): a body chunk moves that fraction of the way towards its
   better adjacent chunk's score (an answer straddling a chunk boundary is split across both).
5. **Page score** = the best chunk score on the page + ``page_bonus`` for each further first-stage
   chunk hit on it, at most ``max_bonus_hits`` of them: a page several retrieved chunks land on is
   likelier the answer, but one strong chunk still beats many weak ones. A chunk spanning two
   pages counts for both. The title + abstract chunk comes from the catalogue and has no page, but
   a PDF prints its abstract on page 1: for a paper with body chunks among the hits it also stands for page 1
   (``front_page``), capped just below the paper's best body chunk (the papers corpus and the
   chunk corpus are normalised apart, so the abstract's z is not comparable to a chunk's).
6. **Paper score** = the best chunk score of the paper + the same bounded bonus over its other hit
   chunks. Pages are then ordered by their page score plus ``paper_weight`` times their paper's.

The result keeps every chunk's text, pages and section, so passages can be quoted and cited.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from retrieval.fusion import order
from retrieval.search import Mode, Ranker
from retrieval.store import StoreError
from retrieval.types import chunk_id, parse_chunk_id

ABSTRACT = "abstract"
FRONT_MARGIN = 1e-6


@dataclass(frozen=True, slots=True)
class PassageConfig:
    """Measured on the development questions (``evals/questions``; ``docs/search.md``): per chunk the dense
    side deserves less weight than per paper (body chunks embed worse than abstracts); the second
    stage, neighbours and the front page each gained a question or two at page hit@5."""

    dense_weight: float = 0.3  # the lexical side gets 1 - dense_weight
    page_bonus: float = 0.1  # per further chunk hit on the page (in z units of the fused score)
    max_bonus_hits: int = 2
    paper_weight: float = 0.3  # how much the paper's score lifts its pages
    rescore_papers: int = 1  # second stage: every chunk of the best N papers scored (0: off)
    rescore_depth: int = 400  # chunks the second stage's k-NN reads
    neighbour_weight: float = 0.3  # how far a chunk moves towards a better adjacent chunk's score
    front_page: bool = True  # a full-text paper's title + abstract chunk also stands for its page 1


@dataclass(frozen=True, slots=True)
class Passage:
    """One retrieved chunk: ``chunk_id`` is ``<arxiv_id>#abstract`` for a title + abstract."""

    chunk_id: str
    arxiv_id: str
    score: float
    page_start: int | None
    page_end: int | None
    section: str | None
    text: str | None
    lexical_rank: int | None
    dense_rank: int | None
    similarity: float | None = None  # the chunk's own cosine to the query (None: not a dense hit)

    @property
    def pages(self) -> range:
        if self.page_start is None:
            return range(0)
        return range(self.page_start, (self.page_end or self.page_start) + 1)


@dataclass(frozen=True, slots=True)
class PageHit:
    arxiv_id: str
    page: int
    score: float
    passages: tuple[Passage, ...]  # best first


@dataclass(frozen=True, slots=True)
class PassageRanking:
    passages: list[Passage]  # best first
    pages: list[PageHit]  # best first
    papers: list[tuple[str, float]]  # best first


def _bonus_score(scores: Sequence[float], hits: int, config: PassageConfig) -> float:
    """The best score plus the bounded bonus for ``hits`` (first-stage hits among ``scores``)
    beyond the first."""
    return max(scores) + config.page_bonus * min(max(hits - 1, 0), config.max_bonus_hits)


class _Scale:
    """One list's z-scale, fixed by its first-stage hits so that second-stage scores of the same
    list land on the same scale (a chunk scoring below every first-stage hit gets a lower z)."""

    def __init__(self, raw: Iterable[float], *, single: float = 0.0) -> None:
        values = list(raw)
        self.mean = sum(values) / len(values) if values else 0.0
        spread = math.sqrt(sum((v - self.mean) ** 2 for v in values) / len(values)) if values else 0.0
        self.spread = spread if spread > 0 else 1.0
        self.single = single if len(values) == 1 else None  # what a list of one document scores

    def z(self, value: float) -> float:
        if self.single is not None:  # the one document's score maps to ``single``, no match to 0
            return self.single * value / self.mean if self.mean else 0.0
        return (value - self.mean) / self.spread


def rank_passages(
    ranker: Ranker,
    query: str,
    *,
    mode: Mode = "hybrid",
    config: PassageConfig | None = None,
    allowed: Collection[str] | None = None,
    where: Mapping[str, Any] | None = None,
) -> PassageRanking:
    """Chunks, pages and papers for ``query``, each best first (see the module docstring).
    ``allowed``/``where`` restrict the papers as in :meth:`Ranker.rank`."""
    config = config or PassageConfig()
    rank_config = ranker.config
    lexical: dict[str, float] = {}
    dense: dict[str, float] = {}
    similarity: dict[str, float] = {}
    lexical_ranks: dict[str, int] = {}
    dense_ranks: dict[str, int] = {}
    arxiv_of: dict[str, str] = {}
    scales: dict[str, _Scale] = {}
    tokens: list[str] = []
    use_lexical = mode in ("hybrid", "bm25") and ranker.lexical is not None
    use_dense = mode in ("hybrid", "dense") and ranker.dense is not None
    if use_lexical:
        assert ranker.lexical is not None
        tokens = ranker.lexical.tokenize([query])[0]
        for corpus in ("papers", "chunks"):
            found = ranker.lexical.search(corpus, tokens, k=rank_config.lexical_k, allowed=allowed)
            keys = [f"{h.arxiv_id}#{ABSTRACT}" if corpus == "papers" else h.doc_id for h in found]
            # The two corpora differ in size and statistics: each list is normalised alone, as
            # in the ranker (a list of one document counts as a clear match).
            raw = dict(zip(keys, (h.score for h in found), strict=True))
            scale = scales[corpus] = _Scale(raw.values(), single=1.0)
            for key, hit in zip(keys, found, strict=True):
                lexical[key] = scale.z(hit.score)
                lexical_ranks[key] = hit.rank
                arxiv_of[key] = hit.arxiv_id
    if use_dense:
        for near in ranker.dense_hits(query, rank_config.dense_k, where, None, allowed, []):
            key = f"{near.arxiv_id}#{ABSTRACT}" if near.kind == ABSTRACT else near.chunk_id
            similarity.setdefault(key, near.similarity)
            dense_ranks.setdefault(key, near.rank)
            arxiv_of[key] = near.arxiv_id
        scale = scales["dense"] = _Scale(similarity.values())
        dense = {key: scale.z(value) for key, value in similarity.items()}
    fused = _fuse(arxiv_of, lexical, dense, config)
    hits = set(fused)  # the first stage's: only they count for the bonus of several hits
    if config.rescore_papers > 0 and fused:
        exact = set(order(_paper_scores(fused, arxiv_of, hits, config))[: config.rescore_papers])
        _rescore(ranker, query, tokens, exact, scales, lexical, dense, similarity, arxiv_of, config)
        fused = _fuse(arxiv_of, lexical, dense, config)
    if config.neighbour_weight > 0:
        fused = _smooth(fused, config.neighbour_weight)
    details = chunk_texts(ranker, [k for k in fused if not k.endswith(f"#{ABSTRACT}")])
    passages = []
    for key in order(fused):
        start, end, section, text = details.get(key, (None, None, None, None))
        passages.append(
            Passage(
                key,
                arxiv_of[key],
                fused[key],
                start,
                end,
                section,
                text,
                lexical_ranks.get(key),
                dense_ranks.get(key),
                similarity.get(key),
            )
        )
    papers = _paper_scores(fused, arxiv_of, hits, config)
    per_page: dict[tuple[str, int], list[Passage]] = {}
    best_body: dict[str, float] = {}  # passages are best first: a paper's first body chunk is its best
    for passage in passages:
        if passage.page_start is not None:
            best_body.setdefault(passage.arxiv_id, passage.score)
    for passage in passages:
        if config.front_page and passage.page_start is None and passage.arxiv_id in best_body:
            # The catalogue's abstract is printed on the PDF's first page; it lifts that page at most
            # to just below the paper's best body chunk (the abstract and the body chunks are scored
            # on different scales).
            score = min(passage.score, best_body[passage.arxiv_id] - FRONT_MARGIN)
            front = replace(passage, score=score, page_start=1, page_end=1)
            per_page.setdefault((passage.arxiv_id, 1), []).append(front)
        for page in passage.pages:
            per_page.setdefault((passage.arxiv_id, page), []).append(passage)
    pages = [
        PageHit(
            arxiv_id,
            page,
            _bonus_score([p.score for p in found], sum(p.chunk_id in hits for p in found), config)
            + config.paper_weight * papers[arxiv_id],
            tuple(found),
        )
        for (arxiv_id, page), found in per_page.items()
    ]
    pages.sort(key=lambda p: (-p.score, p.arxiv_id, p.page))
    return PassageRanking(passages, pages, [(key, papers[key]) for key in order(papers)])


def _fuse(
    arxiv_of: Mapping[str, str],
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
    config: PassageConfig,
) -> dict[str, float]:
    """``(1 - w) * z_lexical + w * z_dense`` per chunk; a chunk missing from a list takes that list's
    lowest z (it ranked below everything the list returned)."""
    weight = config.dense_weight
    lexical_floor = min(lexical.values(), default=0.0)
    dense_floor = min(dense.values(), default=0.0)
    fused: dict[str, float] = {}
    for key in arxiv_of:
        score = 0.0
        if lexical:
            score += (1.0 - weight if dense else 1.0) * lexical.get(key, lexical_floor)
        if dense:
            score += (weight if lexical else 1.0) * dense.get(key, dense_floor)
        fused[key] = score
    return fused


def _paper_scores(
    fused: Mapping[str, float], arxiv_of: Mapping[str, str], hits: Collection[str], config: PassageConfig
) -> dict[str, float]:
    per_paper: dict[str, list[str]] = {}
    for key in fused:
        per_paper.setdefault(arxiv_of[key], []).append(key)
    return {
        arxiv_id: _bonus_score([fused[k] for k in keys], sum(k in hits for k in keys), config)
        for arxiv_id, keys in per_paper.items()
    }


def _rescore(
    ranker: Ranker,
    query: str,
    tokens: Sequence[str],
    papers: Collection[str],
    scales: Mapping[str, _Scale],
    lexical: dict[str, float],
    dense: dict[str, float],
    similarity: dict[str, float],
    arxiv_of: dict[str, str],
    config: PassageConfig,
) -> None:
    """Second stage: every chunk of ``papers`` gets its exact score in each list (the first stage
    saw only each list's global top k), on the first stage's scales."""
    if "dense" in scales and ranker.dense is not None:
        nearest = ranker.dense_hits(
            query, config.rescore_depth, {"arxiv_id": {"$in": sorted(papers)}}, None, papers, []
        )
        for near in nearest:
            key = f"{near.arxiv_id}#{ABSTRACT}" if near.kind == ABSTRACT else near.chunk_id
            similarity.setdefault(key, near.similarity)
            dense.setdefault(key, scales["dense"].z(near.similarity))
            arxiv_of[key] = near.arxiv_id
    if "chunks" in scales and ranker.lexical is not None:
        scale = scales["chunks"]
        for hit in ranker.lexical.search("chunks", tokens, k=config.rescore_depth, allowed=set(papers)):
            lexical[hit.doc_id] = scale.z(hit.score)
            arxiv_of[hit.doc_id] = hit.arxiv_id
        # A body chunk of these papers that BM25 did not return shares no term with the query.
        for key, arxiv_id in arxiv_of.items():
            if arxiv_id in papers and not key.endswith(f"#{ABSTRACT}"):
                lexical.setdefault(key, scale.z(0.0))


def _smooth(fused: Mapping[str, float], weight: float) -> dict[str, float]:
    """A body chunk moves ``weight`` of the way towards its better adjacent chunk (the one before
    or after it in the paper): an answer that straddles a chunk boundary is split across both."""
    out = dict(fused)
    for key, score in fused.items():
        try:
            arxiv_id, version, n = parse_chunk_id(key)
        except ValueError:  # a title + abstract chunk has no neighbours
            continue
        around = [fused.get(chunk_id(arxiv_id, version, m)) for m in (n - 1, n + 1) if m >= 1]
        best = max((s for s in around if s is not None), default=None)
        if best is not None and best > score:
            out[key] = score + weight * (best - score)
    return out


def chunk_texts(
    ranker: Ranker, chunk_ids: Sequence[str]
) -> dict[str, tuple[int | None, int | None, str | None, str]]:
    """Pages, section and text of body chunks: from the lexical index, or from Chroma for chunks
    indexed since the lexical index was last built."""
    found: dict[str, tuple[int | None, int | None, str | None, str]] = {}
    if ranker.lexical is not None:
        for key, known in ranker.lexical.chunks(list(chunk_ids)).items():
            found[key] = (known.page_start, known.page_end, known.section, known.text)
    missing = [key for key in chunk_ids if key not in found]
    if missing and ranker.dense is not None:
        try:
            stored = ranker.dense.store.get(missing)
        except StoreError:
            stored = []
        for chunk in stored:
            meta = chunk.metadata
            start, end, section = meta.get("page_start"), meta.get("page_end"), meta.get("section")
            found[chunk.id] = (
                start if isinstance(start, int) else None,
                end if isinstance(end, int) else None,
                str(section) if section else None,
                chunk.text,
            )
    return found
