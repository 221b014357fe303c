"""Question → paper and page retrieval against the ingested corpus (``qa-retrieval``).

Each line of the file is ``{"question": str, "arxiv_id": str | null, "pages": [int, ...], "answer":
str | null, "quote": str | null}``: a question whose answer is on those (1-based) pages of that
paper, with the answer and a verbatim quote from one of the pages (``answer`` and ``quote`` are
optional here; ``python -m evals check-questions`` finds every quote on its page). ``arxiv_id: null``
marks a question no paper answers: it is loaded (the chat eval uses it) and left out of retrieval
scores. Every question goes through the same
:class:`~retrieval.search.SearchService` the web app uses, over the configured catalogue, Chroma
and lexical index (read-only: an embedded Chroma is opened without taking the writer lock, so a
running app is not disturbed; vectors it adds after we open are not seen).

With ``--build`` the corpus is built by :mod:`evals.pages` instead (the 35 demo PDFs among
abstracts, cached) and pages are ranked by :func:`retrieval.passages.rank_passages`.

- paper hit@1 / hit@5: the paper is the first / among the first five results;
- page hit@1/@3/@5 and page MRR: over the ranked (paper, page) list, whether a gold page of the
  gold paper is among the first k, and 1/rank of the first one (0 beyond 20 pages).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from catalog import arxiv_ids
from catalog.db import is_migrated, make_engine, session_factory
from evals import jsonl, pages
from retrieval.dense import DenseRetriever
from retrieval.lexical import Bm25Params, LexicalIndex
from retrieval.passages import PassageConfig, rank_passages
from retrieval.search import Mode, RankConfig, Ranker, SearchRequest, SearchService, ServiceLimits
from retrieval.store import ChunkStore
from settings import Settings


class QaFileError(ValueError):
    """A line of the questions file is malformed; the message names the line."""


@dataclass(frozen=True, slots=True)
class Question:
    question: str
    arxiv_id: str | None  # None: no paper answers it
    pages: tuple[int, ...]
    answer: str | None = None
    quote: str | None = None


PAGE_DEPTH = 20  # pages looked at for the MRR of the first right page


@dataclass
class QaReport:
    """Paper hit@1/@5 and, over the ranked list of (paper, page) the retrieval yields, page
    hit@1/@3/@5 and the mean reciprocal rank of the first right page (0 beyond ``PAGE_DEPTH``)."""

    questions: int = 0
    paper_hit_1: int = 0
    paper_hit_5: int = 0
    page_hit: dict[int, int] = field(default_factory=lambda: {1: 0, 3: 0, 5: 0})
    page_rr: float = 0.0
    outcomes: list[dict[str, Any]] = field(default_factory=list)

    def add(self, q: Question, papers: Sequence[str], pages: Sequence[tuple[str, int]]) -> None:
        gold = {(q.arxiv_id, p) for p in q.pages}
        rank = next((n for n, page in enumerate(pages[:PAGE_DEPTH], start=1) if page in gold), None)
        self.questions += 1
        self.paper_hit_1 += bool(papers[:1] == [q.arxiv_id])
        self.paper_hit_5 += q.arxiv_id in papers[:5]
        for k in self.page_hit:
            self.page_hit[k] += rank is not None and rank <= k
        self.page_rr += 1 / rank if rank else 0.0
        self.outcomes.append(
            {
                "question": q.question,
                "expected": q.arxiv_id,
                "pages": list(q.pages),
                "found": list(papers[:5]),
                "pages_found": [f"{a}:{p}" for a, p in pages[:5]],
                "page_rank": rank,
            }
        )

    def to_json(self) -> dict[str, Any]:
        n = max(1, self.questions)
        return {
            "questions": self.questions,
            "paper_hit@1": round(self.paper_hit_1 / n, 4),
            "paper_hit@5": round(self.paper_hit_5 / n, 4),
            **{f"page_hit@{k}": round(v / n, 4) for k, v in self.page_hit.items()},
            "page_MRR": round(self.page_rr / n, 4),
        }


def pages_in_order(
    papers: Iterable[tuple[str, Iterable[tuple[int | None, int | None]]]],
) -> list[tuple[str, int]]:
    """(paper, page) in the order search shows them: papers in rank order, each paper's chunk hits
    in their order, every page a chunk spans, each (paper, page) once."""
    seen: dict[tuple[str, int], None] = {}
    for arxiv_id, spans in papers:
        for start, end in spans:
            if start is None:
                continue
            for page in range(start, (end or start) + 1):
                seen.setdefault((arxiv_id, page), None)
    return list(seen)


def _question(record: Any, _number: int) -> Question:
    text = str(record["question"]).strip()
    raw = record["arxiv_id"]
    paper = None if raw is None else arxiv_ids.canonical(str(raw))
    pages = tuple(int(p) for p in record.get("pages") or ())
    answer, quote = (record.get(key) for key in ("answer", "quote"))
    if not all(value is None or isinstance(value, str) for value in (answer, quote)):
        raise TypeError("answer and quote are text or null")
    if not text:
        raise jsonl.Rejected("the question is empty")
    if paper is None and pages:
        raise jsonl.Rejected("an unanswerable question (arxiv_id null) has no pages")
    return Question(text, paper, pages, answer, quote)


def load(path: Path) -> list[Question]:
    expected = "{question, arxiv_id, pages}"
    return jsonl.load(path, _question, expected=expected, error=QaFileError, noun="questions")


def open_service(settings: Settings, config: RankConfig) -> tuple[SearchService, ChunkStore]:
    from indexing.wiring import index_name
    from retrieval.embedder import make_embedder

    embedder = make_embedder(settings)
    name = index_name(settings, embedder)
    if settings.chroma.chroma_host:
        store = ChunkStore.server(
            settings.chroma.chroma_host, settings.chroma.chroma_port, name=name, dim=embedder.dim
        )
    else:
        store = ChunkStore(name=name, dim=embedder.dim, path=settings.chroma_path, lock=False)
    lexical = LexicalIndex(
        settings.core.data_dir / "lexical",
        params=Bm25Params(k1=settings.search.lexical_k1, b=settings.search.lexical_b),
    )
    engine = make_engine(settings.database_url)
    if not is_migrated(engine):
        raise QaFileError(
            f"there is no catalogue at {settings.database_url}: ingest papers first (`make run`, or "
            "`python -m ingest demo` and `python -m indexing pdfs DIR`), or set WOVEPAPER_DATA_DIR"
        )
    ranker = Ranker(lexical, DenseRetriever(store, embedder), config)
    limits = ServiceLimits(max_query_chars=10_000, max_results=50, max_page_size=50)
    return SearchService(ranker, session_factory(engine), limits), store


def run(questions: list[Question], *, settings: Settings, mode: Mode, config: RankConfig) -> QaReport:
    """The questions through the app's search service over the configured corpus (pages from the
    first five papers' chunk hits, in the order search shows them)."""
    service, store = open_service(settings, config)
    report = QaReport()
    try:
        for q in questions:
            if q.arxiv_id is None:  # no paper answers it: nothing to find
                continue
            results = service.search(SearchRequest(q=q.question, size=5, mode=mode))
            papers = [hit.paper.arxiv_id for hit in results.hits]
            spans = [
                (hit.paper.arxiv_id, [(c.page_start, c.page_end) for c in hit.chunks]) for hit in results.hits
            ]
            report.add(q, papers, pages_in_order(spans))
    finally:
        store.close()
    return report


def run_built(
    questions: list[Question], index: pages.PagesIndex, *, mode: Mode, config: RankConfig
) -> QaReport:
    """The questions against the corpus of :mod:`evals.pages`: papers from the ranker, pages as
    search shows them (papers in order, each paper's chunk hits in order)."""
    ranker = Ranker(index.lexical, index.dense, config)
    chunks = index.corpus.chunks
    report = QaReport()
    for q in questions:
        if q.arxiv_id is None:
            continue
        ranking = ranker.rank(q.question, mode=mode)
        papers = [c.arxiv_id for c in ranking.candidates]
        spans = []
        for cand in ranking.candidates[:5]:
            found = [chunks.get(c.chunk_id) for c in cand.chunks]
            spans.append((cand.arxiv_id, [(c.page_start, c.page_end) for c in found if c is not None]))
        report.add(q, papers, pages_in_order(spans))
    return report


def run_passages(
    questions: list[Question],
    index: pages.PagesIndex,
    *,
    mode: Mode,
    config: RankConfig,
    passage_config: PassageConfig | None = None,
    papers_from: Literal["ranker", "passages"] = "ranker",
) -> QaReport:
    """The questions against the corpus of :mod:`evals.pages`, pages from
    :func:`retrieval.passages.rank_passages`; papers from the ranker (search's order) or from the
    passages' paper aggregation."""
    ranker = Ranker(index.lexical, index.dense, config)
    report = QaReport()
    for q in questions:
        if q.arxiv_id is None:
            continue
        ranking = rank_passages(ranker, q.question, mode=mode, config=passage_config)
        if papers_from == "ranker":
            papers = [c.arxiv_id for c in ranker.rank(q.question, mode=mode).candidates]
        else:
            papers = [arxiv_id for arxiv_id, _ in ranking.papers]
        report.add(q, papers, [(p.arxiv_id, p.page) for p in ranking.pages])
    return report
