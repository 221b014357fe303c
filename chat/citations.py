"""Citations the code checks: the model may cite only the keys it was given.

- :class:`KeyFilter` rewrites the model's stream as it arrives: a given key (``[S2]``) becomes its
  reference number (``[1]``, numbered in order of first citation), any other bracketed key or
  number (an invented ``[S9]``, a bare ``[3]``) is removed; a key split across deltas (``[S`` +
  ``2]``) is held back until it is complete.
- :func:`verify` checks the finished answer: every sentence is attributed, after the fact, to the
  given passage that supports it best (a citation is added when the sentence cites none or none
  that supports it; no passage supporting it flags the sentence); a sentence that stands also cites
  the next given passage that states it (a second place to check it); numbers found in no cited
  passage are flagged, and so is a quotation that is not verbatim in a cited passage. The
  references are built here, from the passages, never from the model's text. An answer that ends
  up citing nothing is marked ``unsupported``.

**Support** of a sentence by a passage (post-hoc attribution in the spirit of citation correction):
the lexical overlap (share of the sentence's stemmed content words the passage contains) and, when
an embedder is given (the search's own, :class:`retrieval.embedder.Embedder`), the embedding
overlap (the highest cosine similarity between the sentence and one of the passage's sentences),
averaged: ``(lexical + cosine) / 2 >= SUPPORT``. A paraphrase that shares few words but says what
the passage says is attributed; a sentence that reuses a passage's words to say something else is
not. Without an embedder (or when it fails) the lexical overlap alone is compared with ``SUPPORT``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from chat.claims import ClaimCheck, check_claims
from chat.context import KeyedPassage, unmarked
from chat.quotes import Quote
from retrieval.embedder import Embedder, EmbedderError
from retrieval.evidence import terms

log = logging.getLogger(__name__)

# A bracketed citation list: "[S1]", "[S1, S3]", "[2]", "[S1; S2]".
_GROUP = re.compile(r"\[\s*((?:S?\d+)(?:\s*[,;]\s*S?\d+)*)\s*\]", re.IGNORECASE)
_ITEM = re.compile(r"S?\d+", re.IGNORECASE)
# What an unfinished citation looks like at the end of the text received so far.
_OPEN = re.compile(r"\[\s*(?:S?\d*(?:\s*[,;]\s*S?\d*)*)?\s*$", re.IGNORECASE)
_HOLD_MAX = 40
_NUMBERED = re.compile(r"\[(\d+)\]")
_CITATION = re.compile(r"\s*\[\d+\]")  # a rendered citation and the space before it
_QUOTE = re.compile(r"[\"“”]([^\"“”]{12,})[\"“”]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_SPACE = re.compile(r"\s+")
SUPPORT = 0.5  # least support (lexical share, or lexical and cosine averaged) that attributes
MIN_TERMS = 3  # shorter sentences ("Yes.") are not judged
MAX_PASSAGE_SENTENCES = 40  # per passage, for the embedding overlap (a passage is ~250 words)


class KeyFilter:
    """Streams text through, keys rewritten to ``[n]`` and unknown keys removed."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.known = {k.upper() for k in keys}
        self.numbers: dict[str, int] = {}  # key → n, in order of first citation
        self.removed: list[str] = []  # what was taken out (invented keys, bare numbers)
        self._held = ""

    def feed(self, delta: str) -> str:
        text = self._held + delta
        self._held = ""
        start = text.rfind("[")
        unfinished = start != -1 and "]" not in text[start:] and len(text) - start <= _HOLD_MAX
        if unfinished and _OPEN.fullmatch(text[start:]):
            text, self._held = text[:start], text[start:]
        return _GROUP.sub(self._replace, text)

    def finish(self) -> str:
        """What is still held back once the stream ends (an unfinished bracket is just text)."""
        text, self._held = self._held, ""
        return _GROUP.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        out = []
        for item in _ITEM.findall(match.group(1)):
            key = item.upper()
            if key in self.known:
                n = self.numbers.setdefault(key, len(self.numbers) + 1)
                out.append(f"[{n}]")
            else:
                self.removed.append(item)
        return "".join(out)


@dataclass
class Flag:
    kind: str  # "not_stated" | "quote" | "sentence"
    text: str
    detail: str
    against: str = ""  # not_stated: the cited passage's sentence(s) the claim was held against
    key: str = ""  # … and that passage's key

    def to_json(self) -> dict[str, str]:
        found = {"kind": self.kind, "text": self.text, "detail": self.detail}
        return found | ({"against": self.against, "key": self.key} if self.kind == "not_stated" else {})


# How an answer says the papers do not answer (the prompt asks the model to say so).
_DECLINE = re.compile(
    r"do(?:es)? not (?:answer|say|mention|provide|contain|specify|state)|"
    r"cannot (?:answer|tell|find|determine)|no information|"
    r"not (?:mentioned|stated|provided|answered|specified)|passages do not|unable to answer",
    re.IGNORECASE,
)


def declines(text: str) -> bool:
    """Whether ``text`` says the papers do not answer."""
    return bool(_DECLINE.search(text))


@dataclass
class Verified:
    answer: str  # markdown with [n], attributed citations added
    numbers: dict[str, int]  # key → n
    flags: list[Flag] = field(default_factory=list)

    @property
    def unsupported(self) -> bool:
        """An answer citing nothing that does not simply decline."""
        return not self.numbers and not declines(self.answer)


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.replace("“", '"').replace("”", '"')).strip().lower()


class _Support:
    """Support of answer sentences by passages: lexical overlap, and embedding overlap when an
    embedder is given (all sentences and passage sentences embedded in one call)."""

    def __init__(self, sentences: Sequence[str], passages: Sequence[KeyedPassage], embedder: Embedder | None):
        self.passage_terms = {p.key: terms(p.text) for p in passages}
        self.cosines: dict[tuple[int, str], float] | None = None
        if embedder is not None and sentences and passages:
            self.cosines = _cosines(embedder, sentences, passages)

    def score(self, i: int, words: set[str], key: str) -> float:
        lexical = _lexical(words, self.passage_terms[key])
        if self.cosines is None:
            return lexical
        return (lexical + self.cosines.get((i, key), 0.0)) / 2


def _cosines(
    embedder: Embedder, sentences: Sequence[str], passages: Sequence[KeyedPassage]
) -> dict[tuple[int, str], float] | None:
    """(sentence index, passage key) → the highest cosine between the sentence and one of the
    passage's sentences; None when the embedder fails (the lexical overlap then decides alone)."""
    owners: list[str] = []
    texts: list[str] = []
    for p in passages:
        parts = [s for s in (x.strip() for x in _SENTENCE_END.split(p.text)) if len(s) > 20]
        for part in parts[:MAX_PASSAGE_SENTENCES] or [p.text]:
            owners.append(p.key)
            texts.append(part)
    try:
        vectors = embedder.embed([*sentences, *texts])
    except EmbedderError as exc:
        log.warning("attribution without embeddings: %s", exc)
        return None
    asked, given = vectors[: len(sentences)], vectors[len(sentences) :]
    best: dict[tuple[int, str], float] = {}
    for i, u in enumerate(asked):
        for key, v in zip(owners, given, strict=True):
            cosine = sum(a * b for a, b in zip(u, v, strict=True))  # vectors are L2-normalised
            if cosine > best.get((i, key), -1.0):
                best[(i, key)] = cosine
    return best


def _lexical(sentence_terms: set[str], passage_terms: set[str]) -> float:
    return len(sentence_terms & passage_terms) / len(sentence_terms) if sentence_terms else 0.0


def verify(
    answer: str,
    passages: Sequence[KeyedPassage],
    numbers: Mapping[str, int],
    embedder: Embedder | None = None,
) -> Verified:
    """Attribute, check and number the finished ``answer`` (already filtered by :class:`KeyFilter`,
    whose ``numbers`` are passed in). ``embedder`` adds the embedding overlap to the attribution."""
    by_key = {p.key: p for p in passages}
    numbering = dict(numbers)  # key → n, grown as citations are added
    by_n = {n: key for key, n in numbering.items()}
    flags: list[Flag] = []
    out: list[str] = []
    cited_keys: set[str] = set(numbering)
    pieces = _SENTENCE_END.split(answer)
    separators = _SENTENCE_END.findall(answer)
    plains = [_NUMBERED.sub("", sentence).strip() for sentence in pieces]
    # A sentence declining to answer is judged by nothing: attributing it would dress a refusal
    # up as a cited answer.
    judged = [i for i, plain in enumerate(plains) if len(terms(plain)) >= MIN_TERMS and not declines(plain)]
    support = _Support([plains[i] for i in judged], passages, embedder)
    index = {i: n for n, i in enumerate(judged)}
    claims: list[tuple[str, list[str]]] = []  # judged sentences and the keys they end up citing
    ranked: dict[str, list[str]] = {}  # a judged sentence → the given keys, best support first
    attributed: dict[str, list[str]] = {}  # … those that support it (SUPPORT)
    at: dict[str, int] = {}  # … and where it stands in the answer

    def cite(key: str) -> int:
        """The reference number of ``key``, numbering it when it is new."""
        n = numbering.setdefault(key, len(numbering) + 1)
        by_n[n] = key
        cited_keys.add(key)
        return n

    for i, sentence in enumerate(pieces):
        cited = [by_n[int(n)] for n in _NUMBERED.findall(sentence) if int(n) in by_n]
        plain = plains[i]
        if i in index and passages:
            words = terms(plain)
            scores = {p.key: support.score(index[i], words, p.key) for p in passages}
            best = max(scores, key=lambda k: scores[k])
            ranked[plain] = sorted(scores, key=lambda k: -scores[k])
            attributed[plain] = [k for k in ranked[plain] if scores[k] >= SUPPORT]
            at[plain] = i
            supported_by_cite = any(scores[k] >= SUPPORT for k in cited)
            if not supported_by_cite and scores[best] >= SUPPORT:
                cited.append(best)
                sentence = _add_citation(sentence, cite(best))
            elif not supported_by_cite:
                flags.append(Flag("sentence", plain, "no given passage supports this sentence"))
            if cited:
                claims.append((plain, list(dict.fromkeys(k for k in cited if k in by_key))))
        out.append(sentence)
        if i < len(separators):
            out.append(separators[i])
    stated = _not_stated(claims, by_key, embedder)
    for flag in stated:
        # The model cited a passage that does not state the sentence: another given passage that
        # does (checked the same way) takes the citation; else the sentence stays flagged.
        other = _stating(flag.text, ranked.get(flag.text, []), by_key, embedder, exclude=claims)
        if other is None:
            flags.append(flag)
            continue
        i = at[flag.text]
        out[2 * i] = _add_citation(_CITATION.sub("", pieces[i]), cite(other))
        claims = [(text, [other] if text == flag.text else keys) for text, keys in claims]
    # A sentence that stands also cites the next given passage that states it: a reader checks the
    # fact where it is said most fully (an abstract's "152 layers" and the experiments' page).
    flagged = {f.text for f in flags}
    for sentence, keys in claims:
        if sentence in flagged or sentence not in at:
            continue
        untried = [k for k in attributed[sentence] if k not in keys][:1]
        other = _stating(sentence, untried, by_key, embedder, exclude=claims)
        if other is not None:
            out[2 * at[sentence]] = _add_citation(out[2 * at[sentence]], cite(other))
    text, numbers = _renumbered("".join(out), by_n)
    cited_keys &= set(numbers)
    # The model read its passages without their reference marks; a quote is held against the same.
    cited_text = " ".join(_norm(unmarked(by_key[k].text)) for k in cited_keys if k in by_key)
    given_text = " ".join(_norm(unmarked(p.text)) for p in passages)
    for match in _QUOTE.finditer(_NUMBERED.sub("", text)):
        quote = _norm(unmarked(match.group(1))).strip(" .,;:")
        if quote and quote not in (cited_text or given_text):
            flags.append(Flag("quote", match.group(1), "not found word for word in a cited passage"))
    return Verified(text, numbers, flags)


def _not_stated(
    claims: Sequence[tuple[str, list[str]]], by_key: Mapping[str, KeyedPassage], embedder: Embedder | None
) -> list[Flag]:
    """Each cited sentence held against what its passages say (:mod:`chat.claims`): flagged when no
    passage it cites states it — its numbers about the same thing, its names, direction, negation."""
    asked: dict[str, list[str]] = {}
    for sentence, keys in claims:
        for key in keys:
            asked.setdefault(key, []).append(sentence)
    verdicts: dict[tuple[str, str], ClaimCheck] = {}
    for key, sentences in asked.items():
        p = by_key[key]
        for sentence, verdict in zip(
            sentences, check_claims(sentences, p.text, embedder, _paper(p, by_key), p.lead), strict=True
        ):
            verdicts[(sentence, key)] = verdict
    flags = []
    for sentence, keys in claims:
        found = [verdicts[(sentence, k)] for k in keys]
        if found and not any(v.supported for v in found):
            first = found[0]
            flags.append(Flag("not_stated", sentence, first.reason, first.evidence, keys[0]))
    return flags


def _stating(
    sentence: str,
    keys: Sequence[str],
    by_key: Mapping[str, KeyedPassage],
    embedder: Embedder | None,
    exclude: Sequence[tuple[str, list[str]]],
) -> str | None:
    """The first of ``keys`` (best supporting first) whose passage states ``sentence``, leaving out
    the ones it already cites (``exclude``); None when none does."""
    cited = {k for text, ks in exclude if text == sentence for k in ks}
    for key in keys:
        if key in cited:
            continue
        p = by_key[key]
        if check_claims([sentence], p.text, embedder, _paper(p, by_key), p.lead)[0].supported:
            return key
    return None


def _paper(passage: KeyedPassage, by_key: Mapping[str, KeyedPassage]) -> str:
    """What counts as written for a name a passage leaves implicit: its paper's title and the other
    passages shown from that paper ("the mini-batch size of 32" is ImageNet's where the paper's
    other pages say it trains on ImageNet; the answer echoes the question's "on ImageNet")."""
    others = [p.text for p in by_key.values() if p.arxiv_id == passage.arxiv_id and p.key != passage.key]
    return " ".join([passage.title, *others])


def _renumbered(text: str, by_n: Mapping[int, str]) -> tuple[str, dict[str, int]]:
    """``text`` with its citations numbered 1, 2, … in order of first appearance, and key → number
    for the keys it still cites (a citation moved to another passage may leave a number unused)."""
    numbers: dict[str, int] = {}

    def renumber(match: re.Match[str]) -> str:
        key = by_n.get(int(match.group(1)))
        return f"[{numbers.setdefault(key, len(numbers) + 1)}]" if key else ""

    return _NUMBERED.sub(renumber, text), numbers


def _add_citation(sentence: str, n: int) -> str:
    """``sentence`` with ``[n]`` before its final punctuation."""
    stripped = sentence.rstrip()
    tail = sentence[len(stripped) :]
    if stripped and stripped[-1] in ".!?":
        return f"{stripped[:-1]} [{n}]{stripped[-1]}{tail}"
    return f"{stripped} [{n}]{tail}"


def references(
    passages: Sequence[KeyedPassage], numbers: Mapping[str, int], quotes: Sequence[Quote] = ()
) -> list[dict[str, object]]:
    """The numbered references list, built from the passages the answer cites. Each opens our page
    reader at the passage's best key quote (``quotes``, best first), highlighted; at its first
    page without one."""
    by_key = {p.key: p for p in passages}
    refs = []
    for key, n in sorted(numbers.items(), key=lambda item: item[1]):
        p = by_key[key]
        best = next((q for q in quotes if q.key == key), None)
        reader = p.reader_url(best.text, best.pages[0] if best.pages else None) if best else p.reader_url()
        refs.append(
            {
                "n": n,
                "key": key,
                "arxiv_id": p.arxiv_id,
                "title": p.title,
                "pages": list(p.pages),
                "paper_url": p.paper_url,
                "reader_url": reader,
                "pdf_url": p.page_url,
            }
        )
    return refs
