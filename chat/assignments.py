"""Values assigned to symbols ("β2 = 0.999", "k=0.9"): the number is the symbol's, whatever words
stand around it. A claim that gives a symbol another value, or says a value of the wrong symbol, is
gainsaid (chat.claims)."""

from __future__ import annotations

import math
import re

from chat.numbers import NEAR, clean, normalise, parse, tokens, values

_ASSIGNMENT = re.compile(
    r"(?<![\w.])([^\W\d_][\w′']{0,3})\s?=\s?([−-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e-?\d{1,2})?%?)(?![\w^−-]|\.\d)"
)
_WORDS_NOT_SYMBOLS = frozenset(["a", "A", "I"])


def assignments(text: str) -> dict[str, set[float]]:
    """The values the text assigns to symbols ("α = 0.001, β1 = 0.9": α → {0.001}, β1 → {0.9})."""
    out: dict[str, set[float]] = {}
    for m in _ASSIGNMENT.finditer(clean(normalise(text)[0])):
        value, _ = parse(m.group(2).replace("−", "-"))
        if not math.isnan(value):
            out.setdefault(m.group(1), set()).add(value)
    return out


def _symbol(name: str) -> bool:
    """A name that is a symbol, not a word a claim would use anyway ("β2", "k", not "a")."""
    return name not in _WORDS_NOT_SYMBOLS and (len(name) == 1 or not name.isascii() or not name.isalpha())


def assignment_gainsaid(claim: str, passage: str) -> str | None:
    """The claim gives a symbol a value the passage gives it not ("k = 0.4" against "k=0.9"), or says
    a value the passage assigns to one symbol of another that the passage assigns otherwise ("0.9 as
    … β2" against "β1 = 0.9, β2 = 0.999")."""
    theirs = assignments(passage)
    if not theirs:
        return None
    mine = assignments(claim)
    for name, said in mine.items():
        given = theirs.get(name)
        if given and not any(_holds(given, a) for a in said):
            return f"the passage gives {name} = {min(given):g}, not {min(said):g}"
    words, found = values(claim)
    # the claim's tokens as its symbols are written, at the positions ``values`` counts
    written = [normalise(t)[0].strip(".,;:()[]") for t in tokens(claim)]
    named = (set(written) & {n for n in theirs if _symbol(n)}) - mine.keys()  # named, not assigned
    for k, v in enumerate(found):
        holders = {n for n, given in theirs.items() if _holds(given, v.value)}
        if not holders or holders & named or any(_holds(said, v.value) for said in mine.values()):
            continue
        # the symbols said with the value: within reach, no other number between
        lo = found[k - 1].start + 1 if k else 0
        hi = found[k + 1].start if k + 1 < len(found) else len(words)
        for name in sorted(named & set(written[max(lo, v.start - NEAR) : min(hi, v.start + NEAR + 1)])):
            if not _holds(theirs[name], v.value):
                return f"the passage gives {v.text} for {min(holders)}, and {name} = {min(theirs[name]):g}"
    return None


def _holds(given: set[float], value: float) -> bool:
    return any(math.isclose(value, g, rel_tol=1e-6) for g in given)
