"""Text that is safe to store anywhere: no NUL bytes, no lone surrogates, whitespace collapsed.

PostgreSQL rejects NUL in text and every UTF-8 encoder rejects lone surrogates; both occur in real
PDFs and metadata, so everything bound for the catalogue or the vector store passes through here.
"""

from __future__ import annotations

import re
import unicodedata

from anyascii import anyascii

_JOINERS = frozenset("\u200c\u200d")
_UNSAFE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def scrub(text: str) -> str:
    """Remove NUL bytes, lone surrogates and control characters; keep newlines and tabs."""
    return _UNSAFE.sub("", text)


def human_text(text: str) -> str:
    """A name or title a person gave, safe to show: :func:`clean_text` without invisible format
    characters (Unicode Cf) — bidi overrides and isolates that turn the text around when shown
    ("\u202egnp.exe"), zero-width spaces and the like — except the zero-width joiner and non-joiner,
    which some scripts and emoji need."""
    kept = "".join(c for c in scrub(text) if c in _JOINERS or unicodedata.category(c) != "Cf")
    return " ".join(kept.split())


def _ranges(codes: list[int]) -> str:
    spans: list[list[int]] = []
    for code in codes:
        if spans and spans[-1][1] == code - 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return "".join(f"\\u{a:04x}" + (f"-\\u{b:04x}" if b > a else "") for a, b in spans)


# A regular expression (JSON Schema's dialect too) that finds a character :func:`human_text` keeps
# and shows: not whitespace, not a control character, not an invisible format character of the
# Basic Multilingual Plane (the joiners excepted). A text it does not match is empty once cleaned.
VISIBLE_PATTERN = (
    "[^\\s\\x00-\\x1f\\x7f"
    + _ranges(
        [c for c in range(0xD800) if unicodedata.category(chr(c)) == "Cf" and chr(c) not in _JOINERS]
        + [c for c in range(0xE000, 0x10000) if unicodedata.category(chr(c)) == "Cf"]
    )
    + "]"
)


def transliterate(text: str) -> str:
    """Latin letters for every letter: "Łukasz" → "Lukasz", "Søgaard" → "Sogaard", "Иван" → "Ivan"."""
    return anyascii(text)


def clean_text(text: str) -> str:
    """:func:`scrub`, then every run of whitespace becomes one space (metadata fields)."""
    return " ".join(scrub(text).split())
