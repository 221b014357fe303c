"""Normalised keys for people's and institutions' names (accents, case and punctuation folded)."""

from __future__ import annotations

import re
import unicodedata

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


def from_parsed(last: str, first: str, suffix: str = "") -> str:
    """``["Kingma", "Diederik P.", ""]`` (arXiv's authors_parsed) → ``"Diederik P. Kingma"``."""
    return " ".join(part for part in (first.strip(), last.strip(), suffix.strip()) if part)
