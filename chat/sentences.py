"""Sentences of scientific prose, with their character offsets.

A full stop ends a sentence unless it belongs to an abbreviation ("e.g.", "et al.", "Fig.", "Eq.",
"vs."), an initial ("J. Smith") or a number ("3.5", "Sec. 4.2"); "?" and "!" always end one, and so
does a blank line. Text extracted from PDFs also holds tables and lists with no full stop for
hundreds of characters: a piece longer than ``MAX_CHARS`` is cut at the last space or semicolon
before the limit, so no "sentence" is a whole table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHARS = 400
# Lower-cased words that end in a full stop without ending the sentence.
_ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "al",
        "etc",
        "fig",
        "figs",
        "eq",
        "eqs",
        "sec",
        "secs",
        "tab",
        "tabs",
        "vs",
        "cf",
        "resp",
        "approx",
        "no",
        "nos",
        "ref",
        "refs",
        "viz",
        "ca",
        "dr",
        "prof",
        "mr",
        "ms",
        "st",
        "vol",
        "pp",
        "ch",
        "app",
        "alg",
        "def",
        "thm",
        "lem",
        "prop",
        "cor",
        "ex",
        "incl",
    ]
)
_END = re.compile(r"[.!?]+[\"')\]]*(?=\s)|\n\s*\n")
_WORD_BEFORE = re.compile(r"([\w.]+)\.$")


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    start: int  # offsets in the text it was split from: text == source[start:end]
    end: int


def split(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order, surrounding spaces left out."""
    out: list[Sentence] = []
    start = 0
    for match in _END.finditer(text):
        end = match.end()
        if match.group().endswith(".") and not _ends_sentence(text, match.start(), end):
            continue
        _add(out, text, start, end)
        start = end
    _add(out, text, start, len(text))
    return out


def _ends_sentence(text: str, dot: int, end: int) -> bool:
    word = _WORD_BEFORE.search(text[max(0, dot - 24) : dot + 1])
    before = word.group(1).lower() if word else ""
    if before.rstrip(".") in _ABBREVIATIONS:
        return False
    if len(before) == 1 and before.isalpha() and text[dot - 1].isupper():
        return False  # an initial: "J. Smith"
    following = text[end:].lstrip()[:1]
    # A new sentence starts with a capital, a digit, a bracket or a quote, not a lower-case word nor a
    # relation ("R.A. = 12h15m", "Dec. ≈ −13°").
    return not following or not (following.islower() or following in "=<>≈≤≥±×")


def _add(out: list[Sentence], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    while end - start > MAX_CHARS:
        cut = _cut(text, start, start + MAX_CHARS)
        _add(out, text, start, cut)
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        out.append(Sentence(text[start:end], start, end))


def _cut(text: str, start: int, limit: int) -> int:
    """Where to cut an over-long piece: after the last semicolon, else the last space, else at the
    limit (never at ``start``)."""
    for mark in ("; ", " "):
        at = text.rfind(mark, start + 1, limit)
        if at > start + MAX_CHARS // 4:
            return at + len(mark.rstrip())
    return limit
