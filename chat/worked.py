"""Numbers a claim works out from those the passage states: a difference ("about 17 points below"
for 80.42 and 63.32), the years between two years ("nine years before"), a factor ("five times"),
the rest of a whole ("only 36 of the 57 games, so 21 lack a score"), a share of a count ("28% of the
109, about 30"), a total ("30 cases in all") and one number per another ("3 Gy per fraction"). Each
is as precise as the claim gives it (:mod:`chat.claims`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import combinations

from chat.number_words import HEDGES
from chat.numbers import NEAR, Value, comparable, in_table, is_year, rounds_to, same


def worked_difference(
    value: Value, claim_values: Sequence[Value], passage_values: Sequence[Value], *, margin: bool = False
) -> bool:
    """``value`` is, as precisely as the claim gives it, the difference between a number the claim
    states and another the passage gives near it ("0.61382, roughly 0.03 below the default" for
    0.64206; "about five points" for 5.27). ``margin``: the claim says it as one ("by 3.7") of a
    passage without tables."""
    if value.unit not in ("", "%", "word", "scale"):
        return False
    measures = [a for a in passage_values if a.unit in ("", "%", "scale")]  # "25B … 15B" gaps 10 billion
    mine = [a for a in measures if any(same(a, c) for c in claim_values if c is not value)]
    # … or between two numbers of prose near each other, when the claim states neither ("a gain of
    # 0.14 AUROC" for "from 0.81 … to 0.95"), or says the number is a margin ("rose by about 3.7
    # minutes between ages 4 to 5 and 13 to 15", where numbers crowd as in a table's row, but the
    # passage has none); else never between a table's cells, whose gaps are many
    if margin:
        prose = measures
    else:
        prose = [a for a in measures if not in_table(passage_values, a)] if not mine else []
    pairs = [(a, b) for a in mine for b in passage_values] + [(a, b) for a in prose for b in prose]
    for a, b in pairs:
        if b is a or abs(a.start - b.start) > 2 * NEAR or not comparable(a, b):
            continue
        places = max(len(x.text.rstrip("%kKMBT").partition(".")[2]) for x in (a, b))
        gap = round(abs(a.value - b.value), places)
        said = Value(gap, "", value.start, f"{gap:.{places}f}")
        if same(said, value) or rounds_to(said, value):
            return True
    return False


_APART = re.compile(r"years?\s+(?:after|before|later|earlier|apart|since)\b", re.IGNORECASE)


def years_apart(
    tokens: Sequence[str], value: Value, claim_values: Sequence[Value], passage_values: Sequence[Value]
) -> set[float]:
    """Where ``value`` counts years between a year the claim states as the passage does and another
    ("in 1977, nine years before the ARGUS observation"): the gaps between that year and the
    passage's others (1977 and 1986: 9), which ``value`` must be one of; else none."""
    if not _APART.match(" ".join(tokens[value.start + 1 : value.start + 3])):
        return set()
    years = [v for v in passage_values if is_year(v)]
    mine = [y for y in years if any(same(y, c) for c in claim_values)]
    return {abs(a.value - b.value) for a in mine for b in years if a.value != b.value}


def worked_factor(tokens: Sequence[str], value: Value, claim_values: Sequence[Value]) -> bool:
    """``value`` is a factor in words ("five times") that two other numbers of the claim work out to:
    at least that when hedged upwards ("more than five times"), else that when rounded."""
    if tokens[value.start + 1 : value.start + 2] != ["times"]:
        return False
    before = " ".join(tokens[max(0, value.start - 2) : value.start])
    above = bool(re.search(r"\b(?:more than|over)$", before, re.IGNORECASE))
    measures = [v for v in claim_values if v is not value and v.unit in ("", "%") and v.value > 0]
    for a, b in combinations(measures, 2):
        ratio = max(a.value, b.value) / min(a.value, b.value)
        if ratio >= value.value if above else round(ratio) == value.value:
            return True
    return False


REST = re.compile(r"\b(?:not|no|lacks?|lacking|without|remaining|rest|others?|left|missing|only)\b", re.I)


def complement(value: Value, tokens: Sequence[str], found: Sequence[Value], claim: str) -> bool:
    """``value`` is a whole count less a part the passage gives near it (162 publications, 119 of
    which do not: 43 do), where the claim or the part's words say the rest."""
    if not value.value.is_integer() or value.unit not in ("", "word"):
        return False
    counts = [v for v in found if not v.unit and v.value.is_integer() and not is_year(v)]
    for whole in counts:
        for part in counts:
            if 0 < abs(part.start - whole.start) <= 2 * NEAR and whole.value - part.value == value.value:
                said = " ".join(tokens[part.start : part.start + 6])
                if REST.search(claim) or REST.search(said):
                    return True
    return False


def share_of(tokens: Sequence[str], value: Value, mine: Sequence[Value], found: Sequence[Value]) -> bool:
    """``value`` is, hedged ("about 30"), a percentage of a count, both of which the claim states as
    the passage does: a share worked out, within a twentieth."""
    if value.unit not in ("", "word") or value.start == 0 or tokens[value.start - 1].lower() not in HEDGES:
        return False
    stated = [c for c in mine if c is not value and any(same(c, v) for v in found)]
    shares = [c.value / 100 for c in stated if c.unit == "%"]
    counts = [c.value for c in stated if not c.unit and c.value.is_integer()]
    return any(abs(p * n - value.value) <= 0.05 * p * n for p in shares for n in counts)


_IN_ALL = re.compile(r"\b(?:in all|in total|total|altogether|combined|together|overall)\b", re.IGNORECASE)


def total(tokens: Sequence[str], value: Value, found: Sequence[Value]) -> bool:
    """``value`` is the sum of two counts the passage gives near each other, which the claim says is
    a total ("validated on 30 cases in all" for "20 public … cases and 10 institutional cases")."""
    if value.unit not in ("", "word") or not value.value.is_integer() or not _IN_ALL.search(" ".join(tokens)):
        return False
    counts = [v for v in found if not v.unit and v.value.is_integer() and not is_year(v)]
    return any(
        a.start < b.start <= a.start + 2 * NEAR and a.value + b.value == value.value
        for a in counts
        for b in counts
    )


def quotient(tokens: Sequence[str], value: Value, found: Sequence[Value]) -> bool:
    """``value`` is, as precisely as the claim gives it, one number of the passage per another near
    it, which the claim says with "per" or "each" ("3 Gy per fraction" for "60 Gy in 20 fractions")."""
    said = " ".join(tokens[value.start + 1 : value.start + 3]).lower()
    if value.unit not in ("", "word") or not re.search(r"\b(?:per|each|apiece)\b", said):
        return False
    places = len(value.text.partition(".")[2])
    return any(
        a is not b
        and b.value > 1
        and abs(a.start - b.start) <= NEAR
        and round(a.value / b.value, places) == value.value
        for a in found
        for b in found
        if not a.unit and not b.unit
    )
