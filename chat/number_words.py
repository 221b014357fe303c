"""What a number in a text is of, read from the words around it, for :mod:`chat.claims`: the noun it
counts ("128 decoding steps"), the noun it is the value of ("beam size of 15"), what a bracket after
it belongs to, the numbers around it that qualify it, and whether it is a margin ("by 2.0 BLEU") or a
number put aside ("16 instead of 20 blocks").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import takewhile

from chat.number_binding import IN_PLACE_OF, sentence_spans, unabbreviated
from chat.numbers import GREEK as _GREEK
from chat.numbers import NEAR, SCALE_NAMES, shared_scale
from chat.numbers import Value as _Value
from chat.numbers import comparable as _comparable
from chat.numbers import same as _same
from chat.numbers import tokens as _tokens
from retrieval.evidence import term_list

LINKS = frozenset(["of", "=", "is", "are", "was", "were", "be", "to", "at", "equals"])

PREPOSITIONS = frozenset(
    ["after", "before", "across", "over", "under", "during", "via", "using", "than", "per"]
)

# Words that say nothing of what a number is.
GENERIC = frozenset(term_list("score value result performance number total amount"))

HEDGES = frozenset(
    [
        "more",
        "less",
        "than",
        "over",
        "about",
        "around",
        "nearly",
        "almost",
        "roughly",
        "up",
        "to",
        "at",
        "least",
        "some",
    ]
)


_BOUNDS = {
    **dict.fromkeys(["more than", "over", "above", "at least", "exceeding", "greater than", "upwards of"], 1),
    **dict.fromkeys(["less than", "fewer than", "under", "below", "at most", "up to", "no more than"], -1),
}


def counts_alike(tokens: Sequence[str], v: _Value, claim_tokens: Sequence[str], mine: _Value) -> bool:
    """A count glued to its noun ("a 30-query benchmark") and the claim's count of that noun ("109
    queries"): rivals, though a modifier is otherwise compared only with its like."""
    if v.unit != "-" or mine.unit != "" or not mine.value.is_integer():
        return False
    noun = set(term_list(tokens[v.start].partition("-")[2]))
    return bool(noun) and noun <= attached(claim_tokens, mine.start)


def bound(tokens: Sequence[str], at: int) -> tuple[int, str]:
    """Which way the words before the number at word ``at`` bound it ("more than 130 million": 1,
    "fewer than 400,000": -1, else 0), with those words."""
    sign = re.match(r"\(?([<>≤≥])", tokens[at])
    if sign:
        return (1 if sign.group(1) in ">≥" else -1), sign.group(1)
    for n in (3, 2, 1):
        said = " ".join(tokens[max(0, at - n) : at]).lower().lstrip("(")
        if at >= n and said in _BOUNDS:
            return _BOUNDS[said], said
    return 0, ""


# Words that say a number is rounded ("roughly 3,400"), beside the HEDGES that also bound it.
_ABOUT = frozenset(["about", "around", "nearly", "almost", "roughly", "approximately", "some", "circa"])


def approximates(tokens: Sequence[str], value: _Value, v: _Value) -> bool:
    """``v`` said as the round number ``value``: hedged, within half of the last place ``value``
    gives ("roughly 3,400" for 3,414, "nearly 29,000" for 28716: counts, not percentages, which
    :func:`chat.numbers.rounds_to` reads by their decimals), or bounded on the bound's side, within
    that place ("under 40 minutes" for 38, "more than half a million" for 532,346)."""
    if not value.value.is_integer() or value.value <= 0 or not _comparable(v, value) or _same(v, value):
        return False
    digits = str(int(value.value))
    step = 10.0 ** (len(digits) - len(digits.rstrip("0")))
    first = value.start  # where a number of words begins ("half a million")
    while first > max(0, value.start - 3) and tokens[first].lower() != value.text.split()[0].lower():
        first -= 1
    side, _ = bound(tokens, first)
    if side:
        return 0 < side * (v.value - value.value) <= step
    before = tokens[first - 1].lower() if first else ""
    hedged = before in _ABOUT or tokens[value.start].startswith(("~", "≈"))
    counts = value.unit in ("", "scale", "word") and value.value >= 100
    return hedged and counts and step >= 10 and abs(v.value - value.value) <= step / 2


def put_aside(tokens: Sequence[str], at: int) -> bool:
    """The number at word ``at`` is the one put aside ("16 instead of 20")."""
    return at >= 2 and " ".join(tokens[at - 2 : at]).lower() in IN_PLACE_OF


def margin(tokens: Sequence[str], at: int) -> bool:
    """The number at word ``at`` is a difference ("by more than 2.0", "by about 3 points"); a factor
    is not ("speeds it up by 1.8×" says what "speeds it up 1.8×" says)."""
    if re.search(r"\d\s?[×xX]\W*$", tokens[at]):
        return False
    i = at - 1
    while i >= 0 and tokens[i].lower() in HEDGES:
        i -= 1
    # "formed by 100 batch updates", "divided by 4": "by" after a verb of making or dividing
    return i >= 0 and tokens[i].lower() == "by" and not (i and _NOT_MARGINS.match(tokens[i - 1].lower()))


_NOT_MARGINS = re.compile(
    r"(?:form|compos|made|consist|construct|divid|multipl|follow|replac|given|defin|denot|represent|"
    r"generat|produc|written|creat|propos|introduc|releas)\w*$"
)


def attached(tokens: Sequence[str], at: int) -> set[str]:
    """The words a number at word ``at`` qualifies or is the value of, before any other word: the
    noun after it ("25,000 test questions", "1.5B-parameter"), the noun it is given for ("beam size
    of 15", "α = 0.002") and what a bracketed number belongs to ("fewer samples (403)")."""
    token = tokens[at]
    alone = bool(re.fullmatch(r"\([^()\s]+\)", token))  # "(403)", not "(5 per class)"
    out = {t for t in term_list(re.sub(r"^[^A-Za-z]*", "", token)) if not any(c.isdigit() for c in t)}
    after = at + 1
    if after < len(tokens) and tokens[after].lower() in SCALE_NAMES:  # "11 billion parameters"
        token, after = tokens[after], after + 1
    elif shared_scale(tokens, at):  # "24 and 26 billion tokens": the pair's noun is both numbers'
        token, after = tokens[after + 2], after + 3
    elif _against(tokens, after):  # "(40.1 vs 47.5 seconds per unit)": so is a contrast's
        token, after = tokens[after + 1], after + 2
    if " ".join(tokens[after : after + 2]).lower() in IN_PLACE_OF and after + 2 < len(tokens):
        token, after = tokens[after + 2], after + 3  # "16 instead of 20 residual blocks"
    if alone or not re.search(r"[,;:.)\]]$", token):
        out |= _phrase(tokens[after : after + 3])
    if after < len(tokens) and tokens[after].lower() == "of":  # "three of the ten were PhD students"
        out |= _partitive(tokens[after + 1 : after + 7])
    before = tokens[max(0, at - 4) : at]
    if alone:
        out |= _phrase(before[::-1], backwards=True)
    elif before and before[-1].lower() in LINKS:
        out |= _phrase(before[-2::-1], backwards=True)
    return {unabbreviated(t) for t in out}


def _against(tokens: Sequence[str], at: int) -> bool:
    """ "vs 47.5" at word ``at``: a number set against the one before, with nothing between."""
    pair = [t.lower().strip("()[]") for t in tokens[at : at + 2]]
    return (
        len(pair) == 2 and pair[0] in ("vs", "vs.", "versus") and bool(re.fullmatch(r"\d[\d,.]*%?", pair[1]))
    )


_COPULAS = frozenset(["is", "are", "was", "were"])


def _partitive(tokens: Sequence[str]) -> set[str]:
    """What a part ("eight of the participants") is said to be: the words after the clause's "were"
    ("… were female"), the number's as much as "participants" is."""
    for j, token in enumerate(tokens):
        if token.lower() in _COPULAS:
            return _phrase(tokens[j + 1 : j + 4])
        if re.search(r"[,;:.)\]]$", token):
            break
    return set()


def modifiers(
    tokens: Sequence[str], values: Sequence[_Value], v: _Value, reach: tuple[int, int]
) -> dict[str, set[float]]:
    """The other numbers near ``v`` (within its reach) by the words they qualify: in "4% with the
    2016 index and 2018 leaders", {"index": {2016}, "leader": {2018}}."""
    out: dict[str, set[float]] = {}
    lo, hi = max(reach[0], v.start - 2 * NEAR), min(reach[1], v.start + 2 * NEAR + 1)
    for o in values:
        if o.start == v.start or not lo <= o.start < hi or o.unit == "word":
            continue
        token = tokens[o.start]
        words = {t for t in term_list(re.sub(r"^[^A-Za-z]*", "", token)) if not any(c.isdigit() for c in t)}
        if o.unit == "name" and o.start:  # "Level II" by its kind: "level"
            words = set(term_list(tokens[o.start - 1]))
        elif not re.search(r"[,;:.)\]]$", token):
            words |= _phrase(tokens[o.start + 1 : o.start + 3])
        for t in words:
            out.setdefault(t, set()).add(o.value)
    return out


def swapped(
    claim_tokens: Sequence[str],
    claim_values: Sequence[_Value],
    value: _Value,
    passage_tokens: Sequence[str],
    v: _Value,
    stated: _Value,
    shared: set[str],
) -> bool:
    """Whether the claim gives ``v`` too and the two numbers each other's words: "5,000 examples
    for 10,000 steps" against "10k examples for 5k steps" (``value`` is the claim's 5,000, ``stated``
    the passage's 5k)."""
    words = attached(claim_tokens, value.start) - shared
    theirs = attached(passage_tokens, v.start) - shared
    stated_words = attached(passage_tokens, stated.start) - shared
    other = [m for m in claim_values if _same(v, m) and m.start != value.start]
    crossed = any(attached(claim_tokens, m.start) & stated_words for m in other)
    return bool(words & theirs) and not words & stated_words and crossed


def agree(mine: set[float], theirs: set[float]) -> bool:
    """Whether a number of the claim's is one of the passage's, or it rounded ("about 37%" of 36.6%)."""
    return any(a == b or a == round(b) or a == round(b, 1) for a in mine for b in theirs)


def per(tokens: Sequence[str], at: int) -> set[str]:
    """What a number is counted for ("5 per class"): the words after its "per"."""
    if at + 1 < len(tokens) and tokens[at + 1].lower() == "per" and not re.search(r"[,;:.)]$", tokens[at]):
        return _phrase(tokens[at + 2 : at + 4])
    return set()


def _counted(tokens: Sequence[str], at: int) -> set[str]:
    """What a whole number counts: the words right after it ("128 decoding steps"), not a unit that
    measures ("100 GB"), and past a number it is put in place of ("16 instead of 20 blocks")."""
    if not re.fullmatch(r"[\d,]+|[a-z-]+", tokens[at]):
        return set()
    after = at + 3 if " ".join(tokens[at + 1 : at + 3]).lower() in IN_PLACE_OF else at
    words = takewhile(lambda t: re.fullmatch(r"[A-Za-z][a-z-]*[,;:.]?", t), tokens[after + 1 : after + 4])
    return _phrase(list(words)) - GENERIC


def recounted(
    claim_tokens: Sequence[str],
    value: _Value,
    passage_tokens: Sequence[str],
    passage_values: Sequence[_Value],
    stated_as: Sequence[_Value],
) -> str | None:
    """The count the passage gives the claim's noun, where it gives the claim's number only to other
    nouns ("in 128 continuations" against "128 decoding steps … in 25 continuations")."""
    if value.unit not in ("", "word") or not value.value.is_integer():
        return None  # a count, not a measure ("36 GB") nor a scaled size ("530B parameters")
    mine = _counted(claim_tokens, value.start)
    theirs = [_counted(passage_tokens, v.start) for v in stated_as]
    if not mine or any(
        not t
        or t & mine
        or put_aside(passage_tokens, v.start)
        or mine <= _named_before(passage_tokens, v.start)
        for t, v in zip(theirs, stated_as, strict=True)
    ):
        return None
    for v in passage_values:
        if v.unit == value.unit and v.value.is_integer() and mine <= _counted(passage_tokens, v.start):
            return " ".join(passage_tokens[v.start : v.start + 2]).rstrip(",;:.")
    return None


def _named_before(tokens: Sequence[str], at: int) -> set[str]:
    """The words of the clause before a number, which it may be the value of ("the number of
    iterations … was set to 20"); none where another number stands there ("26 frames of 40")."""
    out: set[str] = set()
    for token in reversed(tokens[max(0, at - 2 * NEAR) : at]):
        if re.search(r"\d", token):
            return set()  # its words may be that number's ("26 frames of 40")
        if re.search(r"[,;:.!?]$", token):
            break
        out.update(term_list(token.translate(_GREEK)))
    return out


def _phrase(tokens: Sequence[str], *, backwards: bool = False) -> set[str]:
    """The content words of ``tokens`` up to the first function word, number or clause break."""
    out: set[str] = set()
    for token in tokens:
        if not backwards and re.fullmatch(r"\([^()\s]+\)", token):
            continue  # "400,000 (550,000) training pairs": the bracket is a parallel figure
        if backwards and re.search(r"[,;:.!?]$", token):
            break
        found = term_list(token.translate(_GREEK))
        if not found or any(c.isdigit() for c in token) or token.lower() in PREPOSITIONS:
            break
        out.update(found)
        if not backwards and re.search(r"[,;:.!?)\]]$", token):
            break
    return out


_SCOPES = frozenset(
    ["for", "in", "on", "among", "across", "at", "with", "under", "within", "during", "after"]
)
FRONTED = 0.25  # the weight of a fronted scope's words in a claim's context
# a fronted phrase of discourse ("In the general case,", "In practice,") scopes nothing
_DISCOURSE = frozenset(
    term_list("general case cases practice addition particular contrast summary short total turn fact sum")
)


def fronted(text: str, values: Sequence[_Value], v: _Value) -> dict[str, float]:
    """The words of a phrase that opens the sentence and scopes it ("For estrogen receptor-positive
    breast cancer, the hazard ratio … was 1.22"), when it holds no number of ``v``'s kind: said of
    ``v`` however far it stands."""
    toks = _tokens(text)
    for lo, hi in sentence_spans(toks):
        if not lo <= v.start < hi or toks[lo].lower() not in _SCOPES:
            continue
        comma = next((j for j in range(lo, v.start) if toks[j][-1] in ",;:"), None)
        if comma is None or any(lo <= w.start <= comma and _comparable(w, v) for w in values):
            return {}
        scope = {t for word in toks[lo + 1 : comma + 1] for t in term_list(word.lower().translate(_GREEK))}
        return dict.fromkeys(scope, FRONTED) if scope - _DISCOURSE else {}
    return {}
