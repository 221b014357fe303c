"""Negation, direction and the order of the things compared, for :mod:`chat.claims`.

A claim that a passage's sentence otherwise states is still not stated when it turns the sentence's
meaning round:

- **negation** must agree (:mod:`chat.negation`);
- **direction**: a comparison ("higher", "outperforms", "fewer") must agree with the passage's;
- **order and roles**: the two things compared in the same order ("A outperforms B" against "B
  outperforms A"), and the same roles in a replacement ("replace A with B", "A instead of B").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from chat.names import fold, holds_name, names
from chat.negation import LIGHT_VERBS, negated, unbroken
from chat.number_binding import listed_owners, partners
from chat.numbers import Value as _Value
from chat.numbers import comparable as _comparable
from chat.numbers import rounds_to as _rounds_to
from chat.numbers import same as _same
from chat.numbers import statistic
from chat.numbers import tokens as _tokens
from chat.numbers import values as _values
from retrieval.evidence import term_list, terms

_UP = [
    "higher",
    "more",
    "larger",
    "greater",
    "better",
    "faster",
    "increase",
    "increases",
    "increased",
    "increasing",
    "improve",
    "improves",
    "improved",
    "improving",
    "outperform",
    "outperforms",
    "outperformed",
    "exceed",
    "exceeds",
    "exceeded",
    "beat",
    "beats",
    "surpass",
    "surpasses",
    "surpassed",
    "above",
    "gain",
    "gains",
    "boost",
    "boosts",
    "superior",
    "longer",
    "deeper",
    "stronger",
    "speedup",
    "rose",
    "rise",
    "rises",
    "rising",
    "risen",
    "grew",
    "grow",
    "grows",
    "growing",
]
_DOWN = [
    "lower",
    "less",
    "fewer",
    "smaller",
    "worse",
    "slower",
    "decrease",
    "decreases",
    "decreased",
    "decreasing",
    "reduce",
    "reduces",
    "reduced",
    "reducing",
    "underperform",
    "underperforms",
    "underperformed",
    "below",
    "drop",
    "drops",
    "dropped",
    "degrade",
    "degrades",
    "degraded",
    "inferior",
    "shorter",
    "shallower",
    "weaker",
    "hurt",
    "hurts",
    "fell",
    "fall",
    "falls",
    "falling",
    "declined",
    "decline",
    "declines",
    "declining",
    "collapsed",
]
_OPPOSITES = """
    high low, linear quadratic, most least, greater least, increase decrease, trainable frozen,
    filtered unfiltered, keep discard, supervised unsupervised, positive negative, best worst,
    first last, large small, larger smaller, longer shorter, higher lower, long short,
    same different, independent joint, easy harder, easier harder, success fail, include exclude,
    before after, early later, earlier later, major minor, maximum minimum, open closed,
    largest smallest, highest lowest, largest lowest, highest smallest, biggest smallest,
    most fewest, validation test, retrospective prospective, acute chronic, benign malignant,
    inpatient outpatient, urban rural
"""  # (a validation figure is not a test figure, and the other way round; nor a study's design)
# Each pair a word and its opposite, stemmed as the lexical tokenizer stems ("before" is "befor"):
# written as stems, a pair the tokenizer never makes would never fire.
_ANTONYMS = [
    (term_list(a)[0], term_list(b)[0])
    for a, b in (pair.split() for pair in _OPPOSITES.replace("\n", " ").split(","))
]
_DIRECTION = {t: 1 for w in _UP for t in term_list(w)} | {t: -1 for w in _DOWN for t in term_list(w)}


# Quantities of which less is better: "a lower runtime" is "faster", "reduces the error" "improves".
_LESS_IS_BETTER = frozenset(term_list("time runtime latency error errors loss perplexity cost wer overhead"))
_SAYS_BETTER = frozenset(
    term_list("better worse faster slower improve improves improved improving superior inferior speedup")
    + term_list("outperform outperforms outperformed underperform underperforms underperformed")
)


def _directions(text: str) -> set[int]:
    """The directions of the comparisons in ``text`` (1 up, -1 down); "not" before one turns it, and
    so does a quantity of which less is better that it qualifies ("a lower runtime", "reduces the
    error"): said the way a quality is, "faster"."""
    found = set()
    words = unbroken(text).lower().split()
    for i, word in enumerate(words):
        if (i + 2 < len(words) and words[i + 1] == "than" and _BOUND.fullmatch(words[i + 2])) or (
            word in _BOUND_WORDS and i + 1 < len(words) and _BOUND.fullmatch(words[i + 1])
        ):
            continue  # "over 130 million … fewer than 400,000 parameters": bounds, not comparisons
        for t in term_list(word):
            if t in _DIRECTION:
                negated = any(  # "not only improves" adds, it does not negate
                    (w in ("not", "no", "never") or w.endswith("n't")) and words[j + 1] != "only"
                    for j, w in enumerate(words[max(0, i - 3) : i], start=max(0, i - 3))
                )
                if t not in _SAYS_BETTER and _qualified(words[i + 1 : i + 5]) & _LESS_IS_BETTER:
                    negated = not negated
                found.add(-_DIRECTION[t] if negated else _DIRECTION[t])
    # A bound written as a sign ("the datasets are very small (< 2000 questions)" says "fewer than
    # 2,000"), in a sentence that says no direction in words ("20-30x faster (< 20ms)" is faster).
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text):
        if not _worded(sentence):
            found |= {-1 if m.group(1) in "<≤" else 1 for m in _SIGNED.finditer(sentence)}
    return found


_BOUND = re.compile(
    r"[$€£]?\d[\d,.]*%?[KMBkm]?[,;:.)]?|one|two|three|four|five|six|seven|eight|nine|ten|a|half"
)
_BOUND_WORDS = frozenset(["over", "under", "above", "below", "beyond"])


# A bound as a sign that opens a bracket or a clause ("(< 2000 questions)"); after a name, a sign
# states a condition ("toxicity score > 0.5"), not which way the sentence compares.
_SIGNED = re.compile(r"(?:^|[(\[,;:]\s*)([<>≤≥])\s*\d")


def _worded(text: str) -> bool:
    return any(t in _DIRECTION for w in text.lower().split() for t in term_list(w))


_PHRASE_ENDS = frozenset(
    [
        "of",
        "for",
        "on",
        "in",
        "with",
        "than",
        "and",
        "or",
        "by",
        "to",
        "at",
        "from",
        "as",
        "while",
        "when",
        "that",
        "which",
    ]
)


def _qualified(words: Sequence[str]) -> set[str]:
    """The stems of the noun phrase ``words`` begin with ("the top-1 error by …": top, 1, error),
    up to a function word or a clause break."""
    out: set[str] = set()
    for w in words:
        if w.strip(",;:.()") in _PHRASE_ENDS:
            break
        out.update(term_list(w))
        if re.search(r"[,;:.()]$", w):
            break
    return out


def word(stem: str, text: str) -> str:
    """The first word of ``text`` with this stem, as written ("validation" for "valid"): what a
    reader is shown; the stem itself when none is found."""
    for word in re.findall(r"[^\W\d_][\w-]*", text):
        if term_list(word) == [stem]:
            return word
    return stem


_AMOUNT = re.compile(r"\b(more|fewer|less)\s+([a-z][a-z-]+)", re.IGNORECASE)
_AMOUNTS = {"more": 1, "fewer": -1, "less": -1}


def amount_swapped(claim: str, window: str) -> str | None:
    """ "five times more parameters" where the passage's sentence says "5x fewer parameters" (and
    never "more parameters"): an amount of the same thing, the other way."""

    def said(text: str) -> dict[tuple[int, str], str]:
        return {
            (_AMOUNTS[m.group(1).lower()], t): m.group()
            for m in _AMOUNT.finditer(text)
            for t in term_list(m.group(2))[:1]
            if m.group(2).lower() not in ("than", "and", "or")
        }

    theirs = said(window)
    for (way, noun), text in said(claim).items():
        if (-way, noun) in theirs and (way, noun) not in theirs:
            return f"the passage says {theirs[(-way, noun)]!r} where this says {text!r}"
    return None


def antonym(mine: set[str], theirs: set[str]) -> tuple[str, str] | None:
    """A word of the claim's (stems ``mine``) whose opposite the passage's sentence says instead
    (stems ``theirs``), and not the word."""
    for a, b in _ANTONYMS:
        for word, opposite in ((a, b), (b, a)):
            if word in mine and opposite in theirs and word not in theirs and opposite not in mine:
                return word, opposite
    return None


# Where a thing stands against another: "after the activation" is not "before the activation".
_PLACES = {
    a: b
    for pair in ("before after", "above below", "pre post")
    for a, b in (pair.split(), pair.split()[::-1])
}
_PLACED = re.compile(r"\b(before|after|above|below|pre|post)[\s-]+((?:[\w'’-]+\s+){0,2}[\w'’-]+)", re.I)


def _placed(text: str) -> set[tuple[str, str]]:
    """(where, what): each place word with the first content word after it ("after the attention
    softmax": after, attent)."""
    out = set()
    for match in _PLACED.finditer(text):
        stems = term_list(match.group(2))
        if stems:
            out.add((match.group(1).lower(), stems[0]))
    return out


def placed_swapped(claim: str, passage: str) -> tuple[str, str] | None:
    """The claim puts a thing before (after, above …) what the passage puts it after, and never
    before: the place word the passage says, and the claim's."""
    theirs = _placed(passage)
    # "31% before the change to 22% afterwards": the bare other place is said of the same thing
    for bare, where in (("afterward", "after"), ("beforehand", "before"), ("thereafter", "after")):
        if re.search(rf"\b{bare}", passage, re.IGNORECASE):
            theirs |= {(where, what) for w, what in theirs if w == _PLACES[where]}
    for where, what in _placed(claim):
        if (where, what) not in theirs and (_PLACES[where], what) in theirs:
            return _PLACES[where], where
    return None


def opposed(claim: str, window: str) -> bool:
    """The claim compares one way, the passage's sentence only the other way."""
    mine, theirs = _directions(claim), _directions(window)
    return len(mine) == 1 and bool(theirs) and not mine & theirs and not _turned_round(claim, window)


def _turned_round(claim: str, window: str) -> bool:
    """The claim's two compared sides stand in the sentence in the other order: "A is 17 points
    below B" says what "B surpasses A by 17 points" says (each side named once in each, and
    neither sentence passive)."""
    shared = [n for n in dict.fromkeys(names(claim, anywhere=True)) if holds_name(window, n)]
    sides = _compared(claim, shared)
    if sides is None or _passive(claim, *sides) or _passive(window, *sides):
        return False
    if any(_FRONTED_AGAINST.search(t) for t in (claim, window)):
        return False  # "Compared to A, B is …": a side fronted (sides_swapped's)
    at = [[_words_at(text, n) for n in sides] for text in (claim, window)]
    if any(len(found) != 1 for pair in at for found in pair):
        return False
    (a, b), (c, d) = ((x[0], y[0]) for x, y in at)
    return (a < b) != (c < d)


def _words_at(text: str, name: str) -> list[int]:
    """Where ``name`` stands in ``text`` as a word of its own ("SAM2", not in "SAM2S")."""
    return [m.start() for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE)]


_SPEEDUP = re.compile(r"\bspeed[- ]up\b", re.IGNORECASE)  # "a 2x speed up over HTML": one comparative


def order_swapped(claim: str, window: str) -> bool:
    """ "A outperforms B" against "B outperforms A": the two names around the claim's comparison (the
    nearest before its first comparative word and after it), in the other order (the passive voice
    aside). Where the claim states a number the passage states, the order is judged in that number's
    clause ("BART was more factual than RAG in 7.1% of cases, while RAG was more factual in 42.7%")."""
    claim, window = (_SPEEDUP.sub("speedup", t) for t in (claim, window))
    # a capitalised first word is a name when the passage's sentence writes it as one ("Adam is …")
    first = re.match(r"[A-Z][a-z]{2,}\b", claim)
    theirs = {fold(n) for n in names(window, anywhere=True)}
    lead = [first.group()] if first and fold(first.group()) in theirs else []
    shared = list(dict.fromkeys(n for n in [*lead, *names(claim, anywhere=True)] if holds_name(window, n)))
    if len(shared) < 2 or not _directions(claim) or any(_FRONTED_AGAINST.search(t) for t in (claim, window)):
        return False  # (a fronted side, "Compared to A, B is …", is sides_swapped's)
    compared = _compared(claim, shared)
    if compared is None and not _after_comparison(claim, shared):
        return False  # no name after the comparison: a condition and a subject, not two sides
    a, b = compared or (shared[0], shared[1])
    text = _clause_stating(claim, window) or window
    if not _directions(text) or _passive(claim, a, b) or _passive(text, a, b):
        return False  # a passage that lists the two (with their numbers) does not order them
    a, b = fold(a), fold(b)
    fa, fb = fold(claim), fold(text)
    if a not in fb or b not in fb:
        return False
    return (fa.find(a) < fa.find(b)) != (fb.find(a) < fb.find(b))


def _passive(text: str, a: str, b: str) -> bool:
    """ "… is outperformed by …" between the two names (not elsewhere in the text)."""
    i, j = sorted((_fold_find(text, a), _fold_find(text, b)))
    return i >= 0 and bool(re.search(r"\w+ed by\b", text[i:j]))


def _fold_find(text: str, name: str) -> int:
    """Where ``name`` begins in ``text`` (ignoring case, spaces and hyphens), -1 if nowhere."""
    key = fold(name)
    for m in re.finditer(r"\S", text):
        if fold(text[m.start() : m.start() + 3 * len(name) + 8]).startswith(key):
            return m.start()
    return -1


def _compared(claim: str, names: Sequence[str]) -> tuple[str, str] | None:
    """The names nearest before and after the claim's first comparative word ("the BM25 baseline
    outperforms DPR": BM25, DPR)."""
    at = _comparative_at(claim)
    if at is None:
        return None
    where = {n: claim.find(n) for n in names}
    # a name owned by the one before it is that one's side ("DPR's top-5 accuracy is above BM25's")
    owned = {n for n in names if re.search(r"\S['’]s\s+$", claim[: max(where[n], 0)])}
    before = [n for n in names if 0 <= where[n] < at and n not in owned]
    after = [n for n in names if where[n] > at]
    if not before or not after:
        return None
    return max(before, key=lambda n: where[n]), min(after, key=lambda n: where[n])


def _after_comparison(claim: str, names: Sequence[str]) -> bool:
    """Some of ``names`` stand after the claim's first comparative word ("a lower runtime for DPR and
    a comparable one for GAR")."""
    at = _comparative_at(claim)
    return at is not None and any(claim.find(n) > at for n in names)


def _comparative_at(claim: str) -> int | None:
    return next(
        (
            m.start()
            for m in re.finditer(r"[a-z]+", claim.lower())
            if any(t in _DIRECTION for t in term_list(m.group()))
        ),
        None,
    )


def _clause_stating(claim: str, window: str) -> str | None:
    """The clause of ``window`` that states one of the claim's numbers (between clause breaks and
    words that join clauses), or None."""
    mine = _values(claim)[1]
    toks = _tokens(window)
    depth, ends = 0, []  # a comma inside brackets ("mAP@[.5, .95]") ends no clause
    for t in toks:
        depth = max(0, depth + t.count("[") + t.count("(") - t.count("]") - t.count(")"))
        ends.append(t[-1] in ",;:." and not depth)
    for v in _values(window)[1]:
        if not any(_same(v, m) or _rounds_to(v, m) for m in mine if m.unit != "word"):
            continue
        lo = v.start
        while lo > 0 and not ends[lo - 1] and toks[lo].lower() not in ("while", "whereas", "but"):
            lo -= 1
        hi = v.start
        while hi < len(toks) - 1 and not ends[hi]:
            hi += 1
        return " ".join(toks[lo : hi + 1])
    return None


_BREAK = re.compile(r"[,;:()]|\b(?:and|but|while|whereas|which|that|to)\b", re.IGNORECASE)
_WORDS = r"((?:[\w'’.-]+\s+){0,3}?[\w'’.-]+)"  # one to four words, as few as the pattern allows
_REPLACED = re.compile(rf"\b(?:is|are|was|were|be|been|being)\s+replaced\s+(?:with|by)\s+{_WORDS}", re.I)
_REPLACE = re.compile(rf"\breplac(?:e|es|ed|ing)\s+{_WORDS}\s+(?:with|by)\s+{_WORDS}", re.I)
_INSTEAD = re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+", re.I)
_UNLIKE = re.compile(r"\b(?:unlike|in\s+contrast\s+to|as\s+opposed\s+to)\s+([^,;:.]+),\s*", re.I)
_PREDICATE = re.compile(
    r"\b(?:is|are|was|were|has|have|had|can|could|does|do|did|will|would|uses?|used|needs?|requires?)\b",
    re.I,
)


def roles(text: str) -> list[tuple[set[str], set[str]]]:
    """What ``text`` keeps and what it drops, as stems: "replace A with B" and "A is replaced by B"
    keep B and drop A; "B instead of A" (or "rather than", "in place of") keeps B and drops A. Each
    side is at most four words and stops at a clause break."""

    def side(words: str, *, backwards: bool = False) -> set[str]:
        if backwards:  # "the logits (the inputs to the final softmax) rather than …"
            words = re.sub(r"(?:\s*\([^()]*\))+\s*$", "", words)
        parts = _BREAK.split(words)
        chosen = parts[-1] if backwards else parts[0]
        picked = chosen.split()[-4:] if backwards else chosen.split()[:4]
        return {t for t in terms(" ".join(picked)) if not any(c.isdigit() for c in t)}  # numbers aside

    pairs = []
    for m in _UNLIKE.finditer(text):  # "Unlike A, B is …": B is what the sentence speaks of
        subject, other = _PREDICATE.split(text[m.end() :])[0], m.group(1)
        every = names(text, anywhere=True)  # read in the sentence: "Adam" after "Unlike Lion, " is one
        named = [n for n in every if n in subject], [n for n in every if n in other]
        if all(named):  # the names, when both sides are named ("Unlike Adam, Lion keeps …")
            subject, other = (" ".join(n) for n in named)
        pairs.append((side(subject), side(other)))
    for m in _REPLACED.finditer(text):
        pairs.append((side(m.group(1)), side(text[: m.start()], backwards=True)))
    for m in _REPLACE.finditer(text):
        if not re.match(r"(?:with|by)\b", m.group(1), re.I):  # "replaced with B" is the passive's
            pairs.append((side(m.group(2)), side(m.group(1))))
    for m in _INSTEAD.finditer(text):
        if re.search(r"\d\s*$", text[: m.start()]) and re.match(r"\d", text[m.end() :]):
            continue  # "16 instead of 20 residual blocks": one thing's two numbers, for the number checks
        before = text[: m.start()].rstrip()
        if before.endswith(",") and re.match(r"[^,.;:]*,", text[m.end() :]):
            before = before[:-1]  # "A, rather than B, as …": an aside, A is what is kept
        pairs.append((side(before, backwards=True), side(text[m.end() :])))
    return [(kept - dropped, dropped - kept) for kept, dropped in pairs if dropped - kept]


def roles_swapped(claim: str, window: str) -> str | None:
    """The claim keeps what the passage's sentence drops: "replace B with A" against "replace A with
    B", "B instead of A" against "A instead of B" — or, stating no roles and no negation itself, says
    what the sentence names only as dropped ("grows quadratically" against "grows linearly, instead of
    quadratically")."""
    theirs = roles(window)
    mine = roles(claim)
    said = terms(window)
    twice = {t for t, n in Counter(term_list(claim)).items() if n > 1}  # said of both sides
    for my_kept, my_dropped in mine:
        # "depends on all states rather than only on the latest state" against "depends only on the
        # latest state": the claim drops what the sentence says, and keeps nothing it says
        own = my_kept - twice
        if own and my_dropped <= said and not own & said and not negated(window, my_dropped):
            shown = ", ".join(word(t, window) for t in sorted(my_dropped))
            return f"the passage says {shown}, which this says is not so"
    if not theirs:
        return None
    claimed = terms(claim)
    counts = Counter(term_list(window))
    for kept, dropped in theirs:
        for my_kept, my_dropped in mine:
            if my_kept & dropped and my_dropped & kept and not my_kept & kept - LIGHT_VERBS:
                return "the passage gives them the other roles (what it keeps and what it drops)"
        only_dropped = {t for t in dropped & claimed if counts[t] == 1}
        if only_dropped and not mine and not kept & claimed and not negated(claim, claimed):
            shown = ", ".join(word(t, window) for t in sorted(only_dropped))
            return f"the passage names {shown} only as what it does not use"
    return None


_CLAUSE = re.compile(r"[,;:](?!\d)|[()]|\b(?:that|which|while|whereas|but|and)\b", re.IGNORECASE)
_AGAINST = re.compile(r"\b(?:than|compared (?:to|with)|over)\b", re.IGNORECASE)
_VERBS = frozenset(
    term_list("outperform outperforms outperformed exceed exceeds exceeded underperform beat beats surpass")
)
# "the 18-layer ResNet": a number joined to its word tells the two sides of one name apart
_NUMBERED = re.compile(r"\b(\d+)-(?=[a-z])", re.IGNORECASE)


def _sides(text: str) -> list[tuple[int, set[str], set[str]]]:
    """Each comparison of ``text`` as (direction, the stems of what is compared, of what it is
    compared with): the words before its comparative word back to a clause break, and those after
    "than" (or "compared to", or a verb such as "outperforms") up to one; five content words a side."""
    found = []
    text = _PREFIXED.sub(r"\1\2", _NUMBERED.sub(r"\1", text))
    seen = set()  # "greater mean improvement … than": one comparison, its first word's
    for m in re.finditer(r"[A-Za-z-]+", text):
        stems = [t for t in term_list(m.group()) if t in _DIRECTION]
        if not stems:
            continue
        after = text[m.end() :]
        against = _AGAINST.search(after)
        fronted = _FRONTED_AGAINST.search(text[: m.start()])
        between = ""
        if against and m.end() + against.start() in seen:
            continue
        if (
            against
            and re.search(r"(?:^|\b(?:more|less|fewer))\s*$", after[: against.start()])
            and _BOUND.fullmatch((after[against.end() :].split() or [""])[0])
        ):
            continue  # "more than 300,000 frames", "gained more than five points": a bound
        if against and len(after[: against.start()].split()) <= 6:
            seen.add(m.end() + against.start())
            between, after = after[: against.start()], after[against.end() :]
        elif fronted:  # "Compared to SQuALITY, PubMed is more extractive"
            after = fronted.group(1)
        elif stems[0] not in _VERBS:
            continue
        before = text[fronted.end() : m.start()] if fronted and not between else text[: m.start()]
        mine = set([t for t in term_list(_CLAUSE.split(before)[-1]) if not t.isdigit()][-5:])
        theirs = set([t for t in term_list(_CLAUSE.split(after)[0]) if not t.isdigit()][:5])
        compared = set(term_list(between))
        if compared & theirs and compared - theirs:
            mine = compared  # "more abstract text than full body text": the two texts are the sides
        found.append((_DIRECTION[stems[0]], mine - theirs, theirs - mine))
    return found


_FRONTED_AGAINST = re.compile(
    r"(?:^|[.;]\s+)(?:compared (?:to|with)|relative to|unlike) ([^,;]+),", re.IGNORECASE
)
# A prefix makes another thing of a word: "sub-optimal" is not "optimal", "non-fatal" not "fatal".
_PREFIXED = re.compile(r"\b(non|sub|semi|pseudo|anti|un|no)-([a-z])", re.IGNORECASE)


def sides_swapped(claim: str, window: str) -> bool:
    """ "A is more stable than B" against "B is more stable than A" when A and B are not names (those
    are :func:`order_swapped`'s): the claim's two sides hold more of the words of the passage's two
    sides crosswise than (or as many as) in order, each side some, and the comparison goes the same way."""
    mine = _sides(claim)
    named = len([n for n in names(claim, anywhere=True) if holds_name(window, n)]) >= 2
    # (names in their order are order_swapped's, unless a side is fronted: "Compared to A, B is …")
    if len(mine) != 1 or (named and not any(_FRONTED_AGAINST.search(t) for t in (claim, window))):
        return False
    way, left, right = mine[0]
    best = None
    for their_way, their_left, their_right in _sides(window):
        straight = len(left & their_left) + len(right & their_right)
        cross = len(left & their_right) + len(right & their_left)
        if best is None or straight + cross > best[0] + best[1]:
            best = (straight, cross, their_way, bool(left & their_right and right & their_left))
    return best is not None and best[1] >= best[0] and best[3] and best[2] == way


_SUPERLATIVE = re.compile(
    r"\b(?:best|worst|most|least|biggest|largest|smallest|highest|lowest|greatest|fastest|slowest"
    r"|strongest|weakest|longest|shortest)\s+([A-Za-z-]+)",
    re.IGNORECASE,
)


def superlative_swapped(claim: str, sentences: Sequence[str]) -> str | None:
    """ "Scaling the width gives the biggest gains" against "scaling the depth results in the biggest
    gains": the passage's sentence with the claim's superlative and noun says it of a subject that
    shares some of the claim's subject words but not a word of it the passage states elsewhere."""
    m = _SUPERLATIVE.search(claim)
    if not m:
        return None
    noun = set(term_list(m.group(1)))
    subject = terms(_CLAUSE.split(claim[: m.start()])[-1])
    said = []
    for text in sentences:
        for theirs in _SUPERLATIVE.finditer(text):
            if theirs.group().split()[0].lower() == m.group().split()[0].lower() and noun & set(
                term_list(theirs.group(1))
            ):
                said.append((text, terms(_CLAUSE.split(text[: theirs.start()])[-1])))
    if not said or any(subject <= terms(text) for text, _ in said):
        return None
    elsewhere = set().union(*(terms(t) for t in sentences if all(t != s for s, _ in said)))
    for _, their_subject in said:
        moved = (subject - their_subject) & elsewhere
        if subject & their_subject and moved and their_subject - subject:
            return f"the passage says {m.group()!r} of {', '.join(sorted(their_subject - subject))}"
    return None


_QUANTITY = frozenset(term_list("higher more larger greater lower less fewer smaller"))
_QUALITY = frozenset(term_list("outperform outperforms outperformed better worse underperform underperforms"))
_LOWER_IS_BETTER = frozenset(term_list("error loss perplexity wer latency time"))


def numbers_compared(claim: str, passage: str) -> str | None:
    """ "A outperforms B" (or "A has a smaller share than B") where the passage gives each side a
    number and the numbers go the other way: a passage number belongs to the side more of whose words
    stand among the ten before it in its sentence; of the numbers of one kind and unit, the pair bound
    most tightly (the first on a tie) is compared; numbers the claim states (its conditions) are no
    side's. A quality word ("outperforms", "better") is not judged when the passage speaks of an
    error, loss, perplexity or time (lower may be better)."""
    way, word = None, ""
    for m in re.finditer(r"[A-Za-z-]+", claim):
        stems = [t for t in term_list(m.group()) if t in _QUANTITY | _QUALITY]
        if stems:
            way, word = _DIRECTION[stems[0]], stems[0]
            break
    sides = _sides(claim)
    if way is None or len(sides) != 1 or not sides[0][1] or not sides[0][2]:
        return None
    _, left, right = sides[0]
    mine = _values(claim)[1]
    own = [v for v in mine if v.unit not in ("word", "±", "ci")]
    if (
        len(own) == 2
        and _comparable(*own)
        and own[0].unit == own[1].unit
        and own[1].start - own[0].start <= 3
        and (own[0].start, own[1].start) not in partners(claim)  # a range ("2-3 links") is no two sides
    ):
        # the claim gives each side its number side by side ("75.2 versus 66.6", "75.2 against
        # 66.6 GFLOPs"): the numbers are checked as numbers, and the comparison must be theirs
        said = 1 if own[0].value > own[1].value else -1
        if word in _QUALITY or said == way or own[0].value == own[1].value:
            return None  # which way is better is not sure
        return f"the passage gives {own[0].text} against {own[1].text}"
    toks = _tokens(passage)
    found: dict[str, list[tuple[int, _Value]]] = {"left": [], "right": []}
    # whose each number is, by an aligned list ("India and Canada … 3.4% and 2.5%, respectively") or a
    # phrase after it ("1e-4 for the first training stage and 2e-5 for the second"), less the words
    # two of them share ("training stage")
    listed = listed_owners(passage)
    scopes = {
        v.start: set(listed[v.start].terms) if v.start in listed else _scoped(toks, v.start)
        for v in _values(passage)[1]
    }
    shared = {t for t, n in Counter(t for s in scopes.values() for t in s).items() if n > 1}
    for v in _values(passage)[1]:
        if v.unit in ("word", "±", "ci") or any(_same(v, m) or _rounds_to(v, m) for m in mine):
            continue
        if statistic(toks, v.start):
            continue  # "P<0.001", "r=0.28": a test's, no side's
        lo = v.start
        while lo > max(0, v.start - 10) and not re.search(r"(?<![A-Z\d])[.!?]$", toks[lo - 1]):
            lo -= 1
        near = {t for w in toks[lo : v.start] for t in term_list(w)}
        owned = scopes[v.start] - shared
        mark = 2 if owned & (left | right) else 1  # whose it is by its list or phrase: surer
        near = owned if mark == 2 else near
        score = mark * (len(near & left) - len(near & right))
        if score:
            found["left" if score > 0 else "right"].append((abs(score), v))
    pairs = [
        (sa + sb, -a.start, a, b)
        for sa, a in found["left"]
        for sb, b in found["right"]
        if _comparable(a, b) and a.unit == b.unit
    ]
    if not pairs:
        return None
    _, _, a, b = max(pairs, key=lambda p: (p[0], p[1], -p[3].start))
    if a.value == b.value:
        return None
    said = 1 if a.value > b.value else -1
    if word in _QUALITY and _LOWER_IS_BETTER & {t for w in toks for t in term_list(w)}:
        return None  # which way is better is not sure
    if said != way:
        return f"the passage gives {a.text} against {b.text}"
    return None


def _scoped(toks: Sequence[str], at: int) -> set[str]:
    """The words of a phrase that says what the number at ``at`` is for ("2e-5 for the second training
    stage", "15B tokens of abstract text"), up to the next number or clause break."""
    start = at + 2
    if at + 2 < len(toks) and toks[at + 2].lower() == "of" and toks[at + 1].isalpha():
        start = at + 3  # "25B tokens of full body text"
    elif at + 1 >= len(toks) or toks[at + 1].lower() not in ("for", "on", "in", "with", "under"):
        return set()
    out: set[str] = set()
    for token in toks[start : start + 6]:
        if any(c.isdigit() for c in token) or token.lower() in ("and", "or", "while", "whereas", "but"):
            break
        out.update(term_list(token))
        if re.search(r"[,;:.!?)]$", token):
            break
    return out


_PARTS = re.compile(r";|,?\s*\b(?:whereas|while|but)\b", re.IGNORECASE)
_CLAUSES = re.compile(r"[,;:()\[\]]|\b(?:and|whereas|while|but|which|that|who)\b", re.IGNORECASE)


def _contrasted(text: str) -> list[str]:
    """The clauses "whereas", "while", "but" or ";" join, or "and" between two comparisons ("faster in
    the forward pass and slower in the backward pass")."""
    parts = _PARTS.split(text)
    if len(parts) >= 2:
        return parts
    halves = re.split(r",?\s*\band\b", text)
    compared = [h for h in halves if _directions(h)]
    return halves if len(compared) >= 2 else parts


def _exchanged(halves: Sequence[str], clauses: Sequence[str]) -> str | None:
    """ "The torso dominated metabolic predictions while the legs encoded sleep" against "legs
    dominated metabolic predictions while torso encoded sleep": each half of the claim says most of
    what one clause says, and holds a word only the other clause has, crosswise."""
    if len(halves) != 2 or len(clauses) != 2:
        return None
    a, b = (terms(h) for h in halves)
    for c, d in ((0, 1), (1, 0)):
        mine, other = terms(clauses[c]), terms(clauses[d])
        if len(a & mine) < len(a & other) + 2 or len(b & other) < len(b & mine) + 2:
            continue  # the halves do not follow the clauses this way
        x, y = (a - b) & (other - mine), (b - a) & (mine - other)
        if x and y:
            return f"the passage says {word(min(y), clauses[c])!r} here, not {word(min(x), halves[0])!r}"
    return None


def clause_swapped(claim: str, window: str) -> str | None:
    """ "LED adds a pre-training objective" against "LED and PRIMERA handle long inputs, and PRIMERA
    adds a pre-training objective": the clause of the passage's sentence that says most of what a part
    of the claim says (its parts: the clauses "whereas", "while", "but" or ";" join) is said of another
    name (its own, or the nearest before it: "Wikipedia, which is identical …"), and the claim's name
    stands in a clause of the sentence that says less of it."""
    if len(_contrasted(claim)) < 2 or len(_contrasted(window)) < 2:
        return None  # only two contrasted clauses, in the claim and in the passage
    for part in _contrasted(claim):  # "larger batches help early, while smaller ones help later"
        said = terms(part)
        overlap, clause = max(((len(said & terms(c)), c) for c in _contrasted(window)), key=lambda r: r[0])
        swapped = antonym(said, terms(clause)) if overlap >= 3 else None
        if swapped:
            return f"the passage says {word(swapped[1], clause)!r} here, not {word(swapped[0], part)!r}"
        way, their_way = _directions(part), _directions(clause)
        if overlap >= 3 and len(way) == 1 and their_way == {-next(iter(way))}:
            return f"the passage compares the other way where it says {clause.strip()!r}"
    exchanged = _exchanged(_contrasted(claim), _contrasted(window))
    if exchanged:
        return exchanged
    every = names(window, anywhere=True)
    mine = [n for n in names(claim, anywhere=True) if holds_name(window, n)]
    if not mine or not every:
        return None
    clauses = [c for c in _CLAUSES.split(window) if c and c.strip()]
    owners: list[list[str]] = []
    last: list[str] = []
    for c in clauses:
        own = [n for n in every if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", c)]
        owners.append(own or last)
        last = own or last
    whole = terms(claim) - {t for n in mine for t in terms(n)}
    for part in _PARTS.split(claim):
        theirs = [n for n in mine if n in part]
        if not theirs:
            continue
        says = terms(part) - {t for n in mine for t in terms(n)}
        says = says if len(says) >= 3 else whole
        scores = [len(says & terms(c)) for c in clauses]
        best = max(range(len(clauses)), key=lambda i: scores[i])
        held = [i for i in range(len(clauses)) if any(_fold_in(n, owners[i]) for n in theirs)]
        if scores[best] < 2 or not held or any(_fold_in(n, owners[best]) for n in theirs):
            continue
        if max(scores[i] for i in held) >= scores[best]:
            continue
        other = [m for m in owners[best] if not any(fold(m) == fold(n) for n in theirs)]
        if other:
            return f"the passage says this of {other[0]}, not {theirs[0]}"
    return None


def _fold_in(name: str, found: Sequence[str]) -> bool:
    return any(fold(name) == fold(n) for n in found)
