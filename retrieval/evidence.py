"""Retrieval's one interface for chat: a question and its scope → ranked, titled, paged chunks of
full text, with the question's term weights.

Chat never touches the ranker's parts or writes SQL: it asks :meth:`EvidenceSource.evidence` for the
ranking (pages best first, each page's chunks best first, every chunk with its paper's title and
PDF address) and :meth:`EvidenceSource.chunks` for the text of chunks next to the ones it took (to
widen a passage whose best sentence sits at a chunk's edge). :func:`terms` is the tokenizer both
sides count words with (the lexical index's: lower-cased, stop words out, Snowball-stemmed).

The ranking is :func:`retrieval.passages.rank_passages`, the one ``qa-retrieval`` measures.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import select

from catalog.models import Paper
from retrieval.lexical import Tokenizer
from retrieval.passages import PassageConfig, chunk_texts, rank_passages
from retrieval.search import SearchService
from retrieval.types import chunk_id, parse_chunk_id

_TOKENIZE = Tokenizer()
# Words that shape a question but say nothing about its subject (stems; the tokenizer's stop words
# already drop "the", "of"…): a passage need not contain "how" or "paper" to answer one.
QUESTION_WORDS = frozenset(
    [
        "who",
        "what",
        "did",
        "when",
        "how",
        "do",
        "mani",
        "where",
        "whose",
        "doe",
        "which",
        "whom",
        "whi",
        "much",
        "paper",
        "accord",
        "describ",
        "explain",
    ]
)


@functools.lru_cache(maxsize=16384)
def _stems(text: str) -> tuple[str, ...]:
    # Chat asks for the same sentences' words many times a turn (and the same passages recur
    # across turns); a tokenizer call costs far more than the lookup.
    return tuple(_TOKENIZE([text])[0])


def terms(text: str) -> set[str]:
    """Content words, stemmed (the lexical index's tokenizer)."""
    return set(_stems(text))


def term_list(text: str) -> list[str]:
    """Content words, stemmed, in order (repeats kept)."""
    return list(_stems(text))


def question_terms(question: str) -> set[str]:
    """The question's content words (stemmed), its interrogatives left out."""
    return terms(question) - QUESTION_WORDS


@dataclass(frozen=True, slots=True)
class EvidenceChunk:
    """One full-text chunk as chat may quote it."""

    chunk_id: str
    arxiv_id: str
    version: int | None
    n: int  # the chunk's number within the paper (1 is the first body chunk)
    title: str
    pdf_url: str  # the paper's PDF, without a page fragment ("" when unknown)
    pages: tuple[int, ...]
    section: str | None
    text: str
    similarity: float | None = None  # its own cosine to the question (None: not a dense hit)

    def neighbour_id(self, step: int) -> str:
        return chunk_id(self.arxiv_id, self.version, self.n + step)


@dataclass(frozen=True, slots=True)
class EvidencePage:
    """A ranked page with its full-text chunks (titled and paged; the abstract left out)."""

    arxiv_id: str
    page: int
    chunks: tuple[EvidenceChunk, ...]  # best first


@dataclass(frozen=True, slots=True)
class EvidenceRanking:
    """What retrieval offers chat for a question: its pages and the rarity of its words."""

    pages: list[EvidencePage]  # best first
    weights: dict[str, float]  # the question's content words → rarity in the full text (IDF)


class EvidenceSource:
    """Evidence over a :class:`SearchService` (its ranker, lexical index and catalogue)."""

    def __init__(self, search: SearchService, config: PassageConfig | None = None) -> None:
        self._search = search
        self._config = config

    def evidence(self, question: str, papers: Collection[str] | None, *, depth: int = 30) -> EvidenceRanking:
        """The first ``depth`` pages for ``question`` within ``papers`` (None: the whole archive)."""
        allowed = set(papers) if papers else None
        where = {"arxiv_id": {"$in": sorted(allowed)}} if allowed else None
        ranking = rank_passages(
            self._search.ranker, question, allowed=allowed, where=where, config=self._config
        )
        top = ranking.pages[:depth]
        meta = self._papers({page.arxiv_id for page in top})
        pages = []
        for page in top:
            if page.arxiv_id not in meta:
                continue
            title, pdf_url = meta[page.arxiv_id]
            chunks = []
            for hit in page.passages:
                if hit.chunk_id.endswith("#abstract") or not hit.text:
                    continue  # the abstract is the catalogue's; chat cites the full text's pages
                try:
                    _, version, n = parse_chunk_id(hit.chunk_id)
                except ValueError:
                    continue
                chunks.append(
                    EvidenceChunk(
                        hit.chunk_id,
                        hit.arxiv_id,
                        version or None,
                        n,
                        title,
                        pdf_url,
                        tuple(hit.pages),
                        hit.section,
                        hit.text,
                        hit.similarity,
                    )
                )
            if chunks:
                pages.append(EvidencePage(page.arxiv_id, page.page, tuple(chunks)))
        return EvidenceRanking(pages, self.weights(question_terms(question)))

    def chunks(self, like: EvidenceChunk, chunk_ids: Sequence[str]) -> dict[str, EvidenceChunk]:
        """These chunks of ``like``'s paper (e.g. its neighbours), with their text and pages;
        missing ones are left out."""
        found = {}
        for key, (start, end, section, text) in chunk_texts(self._search.ranker, chunk_ids).items():
            try:
                arxiv_id, version, n = parse_chunk_id(key)
            except ValueError:
                continue
            if arxiv_id != like.arxiv_id or start is None or not text:
                continue
            pages = tuple(range(start, (end or start) + 1))
            found[key] = EvidenceChunk(
                key, arxiv_id, version or None, n, like.title, like.pdf_url, pages, section, text
            )
        return found

    def weights(self, wanted: Collection[str]) -> dict[str, float]:
        """Each word's rarity in the full text (IDF over the lexical index's chunks): a name or
        number the papers seldom use ("Japanese", "LLaMA") weighs more than "model" or "train"."""
        lexical = self._search.ranker.lexical
        if lexical is None:
            return dict.fromkeys(wanted, 1.0)
        n, df = lexical.document_frequencies("chunks", list(wanted))
        return {t: math.log((n + 1) / (df[t] + 0.5)) for t in wanted}

    def _papers(self, ids: Collection[str]) -> dict[str, tuple[str, str]]:
        """Title and PDF address of each paper."""
        if not ids:
            return {}
        with self._search.sessions() as db:
            rows = db.execute(
                select(Paper.arxiv_id, Paper.title, Paper.pdf_url).where(Paper.arxiv_id.in_(sorted(ids)))
            )
            return {r.arxiv_id: (r.title, r.pdf_url or "") for r in rows}
