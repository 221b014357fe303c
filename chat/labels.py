"""The labels a paper gives its parts — figures, tables, sections, equations, an algorithm's numbered
lines — for :mod:`chat.claims`: a claim must cite the one the passage says its words of.
"""

from __future__ import annotations

import re

from retrieval.evidence import term_list, terms

_REFERENCE = re.compile(
    r"(?:\b(Fig(?:ure)?s?|Tab(?:le)?s?|Sec(?:tion)?s?|Eq(?:uation)?s?)\.?|(§))\s*(\d+(?:\s*(?:,|and|&)\s*\d+)*)\b"
)
_REFERENCE_KINDS = {"f": "Figure", "t": "Table", "s": "Section", "§": "Section", "e": "Equation"}


def references(text: str) -> dict[str, set[str]]:
    """The figures, tables, sections and equations the text cites, by kind ("Figures 10 and 11":
    Figure 10 and 11)."""
    out: dict[str, set[str]] = {}
    for m in _REFERENCE.finditer(text):
        kind = _REFERENCE_KINDS[(m.group(1) or m.group(2))[0].lower()]
        out.setdefault(kind, set()).update(re.findall(r"\d+", m.group(3)))
    return out


def reference_swapped(claim: str, window: str, passage: str) -> str | None:
    """A figure, table, section or equation the claim cites where the sentence it rests on cites
    another of that kind ("presented in Figure 7" against "The results are presented in Figure 8"),
    or a line of an algorithm where the passage says this at another."""
    theirs = references(window)
    for kind, mine in references(claim).items():
        cited = theirs.get(kind, set())
        if cited and not mine & cited:
            return f"where the passage says this it cites {kind} {min(cited)}, not {kind} {min(mine)}"
    return _line_swapped(claim, passage)


_LINE = re.compile(r"\blines?\s+(\d{1,3})\b", re.IGNORECASE)  # "at line 10", "(Algorithm 1 line 10)"
_ENTRY = re.compile(r"(?<!\S)(\d{1,3}):?(?=\s)")  # a listing's numbered line: "5: σ ← …", "6 for x in …"
_LABEL_WORDS = frozenset(term_list("line lines algorithm"))
_ENTRY_CHARS = 200  # a listing's last line runs into the prose after it


def _lines(passage: str) -> list[tuple[int, set[str]]]:
    """The passage's numbered lines, each with the words said of it: a listing's line ("5: …", three or
    more numbered in order), and a line cited in prose (the words since the line cited before it, or
    since its sentence's start)."""
    out = []
    entries = _listing(passage)
    ends = [e.start() for e in entries[1:]] + [len(passage)]
    for m, end in zip(entries, ends[: len(entries)], strict=True):
        said = terms(passage[m.end() : min(end, m.end() + _ENTRY_CHARS)])
        out.append((int(m.group(1)), said - _LABEL_WORDS))
    since = 0
    for m in _LINE.finditer(passage):
        start = max(passage.rfind(". ", 0, m.start()) + 2, since)
        out.append((int(m.group(1)), terms(passage[start : m.start()]) - _LABEL_WORDS))
        since = m.end()
    return out


def _listing(passage: str) -> list[re.Match[str]]:
    """The longest run of three or more numbers counting up by one, each starting a line of a listing
    (an algorithm's or a code example's lines, run together as PDF text)."""
    runs: list[list[re.Match[str]]] = []
    for m in _ENTRY.finditer(passage):
        n = int(m.group(1))
        for run in runs:
            if int(run[-1].group(1)) == n - 1:
                run.append(m)
                break
        else:
            runs.append([m])
    best = max(runs, key=len, default=[])
    return best if len(best) >= 3 else []


def _line_swapped(claim: str, passage: str) -> str | None:
    """A line of an algorithm the claim names where the passage says the claim's words of another
    line, clearly more than of the one named ("the statistics are computed at line 3" against
    "split … (Algorithm 1 line 3), compute … statistics (Algorithm 1 line 10)")."""
    cited = list(_LINE.finditer(claim))
    lines = _lines(passage) if cited else []
    since = 0
    for m in cited:
        # the words said of this line: the whole claim if it names one line, else those since the last
        said = terms(claim if len(cited) == 1 else claim[since : m.end()]) - _LABEL_WORDS
        since = m.end()
        mine = int(m.group(1))

        def overlap(n: int, said: set[str] = said) -> int:
            return max((len(words & said) for k, words in lines if k == n), default=-1)

        if overlap(mine) < 0:
            continue  # a line the passage does not number: nothing to hold it against
        best = max({k for k, _ in lines}, key=overlap)
        if best != mine and overlap(best) >= 2 and overlap(best) > overlap(mine):
            return f"the passage says this at line {best}, not line {mine}"
    return None
