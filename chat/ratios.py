"""Ratios as papers state them ("1 in 5", "four in five", "11 out of the 12"): their two counts and
their share, and a claim's percentage checked against them (:mod:`chat.claims`)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from chat.numbers import Value, same, tokens, values


def ratios(text: str) -> list[tuple[Value, Value, Value]]:
    """The ratios the text states ("1 in 5", "four in five", "19 of 24", "11 out of the 12"): each
    its two counts and its share as a percentage (at the first count's position)."""
    toks = tokens(text)
    found = values(text)[1]
    counts = {v.start: v for v in found if v.unit in ("", "word") and v.value.is_integer()}
    out = []
    for n in counts.values():
        if n.start >= len(toks) or toks[n.start][-1] in ",;:.)":
            continue
        joined = [t.lower() for t in toks[n.start + 1 : n.start + 4]]
        for joiner in (["in"], ["out", "of"], ["out", "of", "the"], ["of"], ["of", "the"]):
            m = counts.get(n.start + len(joiner) + 1)
            if joined[: len(joiner)] == joiner and m is not None and 0 < n.value <= m.value:
                share = Value(100 * n.value / m.value, "%", n.start, f"{n.text} {' '.join(joiner)} {m.text}")
                out.append((n, m, share))
                break
    return out + _fronted(toks, counts)


_WHOLE = re.compile(r"(?:of|among)(?: the(?: total of)?| all| these| those)?", re.IGNORECASE)


def _fronted(toks: Sequence[str], counts: dict[int, Value]) -> list[tuple[Value, Value, Value]]:
    """A whole fronted before its part ("Of the 228 patients with fever, 121 (53%) had malaria"): the
    part is the first count after the clause break that follows the whole."""
    out = []
    for m in counts.values():
        lead = next(
            (k for k in range(max(0, m.start - 4), m.start) if _WHOLE.fullmatch(" ".join(toks[k : m.start]))),
            None,
        )
        if lead is None or (lead and toks[lead - 1][-1] not in ".,;:"):
            continue  # "Of" opens the sentence or a clause
        brk = next((j for j in range(m.start, min(len(toks), m.start + 10)) if toks[j][-1] in ",;:"), -1)
        n = counts.get(brk + 1) if brk >= 0 and toks[brk][-1] == "," else None
        if n is not None and 0 < n.value < m.value:
            out.append((n, m, Value(100 * n.value / m.value, "%", n.start, f"{n.text} of {m.text}")))
    return out


def ratio_fits(n: Value, m: Value, p: Value) -> bool:
    """A percentage ``p`` said as the ratio ``n`` in ``m``: ``p`` rounds from it ("79%" for "19 of
    24"), or, for a ratio of a small whole ("four in five"), lies within 2.5 points of it."""
    if p.unit != "%":
        return False
    places = len(p.text.partition(".")[2].rstrip("%").strip()) if "." in p.text else 0
    gap = abs(p.value - 100 * n.value / m.value)
    return gap <= 0.5 * 10**-places + 1e-9 or (m.value <= 10 and gap <= 2.5)


def rounds_from(share: Value, value: Value) -> bool:
    """A ratio's share (33.33… for "1 in 3") said as ``value`` ("33%", "33.3%")."""
    places = len(value.text.partition(".")[2].rstrip("%").strip()) if "." in value.text else 0
    return math.isclose(round(share.value, places), value.value)


def ratio_checks(
    claim: str, claim_values: Sequence[Value], passage_values: Sequence[Value]
) -> tuple[list[Value], dict[Value, list[Value]]]:
    """The claim's numbers to check: a ratio whose counts the passage does not state ("four in five")
    is checked as its share, against the percentages it is said for ("79%")."""
    checks = list(claim_values)
    preset: dict[Value, list[Value]] = {}
    for n, m, share in ratios(claim):
        if all(any(same(v, x) for v in passage_values) for x in (n, m)):
            continue
        fits = [v for v in passage_values if ratio_fits(n, m, v)]
        if fits:
            checks = [share if c == n else c for c in checks if c != m]
            preset[share] = fits
    return checks, preset
