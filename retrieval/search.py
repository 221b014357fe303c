"""Hybrid search over papers: lexical (BM25) + dense (MiniLM over Chroma, via llama-index), fused.

Two layers:

- :class:`Ranker` ranks *papers* for one query: BM25 over the papers corpus (title, abstract,
  authors) and over full-text chunks, and the dense k-NN over all chunks (title + abstract and
  body), each collapsed to its best-scoring document per paper, then fused (see
  :mod:`retrieval.fusion`). The evaluation harness measures exactly this.
- :class:`SearchService` is what the web app calls: it validates the query, turns filters into the
  set of allowed papers (catalogue) and a Chroma ``where`` clause, sorts, paginates, counts facets,
  and attaches each paper's chunk hits with the best one as the snippet (with its page).

No LLM is called anywhere in search.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from catalog.db import session_factory
from catalog.papers import count_papers
from catalog.researchers import researcher_name
from catalog.search_queries import (
    ResultPaper,
    SearchFilters,
    activity_dates,
    allowed_papers,
    category_counts,
    newest_matching,
    result_papers,
)
from catalog.text import scrub
from retrieval.dense import DenseHit, DenseRetriever
from retrieval.embedder import Embedder, EmbedderError
from retrieval.fusion import Method, Normalisation, Ranked, convex, normalise, order, rrf
from retrieval.lexical import LexicalHit, LexicalIndex, highlight_spans
from retrieval.store import ChunkStore, StoreError, date_key
from settings import SearchSettings, Settings

Mode = Literal["hybrid", "bm25", "dense"]
Sort = Literal["relevance", "newest"]
MODES: tuple[Mode, ...] = ("hybrid", "bm25", "dense")
SORTS: tuple[Sort, ...] = ("relevance", "newest")
# Chroma filters on a list of ids only up to this many; a larger filter over-fetches and post-filters.
MAX_WHERE_IDS = 500
MAX_OVERFETCH = 10
SNIPPET_CHARS = 320


class QueryError(ValueError):
    """A query or parameter the search cannot run; the message is for the person who sent it."""


@dataclass(frozen=True, slots=True)
class RankConfig:
    method: Method = "convex"
    dense_weight: float = 0.5  # the lexical list gets 1 - dense_weight
    normalisation: Normalisation = "minmax"
    rrf_k: float = 60.0
    lexical_k: int = 100  # documents per lexical corpus
    dense_k: int = 100  # chunks from the k-NN
    min_similarity: float = 0.0  # dense-only papers below this cosine similarity are dropped
    feedback_docs: int = 0  # pseudo-relevance feedback: abstracts of the best fused papers (0: off)
    feedback_weight: float = 0.5  # how far the query vector moves towards them


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """One chunk of a paper that a retriever found, with its ranks in each list."""

    chunk_id: str
    kind: str  # "abstract" | "body"
    page_start: int | None = None
    page_end: int | None = None
    section: str | None = None
    text: str | None = None
    lexical_rank: int | None = None
    dense_rank: int | None = None

    @property
    def best_rank(self) -> float:
        ranks = [r for r in (self.lexical_rank, self.dense_rank) if r is not None]
        # Found by both lists beats found by one: a chunk-level reciprocal-rank score.
        return -sum(1 / (60 + r) for r in ranks) if ranks else math.inf


@dataclass(frozen=True, slots=True)
class Candidate:
    arxiv_id: str
    score: float
    rank: int  # fused rank, 1-based
    lexical_rank: int | None = None
    lexical_score: float | None = None
    dense_rank: int | None = None
    dense_similarity: float | None = None
    chunks: tuple[ChunkHit, ...] = ()


@dataclass(frozen=True, slots=True)
class Ranking:
    candidates: list[Candidate]
    lexical_hits: int
    dense_hits: int
    notes: list[str] = field(default_factory=list)


class Ranker:
    """Ranks papers for a query. Either retriever may be missing (the service then says so)."""

    def __init__(
        self, lexical: LexicalIndex | None, dense: DenseRetriever | None, config: RankConfig
    ) -> None:
        self.lexical = lexical
        self.dense = dense
        self.config = config

    def rank(
        self,
        query: str,
        *,
        mode: Mode = "hybrid",
        allowed: Collection[str] | None = None,
        where: Mapping[str, Any] | None = None,
        dense_k: int | None = None,
        vector: Sequence[float] | None = None,
    ) -> Ranking:
        """Papers for ``query``, best first. ``allowed`` restricts to these papers (exactly);
        ``where`` is a Chroma filter implying ``allowed`` (it narrows the k-NN before ranking)."""
        config = self.config
        notes: list[str] = []
        chunk_hits: dict[str, dict[str, ChunkHit]] = {}
        lexical_scores: dict[str, float] = {}  # normalised per corpus; the best per paper
        lexical_raw: dict[str, float] = {}  # best raw BM25 score per paper (for the debug view)
        lexical_count = 0
        if mode in ("hybrid", "bm25"):
            if self.lexical is None:
                notes.append("the lexical index is not available; results may be incomplete")
            else:
                lexical_count = self._lexical(query, allowed, lexical_scores, lexical_raw, chunk_hits)
        hits: list[DenseHit] = []
        if mode in ("hybrid", "dense"):
            if self.dense is None:
                notes.append("the vector index is not available; results may be incomplete")
            else:
                hits = self.dense_hits(query, dense_k or config.dense_k, where, vector, allowed, notes)
        dense_scores = _best_per_paper(hits)
        fused = self._fuse(lexical_scores, dense_scores, mode)
        if mode == "hybrid" and config.feedback_docs and hits and self.dense is not None:
            # Pseudo-relevance feedback: move the query vector towards the abstracts of the best
            # fused papers (Rocchio) and search the embedding again; lexical scores stay as they are.
            start = list(vector) if vector is not None else self.dense.embed_query(query)
            best = order(fused)[: config.feedback_docs]
            try:
                moved = self.dense.feedback(start, best, config.feedback_weight)
            except StoreError as exc:  # the first k-NN's hits stand
                notes.append(f"pseudo-relevance feedback was skipped ({exc})")
                moved = None
            if moved is not None:
                hits = self.dense_hits(query, dense_k or config.dense_k, where, moved, allowed, notes)
                dense_scores = _best_per_paper(hits)
                fused = self._fuse(lexical_scores, dense_scores, mode)
        dense_count = len(hits)
        for dense_hit in hits:
            _add_chunk(chunk_hits, dense_hit.arxiv_id, _dense_chunk(dense_hit))
        lexical_ranks = Ranked(lexical_scores).ranks()
        dense_ranks = Ranked(dense_scores).ranks()
        # A paper only the embedding found, and only faintly, is noise (a nonsense query still has
        # nearest neighbours). Dropped after fusion, so the dense list is normalised whole.
        ranked = [
            key
            for key in order(fused)
            if key in lexical_scores or dense_scores.get(key, -1.0) >= config.min_similarity
        ]
        candidates = [
            Candidate(
                arxiv_id=key,
                score=fused[key],
                rank=rank,
                lexical_rank=lexical_ranks.get(key),
                lexical_score=lexical_raw.get(key),
                dense_rank=dense_ranks.get(key),
                dense_similarity=dense_scores.get(key),
                chunks=tuple(sorted(chunk_hits.get(key, {}).values(), key=lambda c: c.best_rank)),
            )
            for rank, key in enumerate(ranked, start=1)
        ]
        return Ranking(candidates, lexical_count, dense_count, notes)

    def dense_hits(
        self,
        query: str,
        k: int,
        where: Mapping[str, Any] | None,
        vector: Sequence[float] | None,
        allowed: Collection[str] | None,
        notes: list[str],
    ) -> list[DenseHit]:
        """The k-NN's chunk hits within ``allowed``; a failing store or embedder is a note, not an
        error (lexical results still answer the query)."""
        assert self.dense is not None
        try:
            hits = self.dense.search(query, k=k, where=where, vector=vector)
        except (StoreError, EmbedderError) as exc:  # lexical results still answer the query
            notes.append(f"the vector index did not answer ({exc}); results may be incomplete")
            return []
        return [h for h in hits if allowed is None or h.arxiv_id in allowed]

    def _fuse(self, lexical: dict[str, float], dense: dict[str, float], mode: Mode) -> dict[str, float]:
        config = self.config
        lists = []
        if lexical:
            lists.append(Ranked(lexical, 1.0 - config.dense_weight if mode == "hybrid" else 1.0))
        if dense:
            lists.append(Ranked(dense, config.dense_weight if mode == "hybrid" else 1.0))
        if config.method == "rrf":
            return rrf(lists, k=config.rrf_k)
        return convex(lists, how=config.normalisation)

    def _lexical(
        self,
        query: str,
        allowed: Collection[str] | None,
        scores: dict[str, float],
        raw: dict[str, float],
        chunk_hits: dict[str, dict[str, ChunkHit]],
    ) -> int:
        """BM25 over papers and over full-text chunks; a paper scores its best document. The two
        corpora differ in size and statistics, so raw BM25 scores are not comparable across them:
        each list is normalised first (a list of one document counts as a clear match, 1.0)."""
        assert self.lexical is not None
        tokens = self.lexical.tokenize([query])[0]
        papers = self.lexical.search("papers", tokens, k=self.config.lexical_k, allowed=allowed)
        chunks = self.lexical.search("chunks", tokens, k=self.config.lexical_k, allowed=allowed)
        for hits in (papers, chunks):
            if len(hits) == 1:
                normalised = {hits[0].doc_id: 1.0}
            else:
                normalised = normalise({h.doc_id: h.score for h in hits}, self.config.normalisation)
            for hit in hits:
                scores[hit.arxiv_id] = max(scores.get(hit.arxiv_id, -math.inf), normalised[hit.doc_id])
                raw[hit.arxiv_id] = max(raw.get(hit.arxiv_id, 0.0), hit.score)
        for hit in chunks:
            _add_chunk(chunk_hits, hit.arxiv_id, ChunkHit(hit.doc_id, "body", lexical_rank=hit.rank))
        for hit in papers:
            abstract = ChunkHit(f"{hit.arxiv_id}#abstract", "abstract", lexical_rank=hit.rank)
            _add_chunk(chunk_hits, hit.arxiv_id, abstract)
        return len(papers) + len(chunks)


def _best_per_paper(hits: Sequence[DenseHit]) -> dict[str, float]:
    best: dict[str, float] = {}
    for hit in hits:  # best first
        best.setdefault(hit.arxiv_id, hit.similarity)
    return best


def _dense_chunk(hit: DenseHit) -> ChunkHit:
    chunk_id = f"{hit.arxiv_id}#abstract" if hit.kind == "abstract" else hit.chunk_id
    return ChunkHit(
        chunk_id, hit.kind, hit.page_start, hit.page_end, hit.section, hit.text, dense_rank=hit.rank
    )


def _add_chunk(found: dict[str, dict[str, ChunkHit]], arxiv_id: str, hit: ChunkHit) -> None:
    """Merge what two lists know about the same chunk (the lexical rank and the dense rank)."""
    chunks = found.setdefault(arxiv_id, {})
    known = chunks.get(hit.chunk_id)
    if known is None:
        chunks[hit.chunk_id] = hit
        return
    chunks[hit.chunk_id] = replace(
        known,
        page_start=known.page_start if known.page_start is not None else hit.page_start,
        page_end=known.page_end if known.page_end is not None else hit.page_end,
        section=known.section or hit.section,
        text=known.text or hit.text,
        lexical_rank=known.lexical_rank if known.lexical_rank is not None else hit.lexical_rank,
        dense_rank=known.dense_rank if known.dense_rank is not None else hit.dense_rank,
    )


# -- the service the app calls ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchRequest:
    q: str = ""
    filters: SearchFilters = field(default_factory=SearchFilters)
    sort: Sort = "relevance"
    page: int = 1
    size: int = 10
    mode: Mode = "hybrid"


@dataclass(frozen=True, slots=True)
class Snippet:
    text: str
    highlights: list[tuple[int, int]]  # [start, end) character offsets of matched query words
    kind: str  # "abstract" | "body"
    page_start: int | None = None
    page_end: int | None = None
    section: str | None = None
    chunk_id: str | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    paper: ResultPaper
    rank: int  # position in this result list (1-based, across pages)
    score: float | None  # fused relevance; None when listing without a query
    fused_rank: int | None
    lexical_rank: int | None
    dense_rank: int | None
    snippet: Snippet | None
    chunks: list[ChunkHit]

    @property
    def pages(self) -> list[int]:
        """Pages of the full text where this paper matched."""
        found = {c.page_start for c in self.chunks if c.page_start is not None}
        return sorted(found)


@dataclass(frozen=True, slots=True)
class SearchResults:
    request: SearchRequest
    hits: list[SearchHit]
    total: int  # results available (capped at the result limit for queries)
    capped: bool
    facets: list[tuple[str, int]]
    terms: list[str]
    took_ms: float
    notes: list[str]
    researcher: str | None = None
    papers_in_catalogue: int = 0

    @property
    def page(self) -> int:
        return self.request.page

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.request.size))

    @property
    def has_next(self) -> bool:
        return self.request.page < self.pages

    @property
    def has_previous(self) -> bool:
        return self.request.page > 1


@dataclass(frozen=True, slots=True)
class ServiceLimits:
    max_query_chars: int = 300
    max_results: int = 200
    max_page_size: int = 50


_SPACE = re.compile(r"\s+")


def clean_query(raw: str, *, max_chars: int) -> str:
    """The query as searched: NUL bytes and lone surrogates removed, whitespace collapsed. Too
    long is an error (a truncated query would silently search for something else)."""
    text = _SPACE.sub(" ", scrub(raw)).strip()
    if len(text) > max_chars:
        raise QueryError(f"the query is {len(text)} characters long; the limit is {max_chars}")
    return text


def _filter_notes(filters: SearchFilters) -> list[str]:
    """What the person should know about filters that cannot match (an answer, not an error:
    each parameter is valid on its own)."""
    if filters.date_from and filters.date_to and filters.date_from > filters.date_to:
        return ["the date range is empty (`from` is after `to`), so no paper can match"]
    return []


class SearchService:
    """Search as the app serves it. It only reads the lexical index: the indexing worker writes it
    and keeps it in step with the catalogue."""

    def __init__(self, ranker: Ranker, sessions: sessionmaker[Session], limits: ServiceLimits) -> None:
        self.ranker = ranker
        self.sessions = sessions
        self.limits = limits

    def close(self) -> None:
        if self.ranker.lexical is not None:
            self.ranker.lexical.close()

    def validate(self, request: SearchRequest) -> SearchRequest:
        if request.mode not in MODES:
            raise QueryError(f"mode must be one of {', '.join(MODES)}")
        if request.sort not in SORTS:
            raise QueryError(f"sort must be one of {', '.join(SORTS)}")
        if request.page < 1:
            raise QueryError("page must be 1 or more")
        if not 1 <= request.size <= self.limits.max_page_size:
            raise QueryError(f"size must be between 1 and {self.limits.max_page_size}")
        # No query (after cleaning) lists the papers newest first, all of them without a filter.
        return replace(request, q=clean_query(request.q, max_chars=self.limits.max_query_chars))

    def search(self, request: SearchRequest) -> SearchResults:
        started = time.perf_counter()
        request = self.validate(request)
        with self.sessions() as session:
            researcher = (
                researcher_name(session, request.filters.researcher_id)
                if request.filters.researcher_id is not None
                else None
            )
            if not request.q:
                results = self._listing(session, request, researcher, started)
                results.notes.extend(_filter_notes(request.filters))
                return results
            allowed = allowed_papers(session, request.filters)
            notes: list[str] = []
            if allowed is not None and not allowed:
                candidates: list[Candidate] = []
            else:
                where, dense_k = self._dense_filter(request.filters, allowed, session)
                ranking = self.ranker.rank(
                    request.q, mode=request.mode, allowed=allowed, where=where, dense_k=dense_k
                )
                candidates, notes = ranking.candidates, ranking.notes
            notes = [*_filter_notes(request.filters), *notes]
            capped = len(candidates) > self.limits.max_results
            pool = candidates[: self.limits.max_results]
            if request.sort == "newest" and pool:
                dates = activity_dates(session, [c.arxiv_id for c in pool])
                pool = sorted(
                    pool, key=lambda c: (dates.get(c.arxiv_id) or dt.date.min, -c.rank), reverse=True
                )
            facets = category_counts(session, [c.arxiv_id for c in pool])
            start = (request.page - 1) * request.size
            page = pool[start : start + request.size]
            papers = result_papers(session, [c.arxiv_id for c in page])
            total_papers = count_papers(session)
        terms = self._terms(request.q)
        page = self._with_chunk_details(page)
        stems = set(terms)
        hits = []
        for position, candidate in enumerate(page, start=start + 1):
            paper = papers.get(candidate.arxiv_id)
            if paper is None:  # in an index but gone from the catalogue: not shown
                continue
            hits.append(
                SearchHit(
                    paper=paper,
                    rank=position,
                    score=candidate.score,
                    fused_rank=candidate.rank,
                    lexical_rank=candidate.lexical_rank,
                    dense_rank=candidate.dense_rank,
                    snippet=_snippet(paper, candidate, stems),
                    chunks=list(candidate.chunks),
                )
            )
        return SearchResults(
            request=request,
            hits=hits,
            total=len(pool),
            capped=capped,
            facets=facets,
            terms=terms,
            took_ms=(time.perf_counter() - started) * 1000,
            notes=notes,
            researcher=researcher,
            papers_in_catalogue=total_papers,
        )

    def _listing(
        self, session: Session, request: SearchRequest, researcher: str | None, started: float
    ) -> SearchResults:
        """No query: the papers the filters allow (every paper without one), newest first."""
        start = (request.page - 1) * request.size
        ids, total = newest_matching(session, request.filters, offset=start, limit=request.size)
        papers = result_papers(session, ids)
        allowed = allowed_papers(session, request.filters) or set()
        facets = category_counts(session, sorted(allowed)[: self.limits.max_results * 50])
        hits = [
            SearchHit(papers[i], position, None, None, None, None, _abstract_snippet(papers[i], ""), [])
            for position, i in enumerate(ids, start=start + 1)
            if i in papers
        ]
        return SearchResults(
            request=replace(request, sort="newest"),
            hits=hits,
            total=total,
            capped=False,
            facets=facets,
            terms=[],
            took_ms=(time.perf_counter() - started) * 1000,
            notes=[],
            researcher=researcher,
            papers_in_catalogue=count_papers(session),
        )

    def _dense_filter(
        self, filters: SearchFilters, allowed: set[str] | None, session: Session
    ) -> tuple[dict[str, Any] | None, int | None]:
        """A Chroma ``where`` for the filters and how many chunks to fetch. Small allowed sets are
        given to Chroma as ids (exact); otherwise the date range and an exact category go to Chroma
        and the rest is post-filtered, fetching more neighbours the more selective the filter."""
        if allowed is None:
            return None, None
        if len(allowed) <= MAX_WHERE_IDS:
            return {"arxiv_id": {"$in": sorted(allowed)}}, None
        clauses: list[dict[str, Any]] = []
        if filters.date_from:
            clauses.append({"date": {"$gte": date_key(filters.date_from)}})
        if filters.date_to:
            clauses.append({"date": {"$lte": date_key(filters.date_to)}})
        if filters.category and ("." in filters.category or "-" in filters.category):
            clauses.append({"category_list": {"$contains": filters.category}})
        where = clauses[0] if len(clauses) == 1 else ({"$and": clauses} if clauses else None)
        total = max(1, count_papers(session))
        factor = min(MAX_OVERFETCH, max(1, round(total / len(allowed)))) if where is None else 2
        return where, self.ranker.config.dense_k * factor

    def _terms(self, query: str) -> list[str]:
        lexical = self.ranker.lexical
        if lexical is None or not query:
            return []
        return sorted(set(lexical.tokenize([query])[0]))

    def chunk_details(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        """The candidates with their full-text chunk hits' text, pages and section (the chat's
        passages)."""
        return self._with_chunk_details(candidates)

    def _with_chunk_details(self, page: Sequence[Candidate]) -> list[Candidate]:
        """The shown papers' full-text chunk hits with their text, pages and section. Both retrievers
        return bare chunk ids (cheap for 100 hits); the details of the few shown come from the
        lexical index, or from Chroma for chunks indexed since the lexical index was last rebuilt."""
        wanted = [c.chunk_id for cand in page for c in cand.chunks if c.kind == "body"]
        if not wanted:
            return list(page)
        found: dict[str, ChunkHit] = {}
        if self.ranker.lexical is not None:
            for key, text in self.ranker.lexical.chunks(wanted).items():
                found[key] = ChunkHit(key, "body", text.page_start, text.page_end, text.section, text.text)
        missing = [key for key in wanted if key not in found]
        if missing and self.ranker.dense is not None:
            try:
                stored = self.ranker.dense.store.get(missing)
            except StoreError:
                stored = []  # the snippet falls back to the abstract
            for chunk in stored:
                meta = chunk.metadata
                section = meta.get("section")
                found[chunk.id] = ChunkHit(
                    chunk.id,
                    "body",
                    _int(meta.get("page_start")),
                    _int(meta.get("page_end")),
                    str(section) if section else None,
                    chunk.text,
                )
        return [
            replace(cand, chunks=tuple(_detailed(c, found.get(c.chunk_id)) for c in cand.chunks))
            for cand in page
        ]


def _detailed(hit: ChunkHit, details: ChunkHit | None) -> ChunkHit:
    if details is None:
        return hit
    return replace(
        hit,
        page_start=details.page_start,
        page_end=details.page_end,
        section=details.section,
        text=details.text,
    )


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _snippet(paper: ResultPaper, candidate: Candidate, query: Collection[str]) -> Snippet:
    """The best chunk hit of the paper, or its abstract."""
    for chunk in candidate.chunks[:1]:
        if chunk.kind == "body" and chunk.text:
            window, spans = _window(chunk.text, query)
            return Snippet(
                window, spans, "body", chunk.page_start, chunk.page_end, chunk.section, chunk.chunk_id
            )
    return _abstract_snippet(paper, query)


def _abstract_snippet(paper: ResultPaper, query: str | Collection[str]) -> Snippet:
    window, spans = _window(paper.abstract or paper.title, query)
    return Snippet(window, spans, "abstract")


def _window(
    text: str, query: str | Collection[str], size: int = SNIPPET_CHARS
) -> tuple[str, list[tuple[int, int]]]:
    """The ``size``-character stretch of ``text`` with the most query-word matches, cut at word
    boundaries, and the matches' offsets within it."""
    text = _SPACE.sub(" ", text).strip()
    spans = highlight_spans(text, query) if query else []
    if len(text) <= size:
        return text, spans
    best_start, best_count = 0, -1
    for start, _ in spans or [(0, 0)]:
        begin = max(0, start - size // 4)
        count = sum(1 for s, e in spans if begin <= s and e <= begin + size)
        if count > best_count:
            best_start, best_count = begin, count
    begin = text.rfind(" ", 0, best_start) + 1 if best_start else 0
    end = min(len(text), begin + size)
    if end < len(text):
        cut = text.rfind(" ", begin, end)
        end = cut if cut > begin else end
    prefix = "… " if begin > 0 else ""
    suffix = " …" if end < len(text) else ""
    window = prefix + text[begin:end] + suffix
    shift = len(prefix) - begin
    return window, [(s + shift, e + shift) for s, e in spans if begin <= s and e <= end]


def rank_config(settings: SearchSettings) -> RankConfig:
    return RankConfig(
        method=settings.search_fusion,
        dense_weight=settings.search_dense_weight,
        normalisation="zscore",
        rrf_k=settings.search_rrf_k,
        lexical_k=settings.search_candidates,
        dense_k=settings.search_candidates,
        min_similarity=settings.search_min_similarity,
        feedback_docs=settings.search_feedback_docs,
        feedback_weight=settings.search_feedback_weight,
    )


def open_search(
    settings: Settings, engine: Engine, store: ChunkStore | None, embedder: Embedder
) -> SearchService:
    """The search service for the app: the lexical index, dense retrieval over ``store`` and the
    configured fusion."""
    lexical = LexicalIndex.from_settings(settings)
    dense = DenseRetriever(store, embedder) if store is not None else None
    conf = settings.search
    limits = ServiceLimits(
        max_query_chars=conf.search_max_query_chars,
        max_results=conf.search_max_results,
        max_page_size=conf.search_max_page_size,
    )
    return SearchService(Ranker(lexical, dense, rank_config(conf)), session_factory(engine), limits)


__all__ = [
    "MODES",
    "SORTS",
    "Candidate",
    "ChunkHit",
    "LexicalHit",
    "Mode",
    "QueryError",
    "RankConfig",
    "Ranker",
    "Ranking",
    "SearchHit",
    "SearchRequest",
    "SearchResults",
    "SearchService",
    "ServiceLimits",
    "Snippet",
    "Sort",
    "open_search",
    "rank_config",
]
