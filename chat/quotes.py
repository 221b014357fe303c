"""Key quotes: the sentences of the evidence that answer the question, found without the LLM.

Every passage is split into sentences (:mod:`chat.sentences`) and each sentence is scored against
the question:

- **words**: the share of the question's content words (stemmed, interrogatives left out) the
  sentence holds, each weighted by its rarity in the full text (IDF, from retrieval) — a sentence
  with the question's distinctive word beats one with its common ones;
- **meaning**: the cosine between the question and the sentence (the bundled embedder), computed
  for the best sentences by words only, so the cost stays bounded however long the passages are;
- **numbers**: a question asking for a quantity ("how many", "what BLEU score") favours sentences
  stating a number, more so a number bound to one of the question's words ("h = 8 … heads"), and
  most a number counting the very thing asked for ("How many FLOPs …" → "3.8 billion FLOPs");
- **listings**: a reference-list entry or a title block (venues, "arXiv", addresses, years) shares
  the question's words without stating anything, and is scaled down.

A sentence that leans on the one before it ("For each of these we use …", "This gives …") or too
short to stand alone is joined with its neighbour, so the quote says what it is about. The best
quote of each passage competes with the others; the top few are the key quotes, each with its
passage key, pages and character offsets in the passage text.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chat.sentences import Sentence, split
from retrieval.embedder import Embedder, EmbedderError
from retrieval.evidence import question_terms, term_list, terms

log = logging.getLogger(__name__)

WORDS = 0.6  # weight of the words' share; the cosine gets the rest
NUMBER_BONUS = 0.08  # a quantity question and a sentence stating a number
BOUND_BONUS = 0.08  # … a number next to one of the question's words
NUMBERLESS = 0.6  # what a sentence without a number keeps of its score for a quantity question
EMBED_MOST = 32  # sentences (best by words) whose cosine is computed (64 ranked no quote higher)
JOIN_SHORT = 60  # a sentence shorter than this is joined with its better neighbour
NEAR = 3  # words either side of a number that it is bound to
ASKED_BONUS = 0.3  # … a number counting the very thing asked for ("3.8 billion FLOPs")
ASKED_NEAR = 2  # words between such a number and the thing it counts ("780 billion tokens")
GLOSS_NEAR = 6  # … or words to a gloss of it ("8 parallel attention layers, or heads")
PROSE = 0.6  # a sentence with a smaller share of real words (3+ letters) is scaled down
PER_PASSAGE = 2  # quotes one passage may give
RANK_PRIOR = 0.2  # retrieval's order: the first passage's quotes get this much more, the second half
WIDEN = 1  # sentences added either side of a quote, so it reads in context
_QUANTITY = re.compile(
    r"\bhow (?:many|much|large|long|deep|big|fast|far|high|wide|small|often|low)\b|\bby how\b|"
    r"\b(?:what|which) (?:\w+[ -]){0,3}?(?:value|score|accuracy|error|percentage|rate|size|dimension|"
    r"number|year|speed-?up|ratio|perplexity|bleu|f1|count|depth|width|length)s?\b|\bnumber of\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?:%|x|×)?(?![\w])|(?<![\w])\d+(?:\.\d+)?[kKMB]\b")
# What a quantity question counts: the words after "how many" up to its verb ("How many training
# tokens did …" → training tokens).
_ASKED = re.compile(
    r"\b(?:how (?:many|much)|number of)\s+((?:[\w-]+\s+){0,3}?[\w-]+?)\s+"
    r"(?:do|does|did|is|are|was|were|has|have|had|can|could|would|will|should|in|of|per|for|on|at|to|with)\b",
    re.IGNORECASE,
)
_COMPARED = re.compile(r"(?:fewer|more|less|greater|larger|smaller|times)\b", re.IGNORECASE)
# Numbers that state nothing: citation brackets ("[38, 2, 9]") and section numbers ("3.2.3").
_NOT_A_VALUE = re.compile(r"\[[\d,;\s–-]+\]|(?<![\w.])\d+(?:\.\d+){2,}(?![\w])|^\s*\d+(?:\.\d+)*\s+(?=[A-Z])")
# Marks of a reference list or a title block rather than prose that states something.
_LISTING = re.compile(
    r"arXiv(?: preprint)?|\bIn Proceedings\b|\bConference on\b|\bJournal of\b|\bpp\. ?\d|\bvol\. ?\d|"
    r"\bURL\b|https?://|\S+@\S+\.\w+|\bUniversity\b|\bInstitute\b|\b(?:19|20)\d\d[a-z]?\.",
)
LISTING = 0.3  # what a sentence with two or more such marks loses of its score
# Openings that lean on the sentence before ("For each of these we use dk = 64").
_LEANS_BACK = re.compile(
    r"^(?:for each of (?:these|them|those)|(?:this|these|those|it|they|such|here|thus|hence|therefore|"
    r"in (?:this|that|these) (?:case|way|setting)s?|as a result|in addition|moreover|furthermore|"
    r"similarly|likewise|however|in contrast)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Scored:
    key: str
    index: int  # the sentence's position in its passage
    sentence: Sentence
    words: float
    cosine: float
    bonus: float  # negative: a quantity question and no number (the score is scaled by NUMBERLESS)
    prose: float = 1.0  # how much of the sentence is words, not symbols (formulas, tables)
    listing: bool = False  # a reference-list entry or a title block

    @property
    def score(self) -> float:
        base = WORDS * self.words + (1 - WORDS) * self.cosine
        base *= min(1.0, self.prose / PROSE)
        base *= 1 - LISTING * self.listing
        return base * NUMBERLESS if self.bonus < 0 else base + self.bonus


@dataclass(frozen=True, slots=True)
class Quote:
    key: str  # the passage's key ("S1")
    text: str
    start: int  # character offsets in the passage's text
    end: int
    pages: tuple[int, ...]
    score: float

    def to_json(self, n: int | None = None) -> dict[str, object]:
        return {
            "key": self.key,
            "n": n,
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "pages": list(self.pages),
            "page": self.pages[0] if self.pages else None,
            "score": round(self.score, 3),
        }


_WORD = re.compile(r"[^\W\d_]{3,}")


def prose(text: str) -> float:
    """The share of the sentence's tokens that are words of three letters or more; none for a figure's
    axes ("1 2 3 4 5 6 7 Input patch row", "0 20 40 60 80 100 Mean attention distance"), whose
    labels read as words."""
    tokens = text.split()
    if not tokens or _axis(tokens):
        return 0.0
    return sum(bool(_WORD.fullmatch(t.strip(".,;:()[]\"'"))) for t in tokens) / len(tokens)


AXIS_TICKS = 4  # bare whole numbers in even steps that mark a figure's axis


def _axis(tokens: Sequence[str]) -> bool:
    """Whether the tokens hold an axis's ticks: ``AXIS_TICKS`` or more bare whole numbers in a row,
    rising by one even step ("0 5 10 15 20")."""
    run: list[int] = []
    for token in tokens:
        if not token.isdigit():
            run = []
            continue
        run = [*run, int(token)]
        if len(run) >= 2 and run[-1] - run[-2] != run[1] - run[0]:
            run = run[-2:]
        if len(run) >= AXIS_TICKS and run[1] > run[0]:
            return True
    return False


def leans_back(sentence: str) -> bool:
    """Whether the sentence leans on the one before it ("For each of these we use …")."""
    return bool(_LEANS_BACK.match(sentence))


def is_quantity_question(question: str) -> bool:
    return bool(_QUANTITY.search(question))


def asked_thing(question: str) -> set[str]:
    """The stem of the thing a quantity question counts ("How many training tokens …" → token);
    empty when the question names none or asks for a comparison."""
    match = _ASKED.search(question)
    if match is None or _COMPARED.match(match.group(1)):
        return set()  # "how many fewer steps" asks for a difference or a factor, not a count of steps
    return set(term_list(match.group(1))[-1:])


def counts(text: str, thing: set[str]) -> bool:
    """Whether a number in ``text`` is followed, within ``ASKED_NEAR`` words, by ``thing``, or by
    what it counts glossed as ``thing`` ("h = 8 parallel attention layers, or heads")."""
    words = _NOT_A_VALUE.sub(" ", text).split()
    for i, word in enumerate(words):
        if not _NUMBER.search(word):
            continue
        if terms(" ".join(words[i + 1 : i + 1 + ASKED_NEAR])) & thing:
            return True
        after = words[i + 1 : i + 1 + GLOSS_NEAR]
        for j in range(len(after) - 2):
            if after[j].endswith(",") and after[j + 1].lower() == "or" and terms(after[j + 2]) & thing:
                return True
    return False


def bound_numbers(text: str, wanted: set[str]) -> bool:
    """Whether a number in ``text`` stands within ``NEAR`` words of one of ``wanted`` (stems)."""
    words = _NOT_A_VALUE.sub(" ", text).split()
    for i, word in enumerate(words):
        if _NUMBER.search(word):
            around = " ".join(words[max(0, i - NEAR) : i] + words[i + 1 : i + 1 + NEAR])
            if terms(around) & wanted:
                return True
    return False


class SentenceScorer:
    """Scores sentences of keyed texts against one question."""

    def __init__(self, question: str, weights: Mapping[str, float], embedder: Embedder | None) -> None:
        self.question = question
        self.wanted = question_terms(question)
        self.weights = {t: max(weights.get(t, 1.0), 0.0) for t in self.wanted}
        self.total = sum(self.weights.values()) or float(len(self.wanted)) or 1.0
        self.quantity = is_quantity_question(question)
        self.asked = asked_thing(question) if self.quantity else set()
        self.embedder = embedder

    def words(self, text: str) -> float:
        found = self.wanted & set(term_list(text))
        if not self.weights or not found:
            return 0.0
        return sum(self.weights.get(t, 1.0) for t in found) / self.total

    def bonus(self, text: str) -> float:
        """For a quantity question: a bonus for a number (more for one bound to the question's
        words), -1 for none (the score is then scaled down); 0 for other questions."""
        if not self.quantity:
            return 0.0
        text = _NOT_A_VALUE.sub(" ", text)
        if not _NUMBER.search(text):
            return -1.0
        bonus = NUMBER_BONUS + (BOUND_BONUS if bound_numbers(text, self.wanted) else 0.0)
        return bonus + (ASKED_BONUS if self.asked and counts(text, self.asked) else 0.0)

    def score(self, texts: Sequence[tuple[str, str]]) -> dict[str, list[Scored]]:
        """Every sentence of each ``(key, text)``, scored; per key in reading order."""
        found: list[tuple[str, int, Sentence, float, float]] = []
        for key, text in texts:
            for i, sentence in enumerate(split(text)):
                found.append((key, i, sentence, self.words(sentence.text), self.bonus(sentence.text)))
        cosines = self._cosines(found)
        out: dict[str, list[Scored]] = {key: [] for key, _ in texts}
        for n, (key, i, sentence, words, bonus) in enumerate(found):
            listing = len(_LISTING.findall(sentence.text)) >= 2
            out[key].append(
                Scored(key, i, sentence, words, cosines.get(n, 0.0), bonus, prose(sentence.text), listing)
            )
        return out

    def _cosines(self, found: Sequence[tuple[str, int, Sentence, float, float]]) -> dict[int, float]:
        if self.embedder is None or not found:
            return {}
        best = sorted(range(len(found)), key=lambda n: -(found[n][3] + max(found[n][4], 0.0)))[:EMBED_MOST]
        try:
            vectors = self.embedder.embed([self.question, *(found[n][2].text for n in best)])
        except EmbedderError as exc:
            log.warning("key quotes without embeddings: %s", exc)
            return {}
        asked = vectors[0]
        return {
            n: max(0.0, sum(a * b for a, b in zip(asked, v, strict=True)))
            for n, v in zip(best, vectors[1:], strict=True)
        }


def best_span(
    scored: Sequence[Scored], passage: Sequence[Scored] | None = None
) -> tuple[int, int, float] | None:
    """The best sentence of one passage, joined with the one before when it leans on it or is too
    short to stand alone, and with the one after when that one leans on it: (first, last) sentence
    indexes and the score."""
    if not scored:
        return None
    every = passage if passage is not None else scored
    top = max(scored, key=lambda s: s.score)
    first = last = top.index
    if top.index > 0 and (leans_back(top.sentence.text) or len(top.sentence.text) < JOIN_SHORT):
        first -= 1
    elif len(top.sentence.text) < JOIN_SHORT and top.index + 1 < len(every):
        last += 1
    if last + 1 < len(every) and leans_back(every[last + 1].sentence.text) and every[last + 1].score > 0:
        last += 1
    return first, last, top.score


def key_quotes(
    texts: Sequence[tuple[str, str, tuple[int, ...]]],
    scorer: SentenceScorer,
    most: int = 3,
    per_passage: int = 1,
) -> tuple[list[Quote], dict[str, list[Scored]]]:
    """The ``most`` best quotes over ``(key, text, pages)`` (at most ``per_passage`` of each, not
    overlapping), best first, and every sentence's score (for trimming passages around quotes).
    ``texts`` come in retrieval's order, which breaks near ties (``RANK_PRIOR``)."""
    scored = scorer.score([(key, text) for key, text, _ in texts])
    quotes = []
    for rank, (key, text, pages) in enumerate(texts):
        prior = RANK_PRIOR / (1 + rank)
        taken: list[tuple[int, int]] = []
        for _ in range(per_passage):
            free = [s for s in scored[key] if not any(a <= s.index <= b for a, b in taken)]
            span = best_span(free, scored[key])
            if span is None:
                break
            first, last, score = span
            if score <= 0 or math.isnan(score):
                break
            every = scored[key]
            for _ in range(WIDEN):  # context either side, if it is prose (not a formula or a table)
                if first > 0 and every[first - 1].prose >= PROSE:
                    first -= 1
                if last + 1 < len(every) and every[last + 1].prose >= PROSE:
                    last += 1
            taken.append((first, last))
            start, end = scored[key][first].sentence.start, scored[key][last].sentence.end
            quotes.append(Quote(key, text[start:end], start, end, pages, score + prior))
    quotes.sort(key=lambda q: -q.score)
    return quotes[:most], scored
