"""Evidence for one question: chunks retrieved, judged, widened around their best sentence, key
quotes found, passages ordered by their quotes, trimmed and packed into the model's budget, keyed.

Retrieval's one call (:class:`retrieval.evidence.EvidenceSource`) ranks pages best first, each
page's chunks best first. Then, with no model involved:

1. **Evidence threshold**, judged per chunk (``docs/chat.md``): a chunk counts when it contains at least
   ``chat_min_term_coverage`` of the question's content words, each weighted by its rarity in the
   full text (IDF), or when its own cosine similarity to the question is at least
   ``chat_min_similarity``. Each page gives its best chunk that counts; at most ``chat_passages``
   chunks, page by page. None counts → the pipeline's fixed "these papers do not answer that".
2. **Widened**: a chunk whose best sentence (by the question's words) sits at its first or last
   sentence gets the neighbouring chunk of the same page beside it — an answer that straddles a
   chunk boundary ("h = 8 … heads." | "For each of these we use dk = 64.") is read whole.
   Chunks of one paper next to each other become one passage, their overlap written once.
3. **Key quotes** (:mod:`chat.quotes`): every sentence scored against the question; each passage's
   best (joined with its neighbour where it leans on it); the best few are the key quotes.
4. **Ordered and trimmed**: passages holding the best quotes first; with a sentence radius set (a
   small model reads less), each passage is cut to its best quote and that many sentences around it.
5. **Packed** best first while the texts fit the token budget; each passage gets an opaque key
   (``S1``…) that the server maps to its chunk ids, paper, version and pages.
6. **Key quotes shown** from every judged passage, not only the packed ones: the passage of a quote
   the model does not read is shown too, marked unread (the model cannot cite it).

Hidden text (white, tiny, invisible) never reaches a passage: the PDF parser sets it aside before
chunking (:mod:`ingest.pdf.extract`), so chunks hold only what a reader sees.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from catalog.urls import paper_path, reader_path
from chat.names import compounds, holds_compound, holds_name, names, plain
from chat.quotes import PER_PASSAGE, Quote, Scored, SentenceScorer, best_span, key_quotes, leans_back
from chat.sentences import split
from retrieval.embedder import Embedder
from retrieval.evidence import EvidenceChunk, EvidenceRanking, question_terms, terms
from retrieval.tokens import count_tokens
from settings import ChatSettings

CANDIDATE_PAGES = 30  # pages, best first, whose chunks are judged (the budget fills long before)
KEY_QUOTES = 3  # key quotes shown
LEAD_CHARS = 400  # of a cut passage's text before the cut, kept to tell what the passage is about
_SPACE = re.compile(r"\s+")
# Text in a passage that could pass for our own markup: a citation key or the passage markers.
_FORGED = re.compile(r"\[\s*S\d+\s*\]|<<<\s*PASSAGES|PASSAGES\s*>>>", re.IGNORECASE)
# The papers' own reference marks ("[15]", "[23, 24]", "[3-5]"). The small model copies them as its
# citation and then answers with no words, so the model reads its passages without them.
# A question that sets two things side by side may be answered from two papers.
_COMPARES = re.compile(r"\b(?:compar\w*|versus|vs\.?|differ\w*|better|worse|than)\b", re.IGNORECASE)
_REFERENCE_MARK = re.compile(r"\s?\[[1-9]\d{0,2}(?:\s*[,–-]\s*[1-9]\d{0,2})*\]")


def unmarked(text: str) -> str:
    """``text`` without the paper's numeric reference marks."""
    return _REFERENCE_MARK.sub("", text)


class Evidence(Protocol):
    """What chat needs of retrieval (:class:`retrieval.evidence.EvidenceSource`)."""

    def evidence(
        self, question: str, papers: Collection[str] | None, *, depth: int = 30
    ) -> EvidenceRanking: ...

    def chunks(self, like: EvidenceChunk, chunk_ids: Sequence[str]) -> dict[str, EvidenceChunk]: ...


@dataclass(frozen=True, slots=True)
class Budget:
    """How much the model reads: passage tokens, and (for a small model) the sentences kept either
    side of each passage's best quote (None: whole passages)."""

    tokens: int
    radius: int | None = None


@dataclass(frozen=True, slots=True)
class KeyedPassage:
    key: str  # "S1": all the model ever sees of where the text is from
    arxiv_id: str
    version: int | None
    title: str
    pages: tuple[int, ...]
    text: str
    chunk_ids: tuple[str, ...]
    kind: str  # "body"
    coverage: float  # share of the question's content words in the text
    pdf_url: str = ""  # the paper's PDF, without a page fragment
    read: bool = True  # given to the model (False: shown for a key quote only; the model cannot cite it)
    lead: str = ""  # the text just before ``text`` where it was cut from its chunks (for the claim check)

    @property
    def paper_url(self) -> str:
        return paper_path(self.arxiv_id, self.title)

    @property
    def page_url(self) -> str:
        """The PDF opened at the passage's first page (``…#page=N``)."""
        if not self.pdf_url:
            return ""
        return f"{self.pdf_url}#page={self.pages[0]}" if self.pages else self.pdf_url

    def reader_url(self, quote: str | None = None, page: int | None = None) -> str:
        """Our page reader at ``page`` (else the passage's first page), highlighting ``quote``;
        empty when the passage has no page (an abstract)."""
        page = page or (self.pages[0] if self.pages else None)
        return reader_path(self.arxiv_id, page, quote) if page else ""

    def to_json(self, n: int | None = None) -> dict[str, object]:
        return {
            "key": self.key,
            "n": n,
            "arxiv_id": self.arxiv_id,
            "title": self.title,
            "pages": list(self.pages),
            "quote": self.text,
            "paper_url": self.paper_url,
            "reader_url": self.reader_url(),
            "pdf_url": self.page_url,
            "read_by_model": self.read,
        }


@dataclass(frozen=True, slots=True)
class Gathered:
    passages: list[KeyedPassage]  # those the model reads first, then any shown for a key quote only
    quotes: list[Quote]  # best first; keys and offsets refer to ``passages``
    unnamed: str | None = None  # a name of the question no page of the evidence writes

    @property
    def read(self) -> list[KeyedPassage]:
        """The passages the model reads."""
        return [p for p in self.passages if p.read]


@dataclass(slots=True)
class _Piece:
    """Consecutive chunks of one paper, before keying."""

    chunks: dict[int, EvidenceChunk]  # by chunk number
    rank: int  # position in the page-by-page order
    coverage: float
    text: str = ""
    pages: tuple[int, ...] = ()
    scored: list[Scored] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.refresh()

    @property
    def first(self) -> EvidenceChunk:
        return self.chunks[min(self.chunks)]

    @property
    def paper(self) -> tuple[str, int | None]:
        return self.first.arxiv_id, self.first.version

    def refresh(self) -> None:
        ordered = [self.chunks[n] for n in sorted(self.chunks)]
        text = ""
        for chunk in ordered:
            body = _SPACE.sub(" ", chunk.text).strip()
            text = _overlap_join(text, body) if text else body
        self.text = text
        self.pages = tuple(sorted({p for c in ordered for p in c.pages}))

    def touches(self, other: _Piece) -> bool:
        if self.paper != other.paper:
            return False
        mine, theirs = set(self.chunks), set(other.chunks)
        return bool(mine & theirs) or min(theirs) == max(mine) + 1 or max(theirs) == min(mine) - 1


def coverage(question_terms: Collection[str], text: str, weights: Mapping[str, float] | None = None) -> float:
    """The share of the question's content words in ``text``, each word counted with its weight
    (default 1)."""
    wanted = set(question_terms)
    total = sum(weights.get(t, 1.0) for t in wanted) if weights else len(wanted)
    if total <= 0:
        return 0.0
    found = wanted & terms(text)
    return (sum(weights.get(t, 1.0) for t in found) if weights else len(found)) / total


def is_evidence(term_coverage: float, similarity: float | None, conf: ChatSettings) -> bool:
    """The evidence threshold for one chunk: enough of the question's words, or a close enough
    embedding (the chunk's own similarity; None when the embedding search did not return it)."""
    if term_coverage >= conf.chat_min_term_coverage:
        return True
    return similarity is not None and similarity >= conf.chat_min_similarity


def gather(
    source: Evidence,
    question: str,
    papers: Sequence[str] | None,
    conf: ChatSettings,
    budget: Budget,
    embedder: Embedder | None,
    first_key: int = 1,
) -> Gathered:
    """The evidence for ``question`` within ``papers`` (None or empty: the whole archive), keyed from
    ``S<first_key>`` (a follow-up's passages do not take the keys of those before); no passages when
    nothing clears the evidence threshold."""
    ranking = source.evidence(question, papers or None, depth=CANDIDATE_PAGES)
    wanted = question_terms(question)
    pieces = _judge(ranking, wanted, conf)
    if not pieces:
        return Gathered([], [])
    scorer = SentenceScorer(question, ranking.weights, embedder)
    pieces = _merge([_widen(source, piece, scorer) for piece in pieces])
    keyed_texts = [(str(i), p.text, p.pages) for i, p in enumerate(pieces)]
    quotes, scored = key_quotes(keyed_texts, scorer, most=len(pieces) * PER_PASSAGE, per_passage=PER_PASSAGE)
    own: dict[str, Quote] = {}  # each passage's best key quote (they come best first)
    for q in quotes:
        own.setdefault(q.key, q)
    for i, piece in enumerate(pieces):
        piece.scored = scored[str(i)]

    def best(i: int) -> float:
        quote = own.get(str(i))
        return max(quote.score, 0.0) if quote else 0.0

    # Passages holding the best quotes first; the page order breaks ties.
    order = sorted(range(len(pieces)), key=lambda i: (-best(i), pieces[i].rank))
    chosen = _pack([(pieces[i], own.get(str(i))) for i in order], budget, conf.chat_passages)
    passages: list[KeyedPassage] = []
    given: dict[int, tuple[KeyedPassage, int]] = {}  # piece → its passage and where its text starts
    for n, (piece, text, offset) in enumerate(chosen, start=first_key):
        passage = _keyed(f"S{n}", piece, text, coverage(wanted, text, ranking.weights))
        passage = replace(passage, lead=piece.text[max(0, offset - LEAD_CHARS) : offset])
        passages.append(passage)
        given[id(piece)] = passage, offset
    # The key quotes come from every passage that cleared the threshold, not only from those the
    # model reads (a small model reads few): a quote's passage the model does not read, or reads
    # cut short of the quote, is shown whole beside the others, keyed after them and marked
    # unread, so the model cannot cite it.
    found: list[Quote] = []
    unread: dict[int, KeyedPassage] = {}  # piece → its whole text, shown unread
    for quote in quotes:  # best first
        if len(found) == KEY_QUOTES:
            break
        piece = pieces[int(quote.key)]
        holder = given.get(id(piece))
        if holder is None or not (holder[1] <= quote.start and quote.end - holder[1] <= len(holder[0].text)):
            if id(piece) not in unread:
                key = f"S{first_key + len(passages)}"
                unread[id(piece)] = replace(_keyed(key, piece, piece.text, piece.coverage), read=False)
                passages.append(unread[id(piece)])
            holder = unread[id(piece)], 0
        shown, offset = holder
        found.append(replace(quote, key=shown.key, start=quote.start - offset, end=quote.end - offset))
    return Gathered(passages, found, unnamed(question, ranking))


def _pack(
    pieces: Sequence[tuple[_Piece, Quote | None]], budget: Budget, most: int
) -> list[tuple[_Piece, str, int]]:
    """In the order given, each piece's text (trimmed to the budget's radius) while the texts fit
    the token budget (a long one is passed over for a shorter; one of the first ``KEY_QUOTES``,
    whose quotes the reader sees first, is cut to its best key quote rather than passed over),
    at most ``most``: (piece, text, where the text starts in the piece's)."""
    chosen: list[tuple[_Piece, str, int]] = []
    used = 0
    for i, (piece, quote) in enumerate(pieces):
        text, offset = _trim(piece, budget.radius)
        cost = count_tokens(text)
        if used + cost > budget.tokens and chosen and i < KEY_QUOTES and quote is not None:
            text, offset = piece.text[quote.start : quote.end], quote.start
            cost = count_tokens(text)
        if used + cost > budget.tokens and chosen:
            continue
        chosen.append((piece, text, offset))
        used += cost
        if len(chosen) == most:
            break
    return chosen


def _keyed(key: str, piece: _Piece, text: str, share: float) -> KeyedPassage:
    first = piece.first
    return KeyedPassage(
        key=key,
        arxiv_id=first.arxiv_id,
        version=first.version,
        title=first.title,
        pages=piece.pages,
        text=text,
        chunk_ids=tuple(piece.chunks[c].chunk_id for c in sorted(piece.chunks)),
        kind="body",
        coverage=round(share, 3),
        pdf_url=first.pdf_url,
    )


def _judge(ranking: EvidenceRanking, wanted: set[str], conf: ChatSettings) -> list[_Piece]:
    """Page by page, each page's best chunk that clears the evidence threshold; a chunk spanning
    two pages is judged once."""
    pieces: list[_Piece] = []
    seen: set[str] = set()
    for page in ranking.pages:
        for chunk in page.chunks:
            if chunk.chunk_id in seen:
                continue
            seen.add(chunk.chunk_id)
            share = coverage(wanted, chunk.text, ranking.weights)
            if is_evidence(share, chunk.similarity, conf):
                pieces.append(_Piece({chunk.n: chunk}, len(pieces), share))
                break
        if len(pieces) == conf.chat_passages:
            break
    return pieces


def _widen(source: Evidence, piece: _Piece, scorer: SentenceScorer) -> _Piece:
    """The piece with its neighbouring chunk of the same page beside it when its best sentence (by
    the question's words) is the chunk's first or last."""
    sentences = split(piece.text)
    if len(sentences) < 2:
        steps = [-1, 1]
    else:
        scores = [scorer.words(s.text) + scorer.bonus(s.text) for s in sentences]
        top = max(range(len(sentences)), key=lambda i: scores[i])
        back = top == 0 or leans_back(sentences[0].text)
        steps = ([-1] if back else []) + ([1] if top == len(sentences) - 1 else [])
    if not steps:
        return piece
    first, last = min(piece.chunks), max(piece.chunks)
    wanted = {(-1): piece.chunks[first].neighbour_id(-1), 1: piece.chunks[last].neighbour_id(1)}
    found = source.chunks(piece.first, [wanted[s] for s in steps if first + s >= 1 or s > 0])
    for step in steps:
        neighbour = found.get(wanted[step])
        if neighbour is not None and set(neighbour.pages) & set(piece.pages):
            piece.chunks[neighbour.n] = neighbour
    piece.refresh()
    return piece


def _merge(pieces: Sequence[_Piece]) -> list[_Piece]:
    """Pieces of one paper that overlap or follow each other joined into the better-ranked one."""
    out: list[_Piece] = []
    for piece in pieces:
        for kept in out:
            if kept.touches(piece):
                kept.chunks.update(piece.chunks)
                kept.coverage = max(kept.coverage, piece.coverage)
                kept.refresh()
                break
        else:
            out.append(piece)
    return out


def _trim(piece: _Piece, radius: int | None) -> tuple[str, int]:
    """The piece's text, or (with a radius) its best quote and ``radius`` sentences either side;
    and where that text starts in the piece's."""
    if radius is None or not piece.scored:
        return piece.text, 0
    span = best_span(piece.scored)
    if span is None:
        return piece.text, 0
    first, last, _ = span
    lo, hi = max(0, first - radius), min(len(piece.scored) - 1, last + radius)
    start, end = piece.scored[lo].sentence.start, piece.scored[hi].sentence.end
    return piece.text[start:end], start


def _overlap_join(first: str, second: str, longest: int = 600) -> str:
    """``first`` then ``second``, writing once the text the end of one shares with the start of the
    other (chunks overlap by design)."""
    for size in range(min(longest, len(first), len(second)), 15, -1):
        if first.endswith(second[:size]):
            return first + second[size:]
    return f"{first} {second}"


# A name and its version apart or after a slash ("LLaMA 2", "ViT-B/8"): the pages may name the
# model, not this version.
_VERSIONED = re.compile(r"\b[A-Za-z][\w-]*[A-Z][\w-]*(?: \d{1,2}(?:\.\d)?|/\d+)(?![\w.%×/])")


_LOWER_SUFFIX = re.compile(r"(?<=\w)-[a-z]+$")


def unnamed(question: str, ranking: EvidenceRanking) -> str | None:
    """A name the question asks about ("ColBERTv2", "English-to-Japanese") that no page of the
    evidence writes, nor its paper's title: the pages match the question's other words but are
    about something else, and a model given them answers about that instead. Names written only in
    different papers are missing together ("CIFAR-100 together with Adam"): the question asks what
    one paper says of both — unless it compares them, which two papers may answer."""
    found = " ".join(f"{c.title} {c.text}" for page in ranking.pages for c in page.chunks)
    for name in [*_VERSIONED.findall(question), *compounds(question)]:
        if not holds_compound(found, name):
            return name
    # A capitalised word counts in mid-sentence only ("Lion", "Whisper"): at the start it is any word.
    inside = set(names(question))
    asked = []
    for written in names(question, anywhere=True):
        name = _LOWER_SUFFIX.sub("", written)  # "ELMo-based" asks about ELMo
        if (not plain(name) or written in inside) and not any(written in c for c in compounds(question)):
            if not holds_name(found, name):
                return name
            asked.append(name)
    if len(asked) < 2 or _COMPARES.search(question) or _joined(question, asked):
        return None
    titles = {page.arxiv_id: c.title for page in ranking.pages for c in page.chunks}
    texts: dict[str, str] = {}
    for page in ranking.pages:
        for c in page.chunks:
            texts[page.arxiv_id] = f"{texts.get(page.arxiv_id, c.title)} {c.text}"
    held = {paper: [n for n in asked if holds_name(text, n)] for paper, text in texts.items()}
    paper = max(held, key=lambda p: len(held[p]))
    if len(held[paper]) == len(asked):
        return None
    missing = next(n for n in asked if n not in held[paper])
    # Said beside what the question is about: a name of that paper's title, else the rarest.
    about = min(
        held[paper], key=lambda n: (not holds_name(titles[paper], n), sum(n in h for h in held.values()))
    )
    return f"{missing} together with {about}"


def _joined(question: str, asked: Sequence[str]) -> bool:
    """Whether two of the question's names stand side by side ("DPR and RAG", "BERT, ELMo"): the
    question is about each, and two papers may answer it."""
    pattern = "|".join(re.escape(n) for n in sorted(asked, key=len, reverse=True))
    return bool(re.search(rf"(?:{pattern})(?:-based)?\s*(?:,|/|&|\band\b|\bor\b)\s*(?:{pattern})", question))


def prompt_passages(passages: Sequence[KeyedPassage]) -> str:
    """The passages as the model reads them: key, paper and pages, then the text, which cannot
    forge a key or close the data block."""
    blocks = []
    for p in passages:
        pages = f", p. {p.pages[0]}" + (f"-{p.pages[-1]}" if len(p.pages) > 1 else "") if p.pages else ""
        text = _FORGED.sub(" ", unmarked(p.text))
        blocks.append(f"[{p.key}] {p.title}{pages}\n{text}")
    return "\n\n".join(blocks)
