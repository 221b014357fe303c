"""Claims checked for what they say: is an answer's sentence stated in the passage it cites?

No model: rules over the passage's sentences, with the bundled embedder to find where the claim is
said. :func:`check_claim` finds the sentence(s) of the passage the claim rests on — the window of one
or two sentences that shares most of the claim's words (and, with an embedder, its meaning) — and
then holds the claim against it:

- **numbers** (with their units): every number of the claim must be stated in the passage *about the
  same thing*. A number is bound to the words around it; when the passage states the claim's number
  only next to other words, or states another number of the same kind next to the claim's words
  ("h = 8 … heads" against "64 heads"), the claim is not stated;
- **names** (methods, datasets, models: capitalised words, acronyms, names with digits such as
  "GPT-3") must be in the sentences the claim rests on;
- **direction**: a comparison ("higher", "outperforms", "fewer") must agree with the passage's, and
  so must the order of the two things compared;
- **negation** must agree ("does not need" against "needs");
- a claim that shares too little with any sentence of the passage is **unsupported**.

Each failure says which sentence of the passage the claim was held against, so the reader can judge.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from chat.assignments import assignment_gainsaid, assignments
from chat.labels import reference_swapped as _reference_swapped
from chat.name_checks import entities, exception_swapped, modifier_swapped
from chat.names import fold as _fold
from chat.names import holds_name as _holds_name
from chat.names import names as _names
from chat.negation import negation_differs as _negation_differs
from chat.number_binding import (
    Owner,
    extreme_gainsaid,
    gainsaid,
    list_spans,
    listed_owners,
    lists,
    partners,
    range_gainsaid,
    ranges,
    stated_together,
)
from chat.number_context import joint_context as _joint_context
from chat.number_context import reach as _reach
from chat.number_context import spelled_out
from chat.number_context import spells as _spells
from chat.number_owners import beside as _beside
from chat.number_owners import bracketed_for as _bracketed_for
from chat.number_owners import glued_to as _glued_to
from chat.number_owners import label_after as _label_after
from chat.number_owners import names_model as _names_model
from chat.number_owners import other_kind as _other_kind
from chat.number_owners import parallel_for as _parallel_for
from chat.number_words import GENERIC as _GENERIC
from chat.number_words import HEDGES as _HEDGES
from chat.number_words import agree as _agree
from chat.number_words import approximates as _approximates
from chat.number_words import attached as _attached
from chat.number_words import bound as _bound
from chat.number_words import counts_alike as _counts_alike
from chat.number_words import fronted as _fronted
from chat.number_words import margin as _margin
from chat.number_words import modifiers as _modifiers
from chat.number_words import per as _per
from chat.number_words import put_aside as _put_aside
from chat.number_words import recounted as _recounted
from chat.number_words import swapped as _swapped
from chat.numbers import CITED_YEAR, NEAR, NOT_A_VALUE, heading_scale, normalise
from chat.numbers import GREEK as _GREEK
from chat.numbers import Value as _Value
from chat.numbers import comparable as _comparable
from chat.numbers import counts_a_thing as _counts_a_thing
from chat.numbers import in_table as _in_table
from chat.numbers import p_value as _p_value
from chat.numbers import rounds_to as _rounds_to
from chat.numbers import same as _same
from chat.numbers import tokens as _tokens
from chat.numbers import values as _values
from chat.polarity import amount_swapped as _amount_swapped
from chat.polarity import antonym as _antonym
from chat.polarity import clause_swapped as _clause_swapped
from chat.polarity import numbers_compared as _numbers_compared
from chat.polarity import opposed as _opposed
from chat.polarity import order_swapped as _order_swapped
from chat.polarity import placed_swapped as _placed_swapped
from chat.polarity import roles_swapped as _roles_swapped
from chat.polarity import sides_swapped as _sides_swapped
from chat.polarity import superlative_swapped as _superlative_swapped
from chat.polarity import word as _word
from chat.ratios import ratio_checks, ratio_fits, ratios, rounds_from
from chat.sentences import Sentence, split
from chat.table_comparisons import contradicted as _rows_compared
from chat.tables import confirms as _table_confirms
from chat.tables import read_all as _read_tables
from chat.tables import verdict_of_any as _table_verdict
from chat.worked import complement as _complement
from chat.worked import quotient as _quotient
from chat.worked import share_of as _share_of
from chat.worked import total as _total
from chat.worked import worked_difference as _difference
from chat.worked import worked_factor
from chat.worked import years_apart as _years_apart
from retrieval.embedder import Embedder, EmbedderError
from retrieval.evidence import term_list, terms

log = logging.getLogger(__name__)

Status = Literal["supported", "not_stated"]
SUPPORTED_WORDS = 0.5  # share of the claim's words the window must hold (or the cosine below)
SUPPORTED_COSINE = 0.6
MARGIN = 0.1  # how much more tightly another number must be bound to be the one stated
NAME_WEIGHT = 0.3  # a number under the claim's name (or another name) binds (or unbinds) this much
WINDOW_WEIGHT = 0.3  # a number in the sentence the claim rests on binds this much more
STATED_WEIGHT = 0.1  # a sentence stating the claim's numbers is this much likelier the one it rests on
ATTACH_WEIGHT = 0.3  # a number whose own words ("25,000 test questions") are the claim's binds this much


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    status: Status
    kind: str  # "" | "number" | "entity" | "direction" | "negation" | "unsupported"
    reason: str
    evidence: str  # the passage's sentence(s) the claim was held against
    evidence_span: tuple[int, int]  # their character offsets in the passage

    @property
    def supported(self) -> bool:
        return self.status == "supported"


def check_claim(claim: str, passage: str, embedder: Embedder | None = None, context: str = "") -> ClaimCheck:
    """Whether ``claim`` is stated in ``passage`` (see the module docstring); ``context`` (the paper's
    title) also counts for names."""
    return check_claims([claim], passage, embedder, context)[0]


def check_claims(
    claims: Sequence[str], passage: str, embedder: Embedder | None = None, context: str = "", lead: str = ""
) -> list[ClaimCheck]:
    """:func:`check_claim` for several claims against one passage (one embedder call). The texts are
    read in compatibility form ("𝜇" as "μ", "ﬁ" as "fi"); the evidence is the passage as given.
    ``lead`` is the paper's text just before the passage (cut from it for a small model to read):
    it tells what a passage that names nothing at its start is about, and its names count as written;
    the numbers must be in the passage."""
    original = passage
    passage, offsets = normalise(passage)
    claims = [CITED_YEAR.sub("", normalise(c)[0]) for c in claims]
    context = normalise(context)[0]
    lead = normalise(lead)[0]
    windows = _windows(split(passage))
    cosines = _cosines(embedder, claims, [w.text for w in windows]) if windows else None
    out = []
    for i, claim in enumerate(claims):
        found = _check(claim, passage, windows, cosines[i] if cosines else None, context, lead)
        span = (offsets[found.evidence_span[0]], offsets[found.evidence_span[1]])
        evidence = original[span[0] : span[1]] if found.evidence else ""
        out.append(ClaimCheck(found.status, found.kind, found.reason, evidence, span))
    return out


def _windows(sentences: Sequence[Sentence]) -> list[Sentence]:
    """Each sentence, and each two neighbours together (a claim may join them)."""
    out = list(sentences)
    for a, b in pairwise(sentences):
        out.append(Sentence(f"{a.text} {b.text}", a.start, b.end))
    return out


def _cosines(
    embedder: Embedder | None, claims: Sequence[str], texts: Sequence[str]
) -> list[list[float]] | None:
    if embedder is None or not claims:
        return None
    try:
        vectors = embedder.embed([*claims, *texts])
    except EmbedderError as exc:
        log.warning("claim checks without embeddings: %s", exc)
        return None
    asked, given = vectors[: len(claims)], vectors[len(claims) :]
    return [[sum(a * b for a, b in zip(u, v, strict=True)) for v in given] for u in asked]


def _check(
    claim: str,
    passage: str,
    windows: Sequence[Sentence],
    cosines: Sequence[float] | None,
    context: str,
    lead: str = "",
) -> ClaimCheck:
    wanted = terms(NOT_A_VALUE.sub(" ", claim)) - _numeric_terms(claim)
    if not windows or not wanted:
        return ClaimCheck(
            "not_stated", "unsupported", "the passage says nothing this sentence says", "", (0, 0)
        )
    shares = [len(wanted & terms(w.text)) / len(wanted) for w in windows]
    mine = [v for v in _values(claim)[1] if v.unit != "word"]
    singles = _singles(windows)

    # A sentence that states two or more of the claim's numbers is likelier the one it rests on (a
    # number alone may be a swap from another sentence).
    stating = [  # two different numbers: "64 heads … a dimension of 64" is one number said twice
        len({v.value for v in mine if any(_same(t, v) or _rounds_to(t, v) for t in _values(w.text)[1])}) >= 2
        for w in windows[:singles]
    ]
    stating += [a or b for a, b in pairwise(stating)]  # the pairs, in the order of _windows

    def score(i: int) -> float:
        value = shares[i] + (cosines[i] if cosines else 0.0) + (STATED_WEIGHT if stating[i] else 0.0)
        value -= 0.05 if i >= singles else 0.0  # one sentence, unless a pair does clearly better
        # A claim stating a number rests on a sentence that states numbers.
        return value - (0.3 if mine and not _values(windows[i].text)[1] else 0.0)

    best = max(range(len(windows)), key=score)
    window = windows[best]
    span = (window.start, window.end)

    def fail(kind: str, reason: str) -> ClaimCheck:
        return ClaimCheck("not_stated", kind, reason, passage[span[0] : span[1]], span)

    tables = _read_tables(passage)
    # a table's row and column say what a number is of: its names need not stand beside it (nor
    # its words: "bits per byte" is the caption's), and a row named "None" (no retriever) denies nothing
    tabled = bool(tables and _table_confirms(claim, tables))
    if (
        max(shares) < SUPPORTED_WORDS
        and not (cosines and max(cosines) >= SUPPORTED_COSINE)
        and not tabled
        and not _numbers_found(claim, passage)
    ):
        return fail("unsupported", "the passage does not say this")
    # a claim joining clauses ("uses 64 heads, and each head has a dimension of 64"): each number is
    # held against the window that says most of its own clause
    own_windows = {
        at: max(
            windows, key=lambda w: (len(words & terms(w.text)) + _states_at(claim, at, w.text), -len(w.text))
        ).text
        for at, words in _clause_words(claim, wanted).items()
    }
    problem = _numbers(claim, passage, window.text, own_windows) or _reference_swapped(
        claim, window.text, passage
    )
    if problem:
        return fail("number", problem)
    problem = _rows_compared(claim, tables, passage) if tables else None
    if problem:
        return fail("direction", problem)
    problem = None if tabled else entities(claim, window.text, passage, shares[best], context, lead)
    if problem is None and not tabled:
        problem = modifier_swapped(claim, window.text, passage) or exception_swapped(claim, passage)
    if problem:
        return fail("entity", problem)
    if _opposed(claim, window.text):
        return fail("direction", "the passage states the opposite direction")
    amount = _amount_swapped(claim, window.text)
    if amount:
        return fail("direction", amount)
    swapped = _antonym(*({_AS_PLACE.get(t, t) for t in terms(x)} for x in (claim, window.text)))
    if swapped:
        said, says = _word(swapped[1], window.text), _word(swapped[0], claim)
        return fail("direction", f"the passage says {said!r} where this says {says!r}")
    placed = _placed_swapped(claim, passage)
    if placed:
        return fail("direction", f"the passage says {placed[0]!r} where this says {placed[1]!r}")
    if _order_swapped(claim, window.text) or _sides_swapped(claim, window.text):
        return fail("direction", "the passage compares them the other way round")
    sentences = [w.text for w in windows[:singles]]
    problem = (
        _roles_swapped(claim, window.text)
        or _superlative_swapped(claim, sentences)
        or _numbers_compared(claim, passage)
        or _clause_swapped(claim, window.text)
    )
    if problem:
        return fail("direction", problem)
    if not tabled and _negation_differs(
        claim, wanted, passage, _best_sentence(window.text, wanted, claim), sentences
    ):
        return fail("negation", "the passage says the opposite (a negation does not agree)")
    return ClaimCheck("supported", "", "", passage[span[0] : span[1]], span)


def _singles(windows: Sequence[Sentence]) -> int:
    return (len(windows) + 1) // 2


# -- numbers -----------------------------------------------------------------------------------------


def _numbers_found(claim: str, passage: str) -> bool:
    """Two or more numbers of the claim, each stated in the passage: the claim is about this passage
    however few of its words the passage shares (a table's cells, read in other words); the number
    checks then say whether each is said of what the claim says."""
    found = [v for v in _values(claim)[1] if v.unit != "word"]
    stated = _values(passage)[1]
    if len(found) == 1:  # … or one number with the noun it counts ("under 400,000 parameters")
        claim_tokens, passage_tokens = _tokens(claim), _tokens(passage)
        counted = _attached(claim_tokens, found[0].start) - _GENERIC
        return any(_same(s, found[0]) and counted & _attached(passage_tokens, s.start) for s in stated)
    return len(found) >= 2 and all(
        any(_same(s, v) or _rounds_to(s, v) for s in stated)
        or (_GAINS.search(claim) and _difference(v, found, stated))  # "a gain of 3.2 points, from …"
        for v in found
    )


def _numeric_terms(text: str) -> set[str]:
    """The terms that state numbers ("28.4", "fifty", the "times" of "ten times"): the number checks
    judge them, and a passage writes "seven" as "7" and "ten times" as "10x"."""
    words, found = _values(text)
    spelled = {t for v in found if v.unit == "word" for t in term_list(v.text)}
    factors = {t for v in found if words[v.start + 1 : v.start + 2] == ["times"] for t in term_list("times")}
    return {t for t in terms(text) if any(c.isdigit() for c in t)} | spelled | factors


def _label(text_words: Sequence[str], raw: str, at: int) -> str | None:
    """The name nearest before position ``at`` in its row or clause (a table row's label, a
    sentence's subject), folded; None when there is none within reach. A name the number is said
    "on" or "for" right after it is its own ("74.4%→82.1% on GSM8K, 78.2%→83.0% on DROP")."""
    names = {_fold(n) for n in _names(raw)}
    if text_words[at + 1 : at + 2] == ["to"] and re.match(r"\d", "".join(text_words[at + 2 : at + 3])):
        at += 2  # a change, "74.4% to 82.1% on GSM8K": the name after its end is the change's
    after = [w.strip(".,;:()[]\"'") for w in text_words[at + 1 : at + 4]]
    if after[:1] in (["on"], ["for"]):
        named = after[2] if after[1:2] == ["the"] and len(after) > 2 else after[1:2] and after[1]
        if named and _fold(named) in names:
            return _fold(named)
    for i in range(at - 1, max(-1, at - 2 * NEAR), -1):
        word = _fold(text_words[i].strip(".,;:()[]\"'"))
        if word in names:
            return word
    return None


def _binding(claim_ctx: dict[str, float], ctx: dict[str, float]) -> float:
    return sum(w * ctx[t] for t, w in claim_ctx.items() if t in ctx)


def _clause_words(claim: str, wanted: set[str]) -> dict[int, set[str]]:
    """Where the claim joins clauses that each state a number (", and", ", while", ";"): each
    number's word position and the words of its clause; empty for a claim of one clause."""
    toks = _tokens(claim)
    cuts = [
        i + 1
        for i, t in enumerate(toks[:-1])
        if t.endswith(";") or (t.endswith(",") and toks[i + 1].lower() in _JOINS)
    ]
    bounds = list(pairwise([0, *cuts, len(toks)]))
    found = _values(claim)[1]
    holding = [(a, b) for a, b in bounds if any(a <= v.start < b for v in found)]
    if len(holding) < 2:
        return {}
    return {
        v.start: terms(" ".join(toks[a:b])) & wanted for a, b in holding for v in found if a <= v.start < b
    }


_JOINS = frozenset(["and", "while", "whereas", "but"])


def _states_at(claim: str, at: int, text: str) -> bool:
    """Whether ``text`` states the claim's number at word ``at``."""
    mine = [v for v in _values(claim)[1] if v.start == at]
    return any(_same(t, v) for v in mine for t in _values(text)[1])


def _numbers(claim: str, passage: str, window: str, own_windows: dict[int, str] | None = None) -> str | None:
    """Why the claim's numbers are not stated about the same thing, or None. Every number of the
    passage comparable with the claim's is scored by how tightly it is bound to the claim's words
    (nearby words, the name it belongs to — a table row's label, a sentence's subject — and whether
    it is in the sentence the claim rests on); the claim's own number must not be clearly beaten."""
    claim_words, claim_values = _values(claim)
    if not claim_values:
        return None
    problem = (
        range_gainsaid(claim, passage)
        or extreme_gainsaid(claim, passage)
        or assignment_gainsaid(claim, passage)
    )
    if problem:
        return problem
    passage_words, passage_values = _values(passage)
    claim_names = {_fold(n) for n in _names(claim, anywhere=True)}
    claim_terms = terms(claim)
    claim_tokens, passage_tokens = _tokens(claim), _tokens(passage)
    checks, preset = ratio_checks(claim, claim_values, passage_values)
    passage_shares = [share for _, _, share in ratios(passage)]
    ranged_claim = {e.start for pair in ranges(claim) for e in pair}
    tables = _read_tables(passage)
    # a value the claim gives a symbol as the passage does ("p = 0.96") is stated, wherever it stands
    # (where the passage gives the symbol one value: "T = 0 … T = 1" leaves which to the words around)
    given = assignments(passage)
    agreed = {
        v
        for name, said in assignments(claim).items()
        if len(given.get(name, ())) == 1
        for v in said & given[name]
    }
    spanned = list_spans(claim, passage)  # "from 62 to 121 days" for "(62, 74, 112, 121 days)"
    listed = listed_owners(passage)
    by_start = {v.start: v for v in passage_values}
    claim_stems = {t for w in claim_tokens for t in term_list(w.lower())}
    claim_stems |= {_fold(n) for n in _names(claim, anywhere=True)}
    together = stated_together(claim, passage)
    for value in checks:
        if value.value in agreed or value.start in spanned:
            continue
        if value.unit == "word" and worked_factor(claim_tokens, value, claim_values):
            continue  # "56.60 … more than five times the human score of 9.61"
        gaps = _years_apart(claim_tokens, value, claim_values, passage_values)
        if value.value in gaps:
            continue  # "in 1977, nine years before the ARGUS observation" (in 1986)
        if gaps:
            apart = ", ".join(f"{g:g}" for g in sorted(gaps))
            return f"the passage's years are {apart} apart, not {value.text}"
        if value.unit == "word" and _GAINS.search(claim) and _difference(value, claim_values, passage_values):
            continue  # "beats TextBlob by about five points, 62.77 against 57.50"
        span = _span_words(passage, (own_windows or {}).get(value.start, window))
        if tables:  # the cell of the row (and column) the claim names
            decided, why = _table_verdict(claim, tables, value)
            if decided and why:
                return why
            if decided:
                continue
        exact = [v for v in passage_values if _same(v, value)]
        if value.unit in ("%", "scale") and all(v.unit != value.unit for v in exact):
            # a bare "35" (age) is not "35%" where the passage gives 35.3%: its roundings count too
            exact += [v for v in passage_values if v.unit == value.unit and _rounds_to(v, value)]
        stated_as = (
            preset.get(value)
            or exact
            # a number in words is exact unless hedged: "four coefficients" is not 3.8231
            or [v for v in passage_values if _rounds_to(v, value) and _roundable(claim_tokens, value)]
            or [v for v in passage_values if _approximates(claim_tokens, value, v)]
            # a percentage said as a ratio ("1 in 5" for "roughly 20%"), when nothing states it
            or [v for v in passage_shares if value.unit == "%" and rounds_from(v, value)]
            or _in_scaled_heading(passage, passage_values, value)
        )
        if not stated_as and (value.unit == "word" or (value.unit == "-" and value.text[0].isalpha())):
            # A count in words the passage does not write ("four baselines" for a list of four, "a
            # randomly chosen one") is wrong only where the passage counts the same thing otherwise.
            counted = _attached(claim_tokens, value.start) - _GENERIC
            other = [
                v
                for v in passage_values
                if _comparable(v, value)
                and counted & _attached(passage_tokens, v.start)
                and v.value.is_integer()  # a count's rival is a count: 2.0884 counts nothing
            ]
            other.sort(key=lambda v: v.unit != value.unit)  # a count in words ("five-point") first
            # … but a list of that many of them counts it ("five batch sizes" for "64, 128, …, 1024")
            if other and not any(len(run) == value.value and set(run) & set(other) for run in lists(passage)):
                return f"where the passage says this it gives {other[0].text}, not {value.text}"
            continue
        if not stated_as and _version(claim_tokens, value.start, passage):
            continue  # a version of a name ("SQuAD 1.1" for "SQuAD1.1"), not a value
        if not stated_as and _kind_abbreviated(claim_tokens, value, passage):
            continue  # "type 1 diabetes" for "T1DM"
        if not stated_as and (
            _total(claim_tokens, value, passage_values) or _quotient(claim_tokens, value, passage_values)
        ):
            continue  # "30 cases in all" for 20 and 10; "3 Gy per fraction" for 60 Gy in 20 fractions
        margin = (_margin(claim_tokens, value.start) or _gap_said(claim_tokens, value.start)) and not tables
        if (
            not stated_as
            and _GAINS.search(claim)
            and _difference(value, claim_values, passage_values, margin=margin)
        ):
            continue  # a difference the claim works out ("a gain of 4.4 points, from 90.0% to 94.4%")
        if not stated_as and _complement(value, passage_tokens, passage_values, claim):
            continue  # the rest of a whole ("only 36 of the 57 games, so 21 lack a score")
        if not stated_as and _share_of(claim_tokens, value, claim_values, passage_values):
            continue  # a share worked out ("28% of the 109 candidates, about 30 of them")
        if not stated_as:
            return f"{value.text} is not in the passage"
        # A bound turned round: "more than 400,000 parameters" for "fewer than 400,000".
        mine, said = _bound(claim_tokens, value.start)
        theirs = {_bound(passage_tokens, v.start) for v in stated_as}
        if mine and all(b == -mine for b, _ in theirs):
            return f"the passage says {next(iter(theirs))[1]} {value.text}, not {said} {value.text}"
        # A number the passage says of another kind's numeral ("95.1% on Level I" for "Level II").
        other_kind = _other_kind(claim_tokens, claim_values, passage_tokens, passage_values, stated_as)
        if other_kind:
            return f"the passage gives {value.text} for {other_kind}"
        # A number of one of two parallel sentences, said of the other's ("in boys … 14.1 minutes").
        parallel = _parallel_for(claim, passage_tokens, stated_as)
        if parallel:
            own_word, claim_word = _word(parallel[0], passage), _word(parallel[1], claim)
            return f"the passage gives {value.text} for {own_word!r}, not {claim_word!r}"
        # A number in brackets after a name is that name's ("18% of VGG-19 (19.6 billion FLOPs)").
        owner = {_bracketed_for(passage_tokens, v.start, passage, claim_names) for v in stated_as}
        name = owner.pop() if len(owner) == 1 else None
        if (
            name
            and not {t for t in term_list(name) if t.isalpha()} & claim_terms
            and not _spells(claim, name)
        ):
            return f"the passage gives {value.text} for {name}"
        # … and a size glued to a name is that model's ("Qwen2.5-3B": 3B is not Phi-3-mini's)
        glued = {_glued_to(passage_tokens, v.start) for v in stated_as}
        if None not in glued and not any(_names_model(claim, g) for g in glued):
            return f"the passage gives {value.text} for {glued.pop()}"
        # A number labelled by the bracket after it ("from 72% (placebo) to 40%") is that label's.
        # (Only where its sentence gives another such number the label tells apart: "62% (binary
        # classification)" alone says what was measured, not for whom.)
        labels = {
            _label_after(passage_tokens, v.start)
            for v in stated_as
            if v.unit in ("", "%") and _beside(passage_tokens, passage_values, v)
        }
        label = labels.pop() if len(labels) == 1 else None
        if label and not set(term_list(label)) & (claim_terms | set(term_list(claim.lower()))):
            return f"the passage gives {value.text} for {label!r}"
        # The number a passage puts aside ("16 instead of 20 residual blocks") said as the one used.
        if all(_put_aside(passage_tokens, v.start) for v in stated_as) and not _CONTRASTS.search(claim):
            used = [w.text for w in passage_values if w.start == stated_as[0].start - 3]
            instead = f"{used[0]} instead of {value.text}" if used else f"instead of {value.text}"
            return f"the passage puts {value.text} aside ('{instead}')"
        # A difference ("by more than 2.0 BLEU") said as the value itself ("reaches 2.0 BLEU").
        if all(_margin(passage_tokens, v.start) for v in stated_as) and not (
            _margin(claim_tokens, value.start) or _GAINS.search(claim)
        ):
            return f"the passage gives {value.text} as a difference, not as the value"
        # An aligned list or a clause of its own gives the number to something else than the claim's
        # (or to what the claim says: then the list's other numbers are not its rivals).
        verdicts = [gainsaid(claim, value, passage, v) for v in stated_as]
        if all(why for why, _ in verdicts):
            return verdicts[0][0]
        stated_as = [v for v, (why, _) in zip(stated_as, verdicts, strict=True) if not why]
        not_rivals = [w for why, others in verdicts if not why for w in others]
        if set(stated_as) & set(not_rivals):
            continue  # the claim names the item a list gives this number to ("1.02 … for HDL")
        # The items a list gives numbers of this kind to, and those the claim names ("33.2 in 12-shot
        # E2E-NLG and 48.0 in 10-shot WebNLG"): a number given to another item is not the claim's.
        kin = {at: o for at, o in listed.items() if at in by_start and _comparable(by_start[at], value)}
        items = {
            at for at, o in kin.items() if _distinct(o, kin.values()) & claim_stems or o.terms <= claim_stems
        }
        if items and all(v.start in kin and v.start not in items for v in stated_as):
            return f"the passage gives {value.text} for {kin[stated_as[0].start].text!r}"
        if value.start in together:
            continue
        recount = _recounted(claim_tokens, value, passage_tokens, passage_values, stated_as)
        if recount:
            return f"the passage gives {recount}, not {value.text}"
        claim_ctx = spelled_out(_joint_context(claim, claim_words, claim_values, value), claim, passage)
        if sum(_comparable(v, value) for v in claim_values) == 1:  # the claim's one number of its kind
            claim_ctx = {**_fronted(claim, claim_values, value), **claim_ctx}
        claim_mods = _modifiers(
            claim_tokens, claim_values, value, _reach(claim, claim_values, value, prose=True)
        )
        # Words that tell the passage's numbers of this kind apart: a metric most of them are given
        # in ("2.0 BLEU", "BLEU score of 28.4") binds none more than another.
        kind = [_attached(passage_tokens, v.start) for v in passage_values if _comparable(v, value)]
        shared = {t for t, n in Counter(t for a in kind for t in a).items() if n > len(kind) / 2} | _GENERIC
        attached = _attached(claim_tokens, value.start) - shared

        def score(
            v: _Value,
            claim_ctx: dict[str, float] = claim_ctx,
            attached: set[str] = attached,
            shared: set[str] = shared,
            claim_mods: dict[str, set[float]] = claim_mods,
            span: tuple[int, int] = span,
        ) -> float:
            found = _binding(
                claim_ctx, _joint_context(passage, passage_words, passage_values, v, passage=True)
            )
            theirs = _attached(passage_tokens, v.start) - shared
            if attached and theirs:  # how far the two say the same ("BLEU score" and "BLEU": much)
                found += ATTACH_WEIGHT * 2 * len(attached & theirs) / (len(attached) + len(theirs))
            if claim_mods:  # numbers around it that gainsay the claim's ("4% with the 2016 index")
                reach = _reach(passage, passage_values, v, prose=True)
                mods = _modifiers(passage_tokens, passage_values, v, reach)
                wrong = sum(not _agree(claim_mods[t], mods[t]) for t in claim_mods if t in mods)
                found -= ATTACH_WEIGHT * wrong / len(claim_mods)
            # "5 per class" is said of the class: "each class … 5 examples" binds it as tightly
            per = _per(passage_tokens, v.start)
            found += ATTACH_WEIGHT if per and per <= claim_ctx.keys() else 0.0
            label = _label(passage_words, passage, v.start) if _in_table(passage_values, v) else None
            if label is not None and (claim_names or claim_terms):
                ours = label in claim_names or bool(set(term_list(label)) & claim_terms)
                found += NAME_WEIGHT if ours else -NAME_WEIGHT
            found += NAME_WEIGHT if _names_model(claim, _glued_to(passage_tokens, v.start)) else 0.0
            return found + (WINDOW_WEIGHT if span[0] <= v.start < span[1] else 0.0)

        own, stated = max(((score(v), v) for v in stated_as), key=lambda r: r[0])

        # A word around the number whose opposite qualifies it in the passage ("4.82% … validation
        # error" against "4.82% … error on … the test set"), and that its sentence never says ("on the
        # hidden test set … .185 UF1, matching … the validation set" gives .185 for the test set too).
        # (A change's start, "from 28% to 20% after the change", owns no word past its end.)
        change_end = [b for a, b in partners(claim) if a == value.start and b > a]
        upto = " ".join(claim_tokens[: change_end[0]]) if change_end else claim
        contrast = _antonym(_sentence_terms(upto, value.start), _sentence_terms(passage, stated.start))
        if contrast and contrast[0] not in _sentence_terms(passage, stated.start, reach=len(passage)):
            said, says = _word(contrast[1], passage), _word(contrast[0], claim)
            return f"the passage gives {value.text} for {said!r}, not {says!r}"
        # A ratio's share is a rival when the claim's number is one ("1 in 4" against "31 out of 40");
        # a range's end is not a point value's ("2-4 points lower" against "61.2").
        pool = [*passage_values, *(passage_shares if set(stated_as) & set(passage_shares) else [])]
        ends = {e for pair in ranges(passage) for e in pair} if value.start not in ranged_claim else set()
        rivals = [
            (score(v), v)
            for v in pool
            if (_comparable(v, value) or _counts_alike(passage_tokens, v, claim_tokens, value))
            and v not in stated_as
            # the claim's other numbers are not rivals, unless the two are swapped: this one's own
            # words ("5,000 examples") are that number's in the passage and not the stated one's
            and (
                not any(
                    _same(v, mine) or (mine is not value and _rounds_to(v, mine)) for mine in claim_values
                )
                # (the two counts of one ratio, "101 out of 162 papers", share their words)
                or (
                    _swapped(claim_tokens, claim_values, value, passage_tokens, v, stated, shared)
                    and (v.start, stated.start) not in partners(passage)
                )
            )
            and v not in not_rivals
            and v not in ends
            # a count rivals counts: 33.2 counts nothing ("twelve shots" against "12-shot", "136
            # people" against an odds ratio of 0.32)
            and (
                v.value.is_integer() or not (value.unit == "word" or _counted(claim_tokens, value, stated_as))
            )
            # a P value rivals P values only ("24 days" against "P = 0.657")
            and _p_value(passage_tokens, v.start) == _p_value(claim_tokens, value.start)
            # a margin ("by more than 2.0 BLEU") is no rival of a level ("a BLEU score of 28.4")
            and _margin(passage_tokens, v.start) == _margin(claim_tokens, value.start)
            # a spelled number rivals a written one only about the same thing: "three different ways"
            # is no rival of "64 attention heads", "twenty-two people" is of "24 people"
            and (
                v.unit != "word"
                or value.unit == "word"
                or bool(_attached(passage_tokens, v.start) & attached)
            )
        ]
        if items:  # a number a list gives to an item the claim does not name is no rival then
            rivals = [(b, v) for b, v in rivals if v.start not in kin or v.start in items]
        # a number that binds none of the claim's words is no rival, unless it stands in the claim's
        # sentence (its true number, where the claim swapped it for one said elsewhere)
        rivals = [(b, v) for b, v in rivals if b > 0 or span[0] <= v.start < span[1]]
        if rivals:
            best, rival = max(rivals, key=lambda r: r[0])
            if best > own + MARGIN:
                return f"where the passage says this it gives {rival.text}, not {value.text}"
    return None


def _distinct(item: Owner, items: Iterable[Owner]) -> frozenset[str]:
    """The words of a list's item that no other item of it has."""
    return item.terms - {t for other in items if other.terms != item.terms for t in other.terms}


_GAINS = re.compile(
    r"\b(?:by|more|less|fewer|higher|lower|better|worse|faster|slower|improv\w*|outperform\w*|gains?|margin|"
    r"advantage|lead|gap|difference|points?|below|above|behind|larger|smaller|greater|"
    r"ahead|beats?|exceed\w*|surpass\w*|increase\w*|decrease\w*|drops?|reduc\w*|\w{3,}er\s+than)\b",
    re.IGNORECASE,
)


def _in_scaled_heading(passage: str, passage_values: Sequence[_Value], value: _Value) -> list[_Value]:
    """The passage's bare numbers that state ``value`` ("70B") in the scale a heading gives them."""
    scale = heading_scale(passage)
    if not scale or value.unit not in ("scale", "-") or value.value < 1e3:  # "300B", "a 70B-parameter model"
        return []
    return [
        v for v in passage_values if not v.unit and math.isclose(v.value * scale, value.value, rel_tol=1e-6)
    ]


_GAP_SAID = re.compile(r"(?:\S+\s+){0,2}(?:\w{3,}er|more|less|fewer)\s+than\b", re.IGNORECASE)


def _gap_said(tokens: Sequence[str], at: int) -> bool:
    """The number at word ``at`` is a gap said with a comparative ("about 5.8 points larger than")."""
    return bool(_GAP_SAID.match(" ".join(tokens[at + 1 : at + 5])))


def _counted(tokens: Sequence[str], value: _Value, stated_as: Sequence[_Value]) -> bool:
    """``value`` is a whole count of the thing named after it ("136 people"), as the passage states
    it ("about 89 kbits" for 89.25 is a measure rounded)."""
    whole = value.value.is_integer() and all(v.value.is_integer() for v in stated_as)
    return not value.unit and whole and _counts_a_thing(tokens, value.start)


def _roundable(tokens: Sequence[str], value: _Value) -> bool:
    """Whether ``value`` may be a rounding: written in digits, or in words after a hedge ("about five")."""
    return value.unit != "word" or (value.start > 0 and tokens[value.start - 1].lower() in _HEDGES)


def _kind_abbreviated(tokens: Sequence[str], value: _Value, passage: str) -> bool:
    """A kind's numeral the passage writes into an abbreviation: "type 1 diabetes" as "T1DM"."""
    kind = tokens[value.start - 1] if value.unit == "name" and value.start else ""
    return bool(kind) and bool(re.search(rf"\b{re.escape(kind[0])}{value.text}[A-Z]", passage, re.IGNORECASE))


def _version(tokens: Sequence[str], at: int, passage: str) -> bool:
    """The number at word ``at`` goes with the name before it, which the passage writes with it
    ("SQuAD 1.1" and "SQuAD1.1", "GPT 3.5" and "GPT-3.5")."""
    name = tokens[at - 1] if at > 0 else ""
    return bool(_names(name, anywhere=True)) and _holds_name(passage, name + tokens[at].rstrip(".,;:)"))


# Words with which a claim itself tells what was put aside ("20 blocks in AlphaZero, not 16").
_CONTRASTS = re.compile(
    r"\b(?:instead|rather|not|unlike|than|original(?:ly)?|replac\w*|previous(?:ly)?|compared)\b",
    re.IGNORECASE,
)


def _sentence_terms(text: str, at: int, reach: int = 2 * NEAR) -> set[str]:
    """The stems within ``reach`` words of word ``at`` (as :func:`_values` counts words), not
    past the end of its sentence."""
    tokens = _tokens(text)
    ends = [bool(re.search(r"(?<![A-Z\d])[.!?]$", t)) for t in tokens]
    lo = at
    while lo > max(0, at - reach) and not ends[lo - 1]:
        lo -= 1
    hi = at
    while hi < min(len(tokens) - 1, at + reach) and not ends[hi]:
        hi += 1
    return {_AS_PLACE.get(t, t) for w in tokens[lo : hi + 1] for t in term_list(w.translate(_GREEK))}


_AS_PLACE = {term_list("afterwards")[0]: "after", term_list("beforehand")[0]: "before"}


def _span_words(passage: str, window: str) -> tuple[int, int]:
    """The word positions of ``window`` within ``passage`` (as :func:`_values` counts words)."""
    at = passage.find(window)
    if at < 0:
        return (0, 0)
    before = len(_values(passage[:at])[0])  # citations cut at the window's edge are rare
    return before, before + len(_values(window)[0])


def _best_sentence(window: str, wanted: set[str], claim: str) -> str:
    """Of a window of two sentences, the one the claim rests on: the one stating the claim's
    numbers, else the one holding more of its words."""
    mine = _values(claim)[1]
    parts = split(window)

    def weight(text: str) -> float:
        found = _values(text)[1]
        states = any(_same(v, m) for v in found for m in mine) or any(
            ratio_fits(n, m, v) for n, m, _ in ratios(claim) for v in found
        )
        return len(wanted & terms(text)) + (10 if states else 0)

    return max(parts, key=lambda p: weight(p.text)).text if parts else window
