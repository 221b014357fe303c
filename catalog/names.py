"""Normalised keys for people's and institutions' names (accents, case and punctuation folded): the
keys the catalogue stores and looks up. Parsing a person's name (surname, given names, blocks) and
choosing a spelling is who-is-who's (``people.names``)."""

from __future__ import annotations

import re
import unicodedata

from catalog.text import transliterate

_NON_WORD = re.compile(r"[^\w]+")
_LETTER = re.compile(r"[^\W\d_]")
_NOT_A_PERSON = re.compile(r"\b(collaboration|consortium|team|group|et al|and others)\b", re.I)


def fold(text: str) -> str:
    """Lower-case ASCII words: accents stripped, other letters transliterated ("Søgaard" and
    "Sogaard", "Łukasz" and "Lukasz" fold alike), punctuation to spaces, spaces collapsed."""
    if text.isascii():
        stripped = text
    else:
        decomposed = unicodedata.normalize("NFKD", text)
        stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
        if not stripped.isascii():  # letters without a decomposition ("ø", "ł", "æ"), other scripts
            stripped = transliterate(stripped)
    return " ".join(_NON_WORD.sub(" ", stripped.casefold()).replace("_", " ").split())


def person_key(name: str) -> str | None:
    """The key researchers are grouped under, or None when the string names no single person."""
    if _NOT_A_PERSON.search(name):
        return None
    key = fold(name)
    return key if _LETTER.search(key) else None


def display_name(name: str) -> str:
    """The name as shown: whitespace collapsed, nothing else changed (the string itself when it
    has nothing to collapse: the resolver keeps one per researcher)."""
    shown = " ".join(name.split())
    return name if shown == name else shown
