"""The names a claim or passage writes: methods, datasets and models ("GPT-3", "SQuAD", "Fusion-in-
Decoder"), found by their shape and compared with case, spaces and hyphens folded, for the checks
of :mod:`chat.claims` and :mod:`chat.context`."""

from __future__ import annotations

import re

from chat.numbers import GREEK as _GREEK
from chat.numbers import NOT_A_VALUE

_NAME = re.compile(
    r"\b(?:[A-Z]{2,}[\w-]*['’]\d+|[A-Z][A-Za-z]*[A-Z0-9][\w.-]*|[A-Z]{2,}[\w-]*|[A-Za-z]+-?\d[\w.-]*|\d+[A-Za-z]{2,}\w*|[A-Z][a-z]{2,}"
    r"|[a-z]{1,3}[A-Z][A-Za-z0-9]*[A-Z][\w-]*)\b"  # "rSVMScore", "iPrEx", "mBERT"
)
_COMMON_CAPITALS = frozenset(
    [
        "the",
        "this",
        "that",
        "these",
        "those",
        "we",
        "our",
        "it",
        "its",
        "in",
        "on",
        "of",
        "for",
        "with",
        "by",
        "to",
        "a",
        "an",
        "as",
        "at",
        "from",
        "and",
        "or",
        "but",
        "however",
        "also",
        "their",
        "they",
        "table",
        "figure",
        "section",
        "appendix",
        "each",
        "both",
        "all",
        "when",
        "while",
        "which",
        "id",  # an identifier ("photo-ID"), not a name
        "ids",
    ]
)


_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.IGNORECASE)
# A bound written onto its number ("the under-18 share", "over-65s"): a value, not a name.
_BOUND = re.compile(r"(?:under|over|above|below|up|sub|pre|post)-\d[\d.]*", re.IGNORECASE)


_LIKE = re.compile(r"-(?:like|style|sized|type)$", re.IGNORECASE)


def names(text: str, *, anywhere: bool = False) -> list[str]:
    """Names in ``text``: acronyms, mixed case, names with digits, capitalised words inside a
    sentence (at its start only with ``anywhere``... never common function words)."""
    found = []
    text = NOT_A_VALUE.sub(" ", text)  # (positions below are this text's)
    for match in _NAME.finditer(text):
        name = _LIKE.sub("", match.group().strip(".-"))  # "a GPT-3 XL-like setup" names XL
        if name.lower() in _COMMON_CAPITALS or len(name) < 2 or (match.start() == 0 and not anywhere):
            continue
        if _ORDINAL.fullmatch(name) or _BOUND.fullmatch(name):  # "the 1st place": a rank, not a name
            continue
        if plain(name) and not _is_proper(text, match.start()):
            continue
        found.append(name)
    return list(dict.fromkeys(found))


def _is_proper(text: str, at: int) -> bool:
    """A capitalised word in mid-sentence (not after a full stop or colon) is a name."""
    before = text[:at].rstrip()
    return bool(before) and before[-1] not in ".:!?"


_SEPARATOR = re.compile(r"[\s\-–_/'’]")  # what a name's spelling may put in or leave out


def fold(text: str) -> str:
    return _SEPARATOR.sub("", text.lower().translate(_GREEK))


# Capitalised words joined into one name: "English-to-German", "Fusion-in-Decoder".
_COMPOUND = re.compile(r"\b[A-Z][\w.]*(?:-(?:[a-z]{1,3}-)?[A-Z][\w.]*)+\b")


def compounds(text: str) -> list[str]:
    return _COMPOUND.findall(text)


def holds_compound(text: str, name: str) -> bool:
    """``text`` writes the joined name, with or without its joining word or as an arrow
    ("German-to-English", "German-English", "German→English")."""
    head, joint, tail = name.partition("-to-")
    variants = [name, f"{head}-{tail}", f"{head}→{tail}", f"{head} →{tail}"] if joint else [name]
    return any(holds_name(text, v) for v in variants)


def plain(name: str) -> bool:
    """A capitalised word ("Transformer"), not an acronym or a name with digits."""
    return name.isalpha() and name[0].isupper() and name[1:].islower()


def holds_name(text: str, name: str) -> bool:
    """``text`` writes ``name`` (case, spaces and hyphens aside) as a name of its own, not as a piece
    of another: "Adam" is not in "AdaMax", nor "BERT" in "RoBERTa", nor "GPT-3" in "GPT-3.5", nor
    "CLIP" in "clip"; a plural ("LSTMs"), a version ("ResNet50") or a suffix in capitals
    ("BERTBASE") still holds it, and "Retro" holds "RETRO"."""
    wanted = fold(name)
    if not wanted or wanted not in fold(text):  # the common case, without the mapping below
        return False
    folded, where = [], []  # the folded text, and the index in ``text`` of each folded character
    for i, char in enumerate(text):
        if not _SEPARATOR.match(char):
            piece = char.lower().translate(_GREEK)
            folded.append(piece)
            where.extend([i] * len(piece))
    flat = "".join(folded)
    at = flat.find(wanted)
    while at >= 0:
        start, end = where[at], where[at + len(wanted) - 1] + 1
        if _stands_alone(text, name, start, end):
            return True
        at = flat.find(wanted, at + 1)
    return False


def _stands_alone(text: str, name: str, start: int, end: int) -> bool:
    if name.isupper() and text[start:end].islower():
        return False  # an acronym is not the word ("CLIP" is not "we clip the gradients")
    before = text[start - 1 : start]
    # a unit after its number ("215GB"), a prefix in capitals ("DMLP" for a lost subscript)
    if before.isalpha() and not (before.isupper() and text[start].isupper()):
        return False
    if text[start].islower() and re.search(r"[a-z]-\s+$", text[max(0, start - 4) : start]):
        return False  # the end of a word broken at a line's end ("bil- lion" is no "Lion")
    after, rest = text[end : end + 1], text[end + 1 : end + 2]
    if not after or not after.isalnum():
        # "GPT-3.5" is another model than "GPT-3" ("GPT-3." ends a sentence), "FlashAttention 3×" a factor
        return not name[-1].isdigit() or not ((after == "." and rest.isdigit()) or after in ("×", "%"))
    if after.isdigit():
        return not name[-1].isdigit()
    if after == "s" and not rest.isalnum():
        return True
    return after.isupper() and name[-1].isupper()
