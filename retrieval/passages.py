"""Passages for a question: chunks fused across retrievers, aggregated to pages and papers.

What chat packs into its context (and ``qa-retrieval`` measures). Search ranks *papers*; a question
needs the *page*, so fusion happens per chunk here:

1. **Chunk lists.** BM25 over full-text chunks, BM25 over paper records (title, abstract, authors;
   it stands for the paper's title + abstract chunk), and the dense k-NN over all chunks. Each
   list is z-normalised over its own hits (the scale the ranker's fusion uses).
2. **Chunk score** = ``(1 - w) * z_lexical + w * z_dense`` (``PassageConfig.dense_weight``); a
   chunk missing from a list takes that list's lowest z (it ranked below everything it returned).
3. **Page score** = the best chunk score on the page + ``page_bonus`` for each further chunk hit on
   it, at most ``max_bonus_hits`` of them: a page several retrieved chunks land on is likelier the
   answer, but one strong chunk still beats many weak ones. A chunk spanning two pages counts for
   both. Title + abstract chunks have no page (a PDF's abstract is on page 1, but the chunk comes
   from the catalogue).
4. **Paper score** = the best chunk score of the paper + the same bounded bonus over its other hit
   chunks. Pages are then ordered by their page score plus ``paper_weight`` times their paper's.

The result keeps every chunk's text, pages and section, so passages can be quoted and cited.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from retrieval.fusion import normalise, order
from retrieval.search import Mode, Ranker
from retrieval.store import StoreError

ABSTRACT = "abstract"


@dataclass(frozen=True, slots=True)
class PassageConfig:
    """Measured on the development questions (``evals/questions``, README): per chunk the dense
    side deserves less weight than per paper (body chunks embed worse than abstracts)."""

    dense_weight: float = 0.3  # the lexical side gets 1 - dense_weight
    page_bonus: float = 0.1  # per further chunk hit on the page (in z units of the fused score)
    max_bonus_hits: int = 2
    paper_weight: float = 0.3  # how much the paper's score lifts its pages


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


def _bonus_score(scores: Sequence[float], config: PassageConfig) -> float:
    ranked = sorted(scores, reverse=True)
    return ranked[0] + config.page_bonus * min(len(ranked) - 1, config.max_bonus_hits)


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
    if mode in ("hybrid", "bm25") and ranker.lexical is not None:
        tokens = ranker.lexical.tokenize([query])[0]
        for corpus in ("papers", "chunks"):
            hits = ranker.lexical.search(corpus, tokens, k=rank_config.lexical_k, allowed=allowed)
            keys = [f"{h.arxiv_id}#{ABSTRACT}" if corpus == "papers" else h.doc_id for h in hits]
            # The two corpora differ in size and statistics: each list is normalised alone, as
            # in the ranker (a list of one document counts as a clear match).
            scaled = (
                {keys[0]: 1.0}
                if len(hits) == 1
                else normalise(dict(zip(keys, (h.score for h in hits), strict=True)), "zscore")
            )
            for key, hit in zip(keys, hits, strict=True):
                lexical[key] = scaled[key]
                lexical_ranks[key] = hit.rank
                arxiv_of[key] = hit.arxiv_id
    if mode in ("hybrid", "dense") and ranker.dense is not None:
        for near in ranker.dense_hits(query, rank_config.dense_k, where, None, allowed, []):
            key = f"{near.arxiv_id}#{ABSTRACT}" if near.kind == ABSTRACT else near.chunk_id
            dense.setdefault(key, near.similarity)
            similarity.setdefault(key, near.similarity)
            dense_ranks.setdefault(key, near.rank)
            arxiv_of[key] = near.arxiv_id
        dense = normalise(dense, "zscore")
    weight = config.dense_weight
    fused: dict[str, float] = {}
    lexical_floor = min(lexical.values(), default=0.0)
    dense_floor = min(dense.values(), default=0.0)
    for key in arxiv_of:
        score = 0.0
        if lexical:
            score += (1.0 - weight if dense else 1.0) * lexical.get(key, lexical_floor)
        if dense:
            score += (weight if lexical else 1.0) * dense.get(key, dense_floor)
        fused[key] = score
    details = _details(ranker, [k for k in fused if not k.endswith(f"#{ABSTRACT}")])
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
    per_paper: dict[str, list[float]] = {}
    per_page: dict[tuple[str, int], list[Passage]] = {}
    for passage in passages:
        per_paper.setdefault(passage.arxiv_id, []).append(passage.score)
        for page in passage.pages:
            per_page.setdefault((passage.arxiv_id, page), []).append(passage)
    papers = {arxiv_id: _bonus_score(scores, config) for arxiv_id, scores in per_paper.items()}
    pages = [
        PageHit(
            arxiv_id,
            page,
            _bonus_score([p.score for p in found], config) + config.paper_weight * papers[arxiv_id],
            tuple(found),
        )
        for (arxiv_id, page), found in per_page.items()
    ]
    pages.sort(key=lambda p: (-p.score, p.arxiv_id, p.page))
    return PassageRanking(passages, pages, [(key, papers[key]) for key in order(papers)])


def _details(
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
