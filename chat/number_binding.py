"""What a number in scientific prose is said of (the number side of :mod:`chat.claims`).

Numbers are read by :mod:`chat.numbers`; this module holds the structures that bind a number to its
subject beyond the words next to it:

- **aligned lists**: "α, and β … respectively, 2.0 and 0.8" and "MNLI (SNLI) contains 400,000
  (550,000)": the i-th number is the i-th item's;
- **parallel clauses**: "80% F1 … in movies and books, but only 67-73% F1 … in grocery and
  electronics", "fewer samples (403) than Multi-LexSum does (4,500)": where one sentence gives numbers
  of one kind in clauses of their own, the words only one clause says are its number's;
- **brackets after their clause**: "no episodes of emesis (127/212 (60%) vs …) and no nausea
  (135/211 (64%) vs …)";
- **ranges**: "from 1 to 64" is one statement; "between 0 and 64" is another, though 64 is in both;
  ratios ("1 in 5", :mod:`chat.ratios`) are one statement too.

The words around a number that bind it are :mod:`chat.number_context`'s.

A value assigned to a symbol ("β1 = 0.9") is that symbol's.

:func:`gainsaid` says when one of these gives the passage's number to something else than the claim
says it of.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from chat.numbers import (
    GREEK,
    KINDS,
    NUMBER,
    RANGE,
    Value,
    clean,
    comparable,
    in_table,
    number_word,
    other_measures,
    rounds_to,
    same,
    tokens,
    values,
)
from chat.ratios import ratios
from retrieval.evidence import term_list

# -- what a number is said of, beyond the words next to it --------------------------------------------

_SEPARATORS = frozenset(["and", "or", "&", "", "respectively", "vs", "vs.", "versus"])
IN_PLACE_OF = ("instead of", "rather than")  # "16 instead of 20 residual blocks": one list
_CLAUSE_WORDS = frozenset(["and", "but", "while", "whilst", "whereas", "than", "vs", "vs.", "versus", "or"])
_ARTICLES = frozenset(["the", "a", "an"])
_LINKS = frozenset(["of", "=", "is", "are", "was", "were", "be", "to", "at", "equals"])
# Words that say nothing of which clause's number is which: auxiliaries, pronouns, references.
_FUNCTION = frozenset(
    term_list("has have had does did were than while when whereas our their its see figure table only also")
)
_NUMERALS = frozenset(["I.", "V.", "X."])
_ABBREVIATION = re.compile(r"(?:[A-Za-z]|al|e\.g|i\.e|etc|vs|cf|Fig|Eq|Sec|Tab|No)\.")


@dataclass(frozen=True, slots=True)
class Owner:
    terms: frozenset[str]  # stems that say whose the number is
    text: str  # as written, for the reason shown to a reader


# A unit's abbreviation is the unit: "84.6 secs" is said in the "seconds" of "48.2 seconds per unit".
_SPELLED = {
    term_list(short)[0]: term_list(full)[0]
    for short, full in [
        ("secs", "seconds"),
        ("mins", "minutes"),
        ("hrs", "hours"),
        ("hr", "hours"),
        ("params", "parameters"),
        ("imgs", "images"),
    ]
}


def unabbreviated(term: str) -> str:
    """A stemmed word, a unit's abbreviation spelled out ("secs" is "seconds")."""
    return _SPELLED.get(term, term)


def _stems(words: Sequence[str]) -> set[str]:
    """The words' stems, less numbers and function words; a name with digits whole ("ResNet-50")."""
    out = {
        unabbreviated(t)
        for w in words
        for t in term_list(w.translate(GREEK))
        if not any(c.isdigit() for c in t) and t not in _FUNCTION and number_word(w.lower()) is None
    }
    named = [w for w in words if re.search("[A-Za-z]", w) and re.search(r"\d", w) and not NUMBER.search(w)]
    sizes = [w for i, w in enumerate(words) if _sized(words, i)]
    return out | {re.sub(r"[^a-z0-9]", "", w.lower()) for w in [*named, *sizes]}


_SIZE = re.compile(r"\d+(?:\.\d+)?[KMBT]")
_MODEL_WORDS = frozenset(["model", "models", "variant", "version", "baseline"])


def _sized(toks: Sequence[str], at: int) -> bool:
    """Whether the token at ``at`` is a size that names the model after it ("the 172M model … whereas
    the 7B model", "our 175B PPO-ptx model"): a name, not a value of the clause."""
    if not _SIZE.fullmatch(toks[at].strip(".,;:()")):
        return False
    after = [t.strip(".,;:()") for t in toks[at + 1 : at + 3]]
    if after[:1] and after[0].lower() in _MODEL_WORDS:
        return True
    # the name of a variant between ("175B SFT model"), not a break before it
    named = len(after) == 2 and any(c.isupper() for c in after[0]) and toks[at + 1][-1] not in ".,;:)"
    return named and after[1].lower() in _MODEL_WORDS


def sentence_spans(toks: Sequence[str]) -> list[tuple[int, int]]:
    """The token spans of the sentences."""
    out, lo = [], 0
    for i, tok in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if (
            re.search(r"[.!?][\"')\]]*$", tok)
            # an initial ("J. Smith") is no sentence end, a kind's numeral is ("on Level I. Performance")
            and (
                not _ABBREVIATION.fullmatch(tok)
                or (i > 0 and toks[i - 1].lower() in KINDS and tok in _NUMERALS)
            )
            and (not nxt or nxt[0].isupper() or nxt[0].isdigit() or nxt[0] in "(\"'[")
        ):
            out.append((lo, i + 1))
            lo = i + 1
    if lo < len(toks):
        out.append((lo, len(toks)))
    return out


def sentence_at(toks: Sequence[str], at: int) -> tuple[int, int]:
    """The token span of the sentence that holds word ``at``."""
    return next(((a, b) for a, b in sentence_spans(toks) if a <= at < b), (0, len(toks)))


def _bracketed(tok: str) -> bool:
    return bool(re.fullmatch(r"\([^()\s]+\)[.,;:]?", tok))


def _between_is_list(toks: Sequence[str], a: int, b: int) -> bool:
    """Only list separators (or a bracket) between tokens ``a`` and ``b``: "2.0 and 0.8",
    "400,000 (550,000)"."""
    between = [t.strip(",;").lower() for t in toks[a + 1 : b]]
    return b == a or all(t in _SEPARATORS for t in between) or " ".join(between) in IN_PLACE_OF


def _named_clause(toks: Sequence[str], items: tuple[list[Owner], int], end: int) -> bool:
    owners, at = items
    named = all(any(c.isupper() or c.isdigit() for c in o.text) for o in owners)
    return named and not any(t[-1] in ",;:" for t in toks[at + 1 : end])


def _items(toks: Sequence[str], lo: int, end: int, n: int) -> tuple[list[Owner], int] | None:
    """The ``n`` coordinated items nearest before token ``end`` ("α, and β", "A, B and C", "the
    training and the test sets"), each its distinguishing word, and the position of the last."""
    coordinators = [c for c in range(end - 1, lo, -1) if toks[c].lower() in ("and", "or")]
    for c in coordinators[:3]:
        after = c + 1
        while after < end and toks[after].lower() in _ARTICLES:
            after += 1
        if after >= end:
            continue
        found = [toks[after].strip(",;:")]
        j = c - 1
        found.insert(0, toks[j].strip(",;:"))
        while len(found) < n and j - 1 >= lo and toks[j - 1].endswith(","):
            j -= 1
            found.insert(0, toks[j].strip(",;:"))
        owners = [Owner(frozenset(_stems([f])), f) for f in found]
        if len(owners) == n and all(o.terms for o in owners) and len({o.terms for o in owners}) == n:
            return owners, after
    # "(CB, BoolQ, WSC)": a bracketed list of names, no coordinator
    for c in range(end - 1, lo - 1, -1):
        if not toks[c].startswith("(") or c + n > end:
            continue
        found = [toks[j].strip("(),;:") for j in range(c, c + n)]
        closed = all(toks[j].endswith(",") for j in range(c, c + n - 1)) and toks[c + n - 1].rstrip(
            ",;:."
        ).endswith(")")
        owners = [Owner(frozenset(_stems([f])), f) for f in found]
        named = all(any(ch.isupper() or ch.isdigit() for ch in f) for f in found)
        if closed and named and all(o.terms for o in owners) and len({o.terms for o in owners}) == n:
            return owners, c + n - 1
    return None


def _slashed(toks: Sequence[str], here: Sequence[Value], lo: int, hi: int) -> dict[Value, Owner]:
    """Slash pairs with "respectively": in "69.9/86.3 vs. 75.0/89.1 for WebQuestions and TREC,
    respectively" the i-th number of each pair is the i-th item's."""
    at = next((j for j in range(lo, hi) if toks[j].strip(".,;:()").lower() == "respectively"), None)
    if at is None:
        return {}
    groups: dict[int, list[Value]] = {}
    for v in here:
        groups.setdefault(v.start, []).append(v)
    out: dict[Value, Owner] = {}
    for start, group in groups.items():
        if len(group) < 2 or "/" not in toks[start]:
            continue
        items = (_items(toks, start, at, len(group)) if at > start else None) or _items(
            toks, lo, start, len(group)
        )
        if items:
            out.update(zip(group, items[0], strict=False))
    return out


def _aligned(toks: Sequence[str], found: Sequence[Value], lo: int, hi: int) -> dict[Value, Owner]:
    """Numbers of a list aligned with a list of items: "α, and β to, respectively, 2.0 and 0.8";
    "MNLI (SNLI) contains 400,000 (550,000) … and 20,000 (10,000)"."""
    here = sorted((v for v in found if lo <= v.start < hi and v.unit != "word"), key=lambda v: v.start)
    out: dict[Value, Owner] = {}
    pairs = [
        i
        for i in range(lo, hi - 1)
        if _bracketed(toks[i + 1]) and re.search("[A-Za-z]", toks[i + 1]) and _stems([toks[i]])
    ]
    if len(pairs) == 1:  # "MNLI (SNLI)": a name and its parallel in brackets
        first = Owner(frozenset(_stems([toks[pairs[0]]])), toks[pairs[0]])
        second = Owner(frozenset(_stems([toks[pairs[0] + 1]])), toks[pairs[0] + 1].strip("().,;:"))
        for a, b in pairwise(here):
            if b.start == a.start + 1 and _bracketed(toks[b.start]) and comparable(a, b) and first != second:
                out[a], out[b] = first, second
    respectively = any(t.strip(".,;:()").lower() == "respectively" for t in toks[lo:hi])
    out.update(_slashed(toks, here, lo, hi))
    run: list[Value] = []
    for v in [*here, None]:
        if (
            v is not None
            and run
            and comparable(run[-1], v)
            and _between_is_list(toks, run[-1].start, v.start)
        ):
            if v.start != run[-1].start:
                run.append(v)
            continue
        if len(run) >= 2 and not any(r in out for r in run):
            items = _items(toks, lo, run[0].start, len(run))
            after = next(
                (j for j in range(run[-1].start, hi) if toks[j].strip(".,;:()").lower() == "respectively"), 0
            )
            if respectively and not items and after:  # "… 56 and 104 on CB and WSC, respectively"
                items = _items(toks, run[-1].start + 1, after, len(run))
            # Without "respectively" only names in the same clause: "BERT and RoBERTa reach 84.6 and 86.7".
            if items and (respectively or _named_clause(toks, items, run[0].start)):
                out.update(zip(run, items[0], strict=False))
        run = [v] if v is not None else []
    labelled = _labelled(toks, here, hi)
    out.update({v: o for v, o in labelled.items() if v not in out})
    return out


_LABEL_ENDS = frozenset(
    ["and", "or", "while", "whereas", "but", "respectively", "after", "before", "with", "without", "using",
     "under", "by", "at", "from", "when", "where", "than"]
)  # fmt: skip


def _labelled(toks: Sequence[str], here: Sequence[Value], hi: int) -> dict[Value, Owner]:
    """Numbers each said "on", "for" or "in" an item of its own: "88.55% on ImageNet, 90.72% on
    ImageNet-ReaL, …, and 77.63% on the VTAB suite" (two or more, all of one kind, items distinct)."""
    out: dict[Value, Owner] = {}
    opening: dict[Value, Value] = {}  # the count an item opens with ("12-shot"): the item's too
    here = [v for v in here if v.unit not in ("±", "ci")]  # a spread or interval is its value's
    starts = {v.start: v for v in here}
    for v in here:
        at = v.start + 1
        if at < hi and toks[at].startswith("("):  # "1.02 (CI=0.73–1.42) for HDL": past the bracket
            at = next((j + 1 for j in range(at, hi) if ")" in toks[j]), hi)
        if toks[at : at + 1] == ["of"]:  # "24 of the 29 tasks in the 1-shot setting": past the whole
            whole = next((j for j in range(at + 1, min(hi, at + 3)) if j in starts), None)
            at = whole + 2 if whole is not None else at
        change = at + 1 if toks[at : at + 1] == ["to"] and at + 1 in starts else None
        at += 2 if change else 0  # "74.4% to 82.1% on GSM8K": both are GSM8K's
        if at >= hi or toks[at].lower() not in ("on", "for", "in") or v in out:
            continue
        words: list[str] = []
        for j in range(at + 1, min(hi, at + 7)):
            # (an item may open with a count: "96% for four doses per week", "33.2 in 12-shot E2E-NLG")
            first = at + 2 if toks[at + 1].lower() in _ARTICLES else at + 1
            opens = j == first and starts.get(j, v).unit in ("word", "-")
            if (j in starts and not opens) or toks[j].lower() in _LABEL_ENDS:
                break
            if opens and j in starts:
                opening[v] = starts[j]
            words.append(toks[j].strip(".,;:()"))
            if toks[j][-1] in ",;:.)":
                break
        item = _stems(words) | {w.lower() for w in words[:1] if number_word(w.lower()) is not None}
        if item:
            out[v] = Owner(frozenset(item), " ".join(w for w in words if w.lower() not in _ARTICLES))
            if change:
                out[starts[change]] = out[v]
    said = sorted(out, key=lambda v: v.start)
    if len(said) < 2 or not all(comparable(a, b) for a, b in pairwise(said)):
        return {}
    if len({o.terms for o in out.values()}) < len({id(o) for o in out.values()}):
        return {}  # the same item twice: not a list of items
    return out | {count: out[v] for v, count in opening.items() if v in out}


_FINITE = frozenset(["is", "are", "was", "were", "has", "have", "had", "uses", "used", "use"])


def _clauses(toks: Sequence[str], found: Sequence[Value], lo: int, hi: int, v: Value) -> dict[Value, Owner]:
    """Numbers of ``v``'s kind given in clauses of their own in one sentence ("80% … in movies and
    books, but only 67-73% … in grocery and electronics"; "fewer samples (403) than Multi-LexSum
    does (4,500)"): each number's words are the words of its clause that no other part of the
    sentence says — from the number on for the first (the words before it are the sentence's
    subject, said of all), from the clause's start for the others."""
    # a count in words beside written numbers is its clause's subject ("The three smaller models are
    # trained with a batch size of 256 and the largest … of 1024"), not a value of its own
    here = [
        w
        for w in found
        if lo <= w.start < hi
        and comparable(w, v)
        and (w.start == v.start or not _sized(toks, w.start))
        and (w.unit != "word" or v.unit == "word")
        and not other_measures(toks, w, toks, v)
    ]
    starts = sorted({w.start for w in here})
    # parallel clauses of "from A to B" pairs ("the compile rate improved from 82.1% to 83.4% and the
    # success rate … from 66.8% to 70.2%"): each pair's second number is its first's clause
    joined = {b: a for a, b in pairwise(starts) if b == a + 2 and _from_to(toks, a)}
    if 2 * len(joined) == len(starts):
        starts = [s for s in starts if s not in joined]
    else:
        joined = {}
    if len(starts) < 2 or any(in_table(found, w) for w in here):
        return {}
    if any(_between_is_list(toks, a, b) or (_bracketed(toks[b]) and b == a + 1) for a, b in pairwise(starts)):
        return {}  # a list of numbers ("2.0 and 0.8"): the items they are aligned with say whose
    # The first clause from its number on: the words before are the sentence's subject, said of all —
    # unless a model named by its size stands between a clause break (or the start) and it ("…: the 172M model
    # improves with up to 10 neighbours, whereas the 7B model …"): that is the first clause's own.
    first = max((j for j in range(lo + 1, starts[0]) if toks[j - 1][-1] in ",;:"), default=lo)
    first = first if any(_sized(toks, j) for j in range(first, starts[0])) else starts[0]
    # … or when the next clause says the same of a subject of its own, with a verb of its own ("The
    # three smaller models are trained with a batch size of 256 and the largest model is trained with
    # a batch size of 1024"; not "…, and to the prompted base model 64%", which is said of the first)
    then = toks[_cut(toks, starts[0], starts[1]) : starts[1]]
    subject, second = _stems(toks[lo : starts[0]]), _stems(then)
    # (a verb of the first clause said again counts: "the compile rate improved from … and the
    # success rate … improved from …")
    # (… or a verb in -s said again: "English-German language pair observes a 13 BLEU increase and
    # English-French language pair observes a 17 BLEU increase")
    again = {t.lower() for t in then}
    verbs = _FINITE | {
        t.lower()
        for j, t in enumerate(toks[lo : starts[0]], lo)
        if t.lower().endswith("ed") or (t.endswith("s") and t in again and toks[j + 1].lower() in _ARTICLES)
    }
    if len(subject & second) >= 2 and second - subject and {t.lower() for t in then} & verbs:
        first = lo
    bounds = [first, *(_cut(toks, a, b) for a, b in pairwise(starts)), hi]
    out: dict[Value, Owner] = {}
    for k, s in enumerate(starts):
        end = bounds[k + 1]
        if toks[s].startswith("("):  # "25 examples (5 per class) and …": the bracket is 5's clause
            end = next((j + 1 for j in range(s, end) if ")" in toks[j]), end)
        before = starts[k - 1] if k else s
        if k and k == len(starts) - 1 and not _stems(toks[before + 1 + len(_noun(toks, before)) : bounds[k]]):
            # "A obtains 72.1 BLEU and B 70.4 BLEU on the test set": nothing stands after the number
            # before it, so what follows the last is said of both.
            end = min(end, s + 1 + len(_noun(toks, s)))
        own = range(bounds[k], end)
        rest = [toks[j] for j in range(lo, hi) if j not in own]
        # The noun the first number counts, when a later number leaves it out ("91.2% accuracy on the
        # clean set, but only 63.5% on the noisy"): it is said of both, and tells neither apart.
        elided = k == 0 and any(not _noun(toks, t) and toks[t - 1].lower() not in _LINKS for t in starts[1:])
        counted = _stems(_noun(toks, s)) if elided else set()
        words = _stems([toks[j] for j in own]) - _stems(rest) - counted
        text = " ".join(
            toks[j].strip(".,;:()")
            for j in own
            if _stems(toks[j : j + 2 if _sized(toks, j) else j + 1]) & words
        )
        for w in here:
            if w.start == s or joined.get(w.start) == s:
                out[w] = Owner(frozenset(words), text)
    return out


def _from_to(toks: Sequence[str], a: int) -> bool:
    """Whether the number at token ``a`` opens a "from A to B" pair."""
    return a > 0 and toks[a - 1].lower() == "from" and toks[a + 1].lower() == "to"


def _noun(toks: Sequence[str], at: int) -> list[str]:
    """Up to two words right after the number at token ``at`` ("12 layers", "41% of the problems"),
    before a preposition or break."""
    out: list[str] = []
    after = at + 1
    if after < len(toks) and toks[after].lower() == "of":
        after += 1 + (after + 1 < len(toks) and toks[after + 1].lower() in _ARTICLES)
    for tok in toks[after : after + 2]:
        word = tok.strip(".,;:()")
        if not word or not term_list(word) or NUMBER.search(word) or tok.startswith("("):
            break
        out.append(word)
        if tok[-1] in ".,;:)":
            break
    return out


def _cut(toks: Sequence[str], a: int, b: int) -> int:
    """Where the clause of a number at token ``a`` ends and the next number's (at ``b``) begins: at
    the first clause break after ``a`` ("…, improving over the best results, by over 2 BLEU": the
    participle is 2's), else at the last joining word ("(403) than Multi-LexSum does (4,500)"),
    else at ``b``."""
    for j in range(a + 1, b):
        if toks[j - 1][-1] in ",;:":
            return j
    return max((j for j in range(a + 1, b) if toks[j].lower() in _CLAUSE_WORDS), default=b)


def owners(text: str, v: Value) -> dict[Value, Owner]:
    """Whose each number of ``v``'s sentence is (``v`` included), by an aligned list or by clause;
    empty when neither says."""
    toks = tokens(text)
    found = values(text)[1]
    for lo, hi in sentence_spans(toks):
        if lo <= v.start < hi:
            aligned = _aligned(toks, found, lo, hi)
            if v in aligned:
                return _long_names(toks, aligned)
            return _bracket_clauses(toks, found, lo, hi, v) or _clauses(toks, found, lo, hi, v)
    return {}


def _bracket_clauses(
    toks: Sequence[str], found: Sequence[Value], lo: int, hi: int, v: Value
) -> dict[Value, Owner]:
    """Numbers of ``v``'s kind each given in a bracket after its clause ("had no episodes of emesis
    (127/212 (60%) vs 100/215 (47%); P = 0.004) and experienced no postoperative nausea (135/211 (64%)
    vs …)"): a bracket's numbers are the words before it since the last bracket and its own ("(65.2%
    vs. 42.9% in Top-5 accuracy)"), less the others'."""
    groups: list[tuple[int, int]] = []
    depth, start = 0, None
    for j in range(lo, hi):
        opened, closed = toks[j].count("("), toks[j].count(")")
        if depth == 0 and opened:
            start = j
        depth = max(0, depth + opened - closed)
        if depth == 0 and start is not None:
            groups.append((start, j))
            start = None
    here = [w for w in found if lo <= w.start < hi and comparable(w, v) and w.unit == v.unit]
    held = [[w for w in here if a <= w.start <= b] for a, b in groups]
    # (each bracket a pair or more, "60% vs 47%": one number in brackets is its clause's, see _clauses)
    if (
        sum(len(h) >= 2 for h in held) < 2
        or sum(map(len, held)) < len(here)
        or any(len(h) == 1 for h in held)
    ):
        return {}
    spans, before = [], lo
    for (_, b), numbers in zip(groups, held, strict=True):
        if numbers:
            spans.append((range(before, b + 1), numbers))
            before = b + 1
    out: dict[Value, Owner] = {}
    for k, (span, numbers) in enumerate(spans):
        rest = _stems([toks[j] for m, (other, _) in enumerate(spans) if m != k for j in other])
        words = _stems([toks[j] for j in span]) - rest
        text = " ".join(toks[j].strip(".,;:()") for j in span if _stems([toks[j]]) & words)
        out.update({w: Owner(frozenset(words), text) for w in numbers})
    return out


def listed_owners(text: str) -> dict[int, Owner]:
    """By word position, the item an aligned list gives each of its numbers to ("the United Kingdom,
    India and Canada represent 7%, 3.4% and 2.5%, respectively")."""
    toks = tokens(text)
    found = values(text)[1]
    out: dict[int, Owner] = {}
    before: list[tuple[Value, Owner]] = []  # the items of the sentence before, in order
    for lo, hi in sentence_spans(toks):
        aligned = _long_names(toks, _aligned(toks, found, lo, hi))
        out.update({v.start: o for v, o in aligned.items()})
        # "… 33.2 in 12-shot E2E-NLG and 48.0 in 10-shot WebNLG. PaLM gets 35.2 and 44.4 …": a bare
        # list of as many numbers of the kind, in the next sentence, is given to the same items
        items = [(v, o) for v, o in sorted(before, key=lambda p: p[0].start) if v.unit not in ("word", "-")]
        bare = [v for v in found if lo <= v.start < hi and items and comparable(v, items[0][0])]
        if (
            not aligned
            and len(bare) == len(items) >= 2
            and all(_between_is_list(toks, a.start, b.start) for a, b in pairwise(bare))
        ):
            out.update({v.start: o for v, (_, o) in zip(bare, items, strict=True)})
        before = list(aligned.items())
    return out


def _long_names(toks: Sequence[str], aligned: dict[Value, Owner]) -> dict[Value, Owner]:
    """An item that is an acronym the passage elsewhere writes inside a longer name ("TREC" for
    "CuratedTREC", not itself an item) is that name too."""
    items = {o.text for o in aligned.values()}
    out = {}
    for v, o in aligned.items():
        longer = {
            re.sub(r"[^a-z0-9]", "", t.lower())
            for t in (tok.strip(".,;:()[]") for tok in toks)
            if re.fullmatch(r"[A-Z]{3,}", o.text) and o.text in t and t != o.text and t not in items
        }
        out[v] = Owner(o.terms | frozenset(longer), o.text) if len(longer) == 1 else o
    return out


def _named_item(text: str, v: Value) -> bool:
    """Whether ``v`` is given to an item by name ("1.02 … for HDL", "7%, 3.4% and 2.5%, respectively"
    after the countries), not only by the words of its clause."""
    listed = listed_owners(text)
    if v.start not in listed:
        return False
    found = {w.start: w for w in values(text)[1]}
    item = listed[v.start].terms
    return not any(
        o.terms == item and at != v.start and at in found and comparable(found[at], v)
        for at, o in listed.items()
    )


def said_of(text: str, v: Value) -> tuple[set[str], bool]:
    """What the claim says its number ``v`` is of: the item it is aligned with (and True), else the
    words of its clause, with a fronted phrase ("With an off-the-shelf retriever, …") that scopes
    the sentence."""
    toks = tokens(text)
    found = values(text)[1]
    for lo, hi in sentence_spans(toks):
        if not lo <= v.start < hi:
            continue
        aligned = _aligned(toks, found, lo, hi)
        if v in aligned:
            return set(aligned[v].terms), True
        together = partners(text)
        here = sorted(
            {
                w.start
                for w in found
                if lo <= w.start < hi
                and comparable(w, v)
                and not _sized(toks, w.start)
                and (w.unit != "word" or v.unit == "word")
                # (a range of model sizes, "from 62B to 540B", is no rival clause of a BLEU gain)
                and (
                    w.unit == v.unit or not _SIZE.fullmatch(w.text) or not any(w.start in p for p in together)
                )
            }
            | {v.start}
        )
        front = next((j for j in range(lo, hi) if toks[j][-1] in ",;:"), None)
        fronted = (
            _stems(toks[lo : front + 1]) if front is not None and all(s > front for s in here) else set()
        )
        k = here.index(v.start)
        start = _cut(toks, here[k - 1], v.start) if k else lo
        end = _cut(toks, v.start, here[k + 1]) if k + 1 < len(here) else hi
        counts = {t.lower().strip(".,;:") for t in toks[start:end] if number_word(t.lower().strip(".,;:"))}
        return _stems(toks[start:end]) | counts | fronted, False
    return set(), False


def gainsaid(claim: str, mine: Value, passage: str, v: Value) -> tuple[str | None, list[Value]]:
    """Whether an aligned list or parallel clauses give the passage's ``v`` (the claim's number
    ``mine``) to something else than the claim says it of: the claim says it of another item's or
    clause's words and of none of its own (the reason why), or of its own and of no other's (then
    those others, whose words are its words too, are not its rivals; nor is ``v``, if a list names it)."""
    theirs = owners(passage, v)
    if v not in theirs:
        return None, []
    own = theirs[v].terms
    said, aligned = said_of(claim, mine)
    claimed = values(claim)[1]
    others = [
        (w, o)
        for w, o in theirs.items()
        if not same(w, v) and (aligned or not any(same(w, c) for c in claimed if c is not mine))
    ]
    others = [
        (w, o) for w, o in others if o.terms != own
    ]  # a number of the same item is told apart otherwise
    distinct = own - {t for _, o in others for t in o.terms}
    if said & distinct:
        if any(said & (o.terms - own) for _, o in others):
            # Both: the item's own noun decides, not a phrase after it that may scope the whole list
            # ("an 8x increase in model size and 10x increase in achievable performance over
            # state-of-the-art": "10x in model size over the state of the art" is the 8x's).
            heads = [(w, o) for w, o in others if _head(o.text) and _head(o.text) <= said]
            if not said & _head(theirs[v].text) and len(heads) == 1:
                w, other = heads[0]
                return (
                    f"the passage gives {w.text} for {' '.join(other.text.split()[:3])!r}, not {v.text}",
                    [],
                )
            return None, []
        return None, [w for w, _ in others] + ([v] if _named_item(passage, v) else [])
    for w, other in others:
        shared = said & (other.terms - own)
        if shared:
            words = [t.strip(".,;:()") for t in other.text.split() if _stems([t]) & shared] or [other.text]
            return f"the passage gives {w.text} for {' '.join(words)!r}, not {v.text}", []
    return None, []


_PREPOSITIONS = frozenset(
    ["over", "on", "in", "for", "at", "with", "from", "by", "than", "against", "of", "to"]
)


def _head(text: str) -> set[str]:
    """The stems of an item's words before its first preposition ("achievable performance" of
    "achievable performance over state-of-the-art")."""
    words = text.split()
    end = next((i for i, w in enumerate(words) if w.lower() in _PREPOSITIONS), len(words))
    return _stems(words[:end])


_RANGED = re.compile(rf"(?:{RANGE.pattern})|\d[\d,.]*[%×x]\s?[-–]\s?\d[\d,.]*[%×x]")


def ranges(text: str) -> list[tuple[Value, Value]]:
    """The ranges the text states: "67-73%", "from 1 to 64", "between 0 and 64"."""
    toks = tokens(text)
    out = []
    for a, b in pairwise(values(text)[1]):
        if not (comparable(a, b) or "" in (a.unit, b.unit)):
            continue
        joined = toks[a.start + 1].lower() if b.start == a.start + 2 else ""
        between = a.start > 0 and toks[a.start - 1].lower() == "between"
        if a.start == b.start:  # "67-73%", and "9%-19%" with the unit on both ends
            ranged = bool(_RANGED.fullmatch(toks[a.start].strip(".,;:()[]")))
        else:
            ranged = joined in ("to", "–", "-") or (joined == "and" and between)
        if ranged:
            out.append((a, b))
    return out


def range_gainsaid(claim: str, passage: str) -> str | None:
    """A range of the claim's that the passage states with one end the same and the other not
    ("between 0 and 64" against "from 1 to 64")."""
    stated = ranges(passage)
    for a, b in ranges(claim):
        if any(_end(a, c) and _end(b, d) for c, d in stated):
            continue
        for c, d in stated:
            if _end(a, c) != _end(b, d):
                return f"the passage gives the range {c.text} to {d.text}, not {a.text} to {b.text}"
    return None


_SUPERLATIVE_REACH = 10  # words from a superlative to the number it qualifies (in one clause)
_UPPER = re.compile(
    r"\b(?:highest|maximum|max|largest|greatest|upper|at most|up to|as (?:much|many|high|large) as)\b",
    re.IGNORECASE,
)
_LOWER = re.compile(r"\b(?:lowest|minimum|min|smallest|least)\b", re.IGNORECASE)


def extreme_gainsaid(claim: str, passage: str) -> str | None:
    """A range's one end said to be its other ("the highest temperature was 0.25" against "a range of
    0.25 to 0.5"), where the claim states only that end."""
    up, down = bool(_UPPER.search(claim)), bool(_LOWER.search(claim))
    if up == down:
        return None
    # only a number the superlative qualifies, in its clause: "the highest temperature they used was
    # 0.25", not the "18" of "the largest group is 25 to 44 …, and the under-18 share …"
    text = clean(claim)
    said = [len(text[: m.end()].split()) - 1 for m in (_UPPER if up else _LOWER).finditer(text)]
    stated = [v for v in values(claim)[1] if v.unit != "word"]
    toks = tokens(claim)
    mine = [
        v
        for v in stated
        if any(
            0 < v.start - i <= _SUPERLATIVE_REACH
            and not any(t[-1] in ",;:" or t.lower() in _CLAUSE_WORDS for t in toks[i : v.start])
            for i in said
        )
    ]
    for c, d in ranges(passage):
        low, high = sorted((c, d), key=lambda v: v.value)
        wrong, right = (low, high) if up else (high, low)
        if (
            low.value < high.value
            and any(same(v, wrong) for v in mine)
            and not any(same(v, right) for v in stated)
        ):
            end = "lowest" if up else "highest"
            return f"the passage gives {wrong.text} as the {end} of {low.text} to {high.text}"
    return None


def _end(mine: Value, theirs: Value) -> bool:
    """A range's end as the passage gives it, or rounded ("about 7 to 21 days" for "6.9-21.0")."""
    return same(mine, theirs) or rounds_to(theirs, mine)


def lists(text: str) -> list[list[Value]]:
    """Runs of numbers of one kind listed together ("batch sizes of 64, 128, 256, 512, and 1024")."""
    runs: list[list[Value]] = []
    for v in values(text)[1]:
        if v.unit == "word":
            continue
        if runs and v.start - runs[-1][-1].start <= 2 and comparable(v, runs[-1][-1]):
            runs[-1].append(v)
        else:
            runs.append([v])
    return runs


def list_spans(claim: str, passage: str) -> set[int]:
    """The positions of the claim's range ends that are the least and the greatest of a list the
    passage gives ("from 62 to 121 days" for "(62, 74, 112, 121 days)")."""
    out: set[int] = set()
    for a, b in ranges(claim):
        for run in lists(passage):
            low, high = min(run, key=lambda v: v.value), max(run, key=lambda v: v.value)
            if len(run) >= 3 and same(a, low) and same(b, high):
                out |= {a.start, b.start}
    return out


def stated_together(claim: str, passage: str) -> set[int]:
    """The positions of the numbers of a list the claim gives as the passage does, in its order
    ("either 5 or 10" for "k ∈ {5, 10}"; not a range, whose ends say from where to where): stated
    with its neighbours, a number has no rival in the words around it."""
    runs = lists(passage)
    ends = {e.start for pair in ranges(claim) for e in pair}
    out: set[int] = set()
    for mine in lists(claim):
        if (
            len(mine) >= 2
            and not {m.start for m in mine} & ends
            and any(
                len(run) == len(mine) and all(same(m, r) for m, r in zip(mine, run, strict=True))
                for run in runs
            )
        ):
            out |= {m.start for m in mine}
    # … and the two counts of a ratio the passage states ("Of 228 patients …, 121 had malaria")
    stated = ratios(passage)
    for n, m, _ in ratios(claim):
        if any(same(n, a) and same(m, b) for a, b, _ in stated):
            out |= {n.start, m.start}
    return out


# -- the numbers that make one statement ---------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def partners(text: str) -> frozenset[tuple[int, int]]:
    """Word positions of numbers that make one statement together: the two ends of a range ("3 to 5
    points"), the two counts of a ratio ("11 out of 12"), a number given in place of another ("16
    instead of 20 blocks"). Neither is the other's rival."""
    pairs = [(a.start, b.start) for a, b in ranges(text)] + [(n.start, m.start) for n, m, _ in ratios(text)]
    return frozenset(pairs + _alternatives(text) + [(b, a) for a, b in pairs])


def _alternatives(text: str) -> list[tuple[int, int]]:
    """A number given in place of another ("16 instead of 20 residual blocks", "50 instead of 800
    simulations"): the words after the second are the first's too. Which is whose is left to the
    words around them: the second is often another setting's, not a wrong one."""
    toks = [t.lower() for t in tokens(text)]
    pairs = [
        (a.start, b.start)
        for a, b in pairwise(values(text)[1])
        if b.start == a.start + 3 and " ".join(toks[a.start + 1 : b.start]) in IN_PLACE_OF
    ]
    return pairs + [(b, a) for a, b in pairs]
