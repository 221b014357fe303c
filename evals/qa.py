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

- paper hit@1 / hit@5: the paper is the first / among the first five results;
- page hit@5: the paper is among the first five results and one of its gathered chunk hits (the
  snippet first) covers one of the pages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog import arxiv_ids
from catalog.db import is_migrated, make_engine, session_factory
from retrieval.dense import DenseRetriever
from retrieval.lexical import Bm25Params, LexicalIndex
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


@dataclass
class QaReport:
    questions: int = 0
    paper_hit_1: int = 0
    paper_hit_5: int = 0
    page_hit_5: int = 0
    outcomes: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        n = max(1, self.questions)
        return {
            "questions": self.questions,
            "paper_hit@1": round(self.paper_hit_1 / n, 4),
            "paper_hit@5": round(self.paper_hit_5 / n, 4),
            "page_hit@5": round(self.page_hit_5 / n, 4),
        }


def load(path: Path) -> list[Question]:
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text = str(record["question"]).strip()
            raw = record["arxiv_id"]
            paper = None if raw is None else arxiv_ids.canonical(str(raw))
            pages = tuple(int(p) for p in record.get("pages") or ())
            answer, quote = (record.get(key) for key in ("answer", "quote"))
            if not all(value is None or isinstance(value, str) for value in (answer, quote)):
                raise TypeError("answer and quote are text or null")
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise QaFileError(f"{path}:{number}: expected {{question, arxiv_id, pages}}: {exc}") from exc
        if not text:
            raise QaFileError(f"{path}:{number}: the question is empty")
        if paper is None and pages:
            raise QaFileError(f"{path}:{number}: an unanswerable question (arxiv_id null) has no pages")
        questions.append(Question(text, paper, pages, answer, quote))
    if not questions:
        raise QaFileError(f"{path} has no questions")
    return questions


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
    service, store = open_service(settings, config)
    report = QaReport()
    try:
        for q in questions:
            if q.arxiv_id is None:  # no paper answers it: nothing to find
                continue
            results = service.search(SearchRequest(q=q.question, size=5, mode=mode))
            ids = [hit.paper.arxiv_id for hit in results.hits]
            hit = next((h for h in results.hits if h.paper.arxiv_id == q.arxiv_id), None)
            pages_found: list[int] = []
            if hit is not None:
                for chunk in hit.chunks[:5]:
                    if chunk.page_start is not None:
                        pages_found += range(chunk.page_start, (chunk.page_end or chunk.page_start) + 1)
            page_hit = bool(set(pages_found) & set(q.pages))
            report.questions += 1
            report.paper_hit_1 += bool(ids[:1] == [q.arxiv_id])
            report.paper_hit_5 += q.arxiv_id in ids[:5]
            report.page_hit_5 += page_hit
            report.outcomes.append(
                {
                    "question": q.question,
                    "expected": q.arxiv_id,
                    "pages": list(q.pages),
                    "found": ids,
                    "pages_found": sorted(set(pages_found)),
                    "page_hit": page_hit,
                }
            )
    finally:
        store.close()
    return report
