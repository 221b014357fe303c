"""Normalised keys for people's and institutions' names (accents, case and punctuation folded)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

_NON_WORD = re.compile(r"[^\w]+")
_NOT_A_PERSON = re.compile(r"\b(collaboration|consortium|team|group|et al|and others)\b", re.I)


def fold(text: str) -> str:
    """Lower-case ASCII-ish words: accents stripped, punctuation to spaces, spaces collapsed."""
    if text.isascii():
        stripped = text
    else:
        decomposed = unicodedata.normalize("NFKD", text)
        stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_NON_WORD.sub(" ", stripped.casefold()).replace("_", " ").split())


def person_key(name: str) -> str | None:
    """The key researchers are grouped under, or None when the string names no single person."""
    if _NOT_A_PERSON.search(name):
        return None
    key = fold(name)
    if not key or not any(c.isalpha() for c in key):
        return None
    return key


def display_name(name: str) -> str:
    """The name as shown: whitespace collapsed, nothing else changed."""
    return " ".join(name.split())


def preferred_spelling(spellings: Mapping[str, int]) -> str:
    """The name a researcher is shown under, from the spellings on their papers and how often each occurs.

    The most complete spelling wins, so the name does not depend on which paper was imported first:
    more words written out (not initials), then accents kept ("Ré" over "Re"), then proper case (not
    all upper or lower), then the most frequent; a tie goes to the string itself (deterministic)."""

    def completeness(name: str) -> tuple[int, int, bool, int, str]:
        words = sum(len(w.strip(".")) > 1 for w in name.split())
        accents = sum(not c.isascii() and c.isalpha() for c in name)
        return (words, accents, not (name.isupper() or name.islower()), spellings[name], name)

    return max(spellings, key=completeness)


def from_parsed(last: str, first: str, suffix: str = "") -> str:
    """``["Kingma", "Diederik P.", ""]`` (arXiv's authors_parsed) → ``"Diederik P. Kingma"``."""
    return " ".join(part for part in (first.strip(), last.strip(), suffix.strip()) if part)
