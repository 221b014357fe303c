"""Passages for one question: retrieved, judged as evidence, packed into a token budget, keyed.

Retrieval is the page-aware ranking of :func:`retrieval.passages.rank_passages` (the one
``qa-retrieval`` measures): full-text chunks scored by fused lexical and dense z-scores, aggregated
to pages (the best chunk plus a bounded bonus for further hits) and ordered by page score plus a
share of the paper's. The scope (``papers``) restricts both retrievers. Passages are taken **page
by page** in that order, each page's chunks best first:

- **Evidence threshold** (documented in the README), judged per chunk: a chunk counts when it
  contains at least ``chat_min_term_coverage`` of the question's content words (stemmed, stop words
  and interrogatives such as "how" or "which" ignored, as the lexical index matches them), each
  word weighted by its rarity in the full text (IDF over the lexical index's chunks), or when
  its *own* cosine similarity to the question (the embedding search's, not its paper's best chunk)
  is at least ``chat_min_similarity``. No chunk clears it → the pipeline gives the fixed "these
  papers do not answer that" answer without calling the model.
- **Budget**: chunks are taken in that order while their text fits ``chat_passage_tokens``
  (cl100k tokens, :mod:`retrieval.tokens`), at most ``chat_passages`` of them.
- **Neighbours merged**: chunks of one paper next to each other (consecutive chunk numbers, touching
  pages) become one passage, their overlap written once.
- **Keys**: each passage gets an opaque key (``S1``, ``S2``…) that the server maps to its chunk
  ids, paper, version and pages; the model sees only the key.

Hidden text (white, tiny, invisible) never reaches a passage: the PDF parser sets it aside before
chunking (:mod:`ingest.pdf.extract`), so chunks hold only what a reader sees.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from catalog.models import Paper
from catalog.queries import paper_path
from retrieval.lexical import Tokenizer
from retrieval.passages import Passage as Chunk
from retrieval.passages import rank_passages
from retrieval.search import SearchService
from retrieval.tokens import count_tokens
from retrieval.types import parse_chunk_id
from settings import ChatSettings

CANDIDATE_PAGES = 30  # pages, best first, whose chunks are judged (the budget fills long before)
CHUNKS_PER_PAGE = 1  # a page's best chunk: more pages in the budget beat more of one page (README)
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
_SPACE = re.compile(r"\s+")
# Text in a passage that could pass for our own markup: a citation key or the passage markers.
_FORGED = re.compile(r"\[\s*S\d+\s*\]|<<<\s*PASSAGES|PASSAGES\s*>>>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Passage:
    key: str  # "S1": all the model ever sees of where the text is from
    arxiv_id: str
    version: int | None
    title: str
    pages: tuple[int, ...]
    text: str
    chunk_ids: tuple[str, ...]
    kind: str  # "body" | "abstract"
    coverage: float  # share of the question's content words in the text
    pdf_url: str = ""  # the paper's PDF, without a page fragment

    @property
    def paper_url(self) -> str:
        return paper_path(self.arxiv_id, self.title)

    @property
    def page_url(self) -> str:
        """The PDF opened at the passage's first page (``…#page=N``)."""
        if not self.pdf_url:
            return ""
        return f"{self.pdf_url}#page={self.pages[0]}" if self.pages else self.pdf_url

    def to_json(self, n: int | None = None) -> dict[str, object]:
        return {
            "key": self.key,
            "n": n,
            "arxiv_id": self.arxiv_id,
            "title": self.title,
            "pages": list(self.pages),
            "quote": self.text,
            "paper_url": self.paper_url,
            "pdf_url": self.page_url,
        }


@dataclass(slots=True)
class _Piece:
    """A chunk hit with its text, before merging and keying."""

    chunk_id: str
    arxiv_id: str
    version: int | None
    n: int
    kind: str
    pages: tuple[int, ...]
    text: str
    coverage: float
    rank: int  # position in the best-first order
    merged: list[str] = field(default_factory=list)


def terms(text: str) -> set[str]:
    """Content words, stemmed (the lexical index's tokenizer)."""
    return set(_TOKENIZE([text])[0])


def question_terms(question: str) -> set[str]:
    """The question's content words (stemmed), its interrogatives left out."""
    return terms(question) - QUESTION_WORDS


def coverage(question_terms: Collection[str], text: str, weights: Mapping[str, float] | None = None) -> float:
    """The share of the question's content words in ``text``, each word counted with its weight
    (default 1)."""
    wanted = set(question_terms)
    total = sum(weights.get(t, 1.0) for t in wanted) if weights else len(wanted)
    if total <= 0:
        return 0.0
    found = wanted & terms(text)
    return (sum(weights.get(t, 1.0) for t in found) if weights else len(found)) / total


def term_weights(search: SearchService, wanted: Collection[str]) -> dict[str, float]:
    """Each question word's rarity in the full text (IDF over the lexical index's chunks): a name
    or number the papers seldom use ("Japanese", "LLaMA") weighs more than "model" or "train", so
    a passage missing the question's distinctive word is not taken for an answer."""
    lexical = search.ranker.lexical
    if lexical is None:
        return dict.fromkeys(wanted, 1.0)
    n, df = lexical.document_frequencies("chunks", list(wanted))
    return {t: math.log((n + 1) / (df[t] + 0.5)) for t in wanted}


def retrieve(
    search: SearchService, question: str, papers: Sequence[str] | None, conf: ChatSettings
) -> list[Passage]:
    """The evidence passages for ``question`` within ``papers`` (None: the whole archive), keyed
    ``S1…`` page by page, best page first; empty when nothing clears the evidence threshold."""
    allowed = set(papers) if papers else None
    where = {"arxiv_id": {"$in": sorted(allowed)}} if allowed else None
    ranking = rank_passages(search.ranker, question, allowed=allowed, where=where)
    pages = ranking.pages[:CANDIDATE_PAGES]
    wanted = question_terms(question)
    weights = term_weights(search, wanted)
    with search.sessions() as db:
        meta = _papers(db, list(dict.fromkeys(page.arxiv_id for page in pages)))
    pieces: list[_Piece] = []
    seen: set[str] = set()
    for page in pages:
        if page.arxiv_id not in meta:
            continue
        taken = 0
        for chunk in page.passages:  # best first; a chunk spanning two pages is taken once
            if taken == CHUNKS_PER_PAGE:
                break
            if chunk.chunk_id in seen:
                continue
            seen.add(chunk.chunk_id)
            piece = _piece(chunk, len(pieces))
            if piece is None:
                continue
            piece.coverage = coverage(wanted, piece.text, weights)
            if is_evidence(piece.coverage, chunk.similarity, conf):
                pieces.append(piece)
                taken += 1
    chosen = _pack(pieces, conf.chat_passage_tokens, conf.chat_passages)
    merged = _merge(chosen)
    return [
        Passage(
            key=f"S{i}",
            arxiv_id=p.arxiv_id,
            version=p.version,
            title=meta[p.arxiv_id][0],
            pages=p.pages,
            text=p.text,
            chunk_ids=(p.chunk_id, *p.merged),
            kind=p.kind,
            coverage=round(p.coverage, 3),
            pdf_url=meta[p.arxiv_id][1],
        )
        for i, p in enumerate(merged, start=1)
    ]


def is_evidence(term_coverage: float, similarity: float | None, conf: ChatSettings) -> bool:
    """The evidence threshold for one chunk: enough of the question's words, or a close enough
    embedding (the chunk's own similarity; None when the embedding search did not return it)."""
    if term_coverage >= conf.chat_min_term_coverage:
        return True
    return similarity is not None and similarity >= conf.chat_min_similarity


def _papers(db: Session, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Title and PDF address of each paper."""
    if not ids:
        return {}
    rows = db.execute(select(Paper.arxiv_id, Paper.title, Paper.pdf_url).where(Paper.arxiv_id.in_(ids)))
    return {r.arxiv_id: (r.title, r.pdf_url or "") for r in rows}


def _piece(chunk: Chunk, rank: int) -> _Piece | None:
    if chunk.chunk_id.endswith("#abstract") or not chunk.text:
        return None  # the abstract is in the catalogue; the chat cites the full text's pages
    try:
        arxiv_id, version, n = parse_chunk_id(chunk.chunk_id)
    except ValueError:
        return None
    text = _SPACE.sub(" ", chunk.text).strip()
    return _Piece(chunk.chunk_id, arxiv_id, version or None, n, "body", tuple(chunk.pages), text, 0.0, rank)


def _pack(pieces: Sequence[_Piece], budget: int, most: int) -> list[_Piece]:
    """Best first while the text fits the token budget (a long one is passed over for a shorter)."""
    chosen, used = [], 0
    for piece in pieces:
        cost = count_tokens(piece.text)
        if used + cost > budget:
            continue
        chosen.append(piece)
        used += cost
        if len(chosen) == most:
            break
    return chosen


def _merge(pieces: Sequence[_Piece]) -> list[_Piece]:
    """Join chunks of one paper that follow each other (consecutive numbers, touching pages) into
    the better-ranked one, in reading order and without their overlap."""
    out: list[_Piece] = []
    for piece in pieces:
        for kept in out:
            if _neighbours(kept, piece):
                _join(kept, piece)
                break
        else:
            out.append(
                _Piece(
                    piece.chunk_id,
                    piece.arxiv_id,
                    piece.version,
                    piece.n,
                    piece.kind,
                    piece.pages,
                    piece.text,
                    piece.coverage,
                    piece.rank,
                )
            )
    return out


def _numbers(piece: _Piece) -> list[int]:
    return [piece.n, *(parse_chunk_id(c)[2] for c in piece.merged)]


def _neighbours(kept: _Piece, piece: _Piece) -> bool:
    if (kept.arxiv_id, kept.version) != (piece.arxiv_id, piece.version) or kept.kind != piece.kind:
        return False
    numbers = _numbers(kept)
    if piece.n not in (min(numbers) - 1, max(numbers) + 1):
        return False
    if not kept.pages or not piece.pages:
        return True
    return piece.pages[0] <= kept.pages[-1] + 1 and kept.pages[0] <= piece.pages[-1] + 1


def _join(kept: _Piece, piece: _Piece) -> None:
    if piece.n < min(_numbers(kept)):
        kept.text = _overlap_join(piece.text, kept.text)
    else:
        kept.text = _overlap_join(kept.text, piece.text)
    kept.merged.append(piece.chunk_id)
    kept.pages = tuple(sorted(set(kept.pages) | set(piece.pages)))
    kept.coverage = max(kept.coverage, piece.coverage)


def _overlap_join(first: str, second: str, longest: int = 600) -> str:
    """``first`` then ``second``, writing once the text the end of one shares with the start of the
    other (chunks overlap by design)."""
    for size in range(min(longest, len(first), len(second)), 15, -1):
        if first.endswith(second[:size]):
            return first + second[size:]
    return f"{first} {second}"


def prompt_passages(passages: Sequence[Passage]) -> str:
    """The passages as the model reads them: key, paper and pages, then the text, which cannot
    forge a key or close the data block."""
    blocks = []
    for p in passages:
        pages = f", p. {p.pages[0]}" + (f"-{p.pages[-1]}" if len(p.pages) > 1 else "") if p.pages else ""
        text = _FORGED.sub(" ", p.text)
        blocks.append(f"[{p.key}] {p.title}{pages}\n{text}")
    return "\n\n".join(blocks)
