"""The words that bind a number: its neighbours weighted by closeness, not past a rival of its kind
or a clause break, with the numbers it makes one statement with; and acronyms a claim spells out
(:mod:`chat.claims` scores each passage number by them)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from chat.number_binding import partners, unabbreviated
from chat.numbers import GREEK, NEAR, Value, comparable, in_table, tokens
from retrieval.evidence import term_list


def context(
    words: Sequence[str], at: int, reach: tuple[int, int] | None = None, aside: int = 0
) -> dict[str, float]:
    """Stemmed content words near position ``at``, weighted by closeness, within ``reach`` (the
    words between a rival number's clause and the next's: see :func:`reach`); the ``aside`` words
    right after it (its bracket, "35.3% (95% CI 27.7-42.8) of new patients") put nothing further."""
    out: dict[str, float] = {}
    lo, hi = reach or (0, len(words))
    lo, hi = max(lo, at - NEAR), min(hi, at + NEAR + aside + 1, len(words))
    for i in range(lo, hi):
        if i == at:
            continue
        gap = abs(i - at) - (aside if i > at + aside else 0)
        for t in map(unabbreviated, term_list(words[i].translate(GREEK))):
            out[t] = max(out.get(t, 0.0), 1.0 / (1 + gap))
    return out


def _aside(toks: Sequence[str], at: int) -> int:
    """The words of a bracket with a number in it right after the number at word ``at`` ("(95% CI
    27.7-42.8)", "(SD 4.2)"), or 0."""
    if at + 1 >= len(toks) or not toks[at + 1].startswith("(") or toks[at].endswith((",", ";", ".")):
        return 0
    for j in range(at + 1, min(len(toks), at + 9)):
        if ")" in toks[j]:
            inside = " ".join(toks[at + 1 : j + 1])
            return j - at if re.search(r"\d", inside) and inside.count("(") == 1 else 0
    return 0


def joint_context(
    text: str, words: Sequence[str], values: Sequence[Value], v: Value, *, passage: bool = False
) -> dict[str, float]:
    """:func:`context` of ``v``, and of the numbers it makes one statement with (the other end of its
    range, the other count of its ratio: "11 out of 12 participants"), each word at its closest; in
    a ``passage``, the end of a change has its start's subject too."""
    span = reach(text, values, v)
    toks = tokens(text)
    out = context(words, v.start, span, _aside(toks, v.start))
    for a, b in partners(text):
        if a == v.start:
            for t, w in context(words, b, span).items():
                out[t] = max(out.get(t, 0.0), w)
    # the end of a change has the subject of its start: "time in boys increased from 8.6 minutes at
    # age 6 to 7 years, to 13.2 minutes" (the words before "from", not those after the start)
    for start in _changed_from(toks, values, v) if passage else []:
        for t, w in context(words, start.start, (max(0, start.start - NEAR), start.start)).items():
            out[t] = max(out.get(t, 0.0), w)
    return out


def _changed_from(toks: Sequence[str], values: Sequence[Value], v: Value) -> list[Value]:
    """The number a change ends in ``v`` from: "from 8.6 minutes …, to 13.2 minutes" (within a
    dozen words, the same unit word after both)."""
    if not v.start or toks[v.start - 1].lower() != "to":
        return []
    unit = toks[v.start + 1].lower().strip(".,;:") if v.start + 1 < len(toks) else ""
    return [
        a
        for a in values
        if 0 < v.start - a.start <= 2 * NEAR
        and a.start
        and toks[a.start - 1].lower() == "from"
        and a.unit == v.unit
        and comparable(a, v)
        and a.start + 1 < len(toks)
        and toks[a.start + 1].lower().strip(".,;:") == unit
    ]


def reach(text: str, values: Sequence[Value], v: Value, *, prose: bool = False) -> tuple[int, int]:
    """The words that may bind ``v``: not past a rival number of its kind in prose, and where a
    clause break stands between them, not past the break ("12% with A, 4% with B": A is 12%'s)."""
    if not prose and in_table(values, v):  # a table row's label binds it (see _label), not its neighbours
        return 0, 10**9
    breaks = _breaks(text)
    together = partners(text)
    lo, hi = 0, 10**9
    for o in values:
        if o.start == v.start or not comparable(o, v) or (v.start, o.start) in together:
            continue
        if o.start < v.start:
            cut = max((g for g in breaks if o.start < g <= v.start), default=o.start + 1)
            lo = max(lo, cut)
        else:
            cut = min((g for g in breaks if v.start < g <= o.start), default=o.start)
            hi = min(hi, cut)
    return lo, hi


def _breaks(text: str) -> set[int]:
    """Word gaps at a clause break: gap g lies between words g-1 and g (as :func:`values` counts)."""
    out: set[int] = set()
    for i, token in enumerate(tokens(text)):
        if token[-1] in ",;:":
            out.add(i + 1)
    return out


_ACRONYM = re.compile(r"\b([A-Z]{2,5})s?\b")


def _initials(text: str, sizes: Iterable[int]) -> Iterator[tuple[str, list[str]]]:
    """Each run of ``sizes`` words of ``text`` with its initials, lower-cased."""
    words = re.findall(r"[A-Za-z]+", text)
    for n in sizes:
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            yield "".join(w[0] for w in run).lower(), run


def spelled_out(ctx: dict[str, float], claim: str, passage: str) -> dict[str, float]:
    """``ctx`` (a claim number's words) with the passage's acronyms the claim spells out ("channels
    under test" for "CUTs"), each at the weight of the words that spell it."""
    acronyms = {a.lower() for a in _ACRONYM.findall(passage)}
    out = dict(ctx)
    for initials, run in _initials(claim, (2, 3, 4)):
        weights = [ctx[t] for w in run for t in term_list(w) if t in ctx]
        if initials in acronyms and weights and not any(w.isupper() for w in run):
            out[initials] = max(out.get(initials, 0.0), *weights)
    return out


def spells(claim: str, name: str) -> bool:
    """The claim spells out an acronym ("atypical hyperplasia" for "AH")."""
    return bool(re.fullmatch(r"[A-Z]{2,5}", name)) and any(
        initials == name.lower() for initials, _ in _initials(claim, (len(name),))
    )
