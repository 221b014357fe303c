"""People's names parsed for telling researchers apart: surname and given names, the loose block a
researcher is filed under, whether two spellings can be one person, and the spelling a researcher is
shown under. The folded keys themselves (``fold``, ``person_key``, ``display_name``) are the
catalogue's (``catalog.names``)."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from functools import lru_cache

from nameparser import HumanName

from catalog.names import fold, person_key


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


# -- parsed names: blocking and compatibility (people.resolver) ----------------------------------

# Written-out names the fast split below would get wrong: a comma ("Liu, Yang"), a lower-case
# particle ("van der Berg"), a suffix ("Jr.", "III") or a title ("Dr."). Only these go to nameparser
# (~300 us a name, too slow for the 177k distinct names of a 75k import).
_UNUSUAL = re.compile(r",|\b(?:[a-z]{1,3}|[JS]r\.?|I{2,3}|IV|Dr\.?|Prof\.?)(?:\s|$)")
# Umlauts have two ASCII spellings: "Schütze" is printed "Schutze" (as it folds) and "Schuetze".
_UMLAUTS = frozenset("äöüøÄÖÜØ")
_WITH_E = str.maketrans(
    {"ä": "ae", "ö": "oe", "ü": "ue", "ø": "oe", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "Ø": "Oe"}
)
# An "e" after a, o or u that may stand for an umlaut: "schuetze" may be "schütze" ("bauer" may not).
_DIGRAPH = re.compile(r"(?<![aeiou])([aou])e(?=[^aeiouy])")


_LOOKUPS: dict[tuple[str, ...], tuple[str, ...]] = {}  # one tuple per first name (``ParsedName.lookups``)


class ParsedName:
    """A person's name folded into a surname and given-name words (an initial is one letter).

    Equal when surname and given names are; never changed once made (a plain slotted class, not a
    frozen dataclass: an import makes one per distinct author string, and frozen setters cost)."""

    __slots__ = (
        "block",
        "coauthor_key",
        "first",
        "full",
        "given",
        "joined",
        "key",
        "lookups",
        "surname",
        "swapped_block",
        "umlaut",
        "variant",
    )

    def __init__(
        self,
        surname: str,
        given: tuple[str, ...],
        key: str = "",
        first: str = "",
        *,
        variant: str = "",
        umlaut: bool = False,
    ) -> None:
        self.surname, self.given = surname, given
        # The surname's other ASCII spelling: "schuetze" for a printed "Schütze" (``umlaut``), or the
        # umlaut's folded form "schutze" for a printed "Schuetze" (which may be "Schütze"); else "".
        self.variant, self.umlaut = variant, umlaut
        self.key = key  # person_key of the whole name as written
        # The first given name as written, hyphens closed up ("Wei-jie" → "weijie").
        self.first = first = first or (given[0] if given else "")
        self.full = full = sum(len(g) > 1 for g in given)  # how many given names are written out
        # Several written-out given names run together ("Jian-Feng" → "jianfeng").
        self.joined = "".join(given) if full > 1 and full == len(given) else ""
        # The loose key researchers are looked up by: surname and first initial ("liu y").
        self.block = f"{surname} {given[0][0]}" if given else surname
        # The block of the same two words in the other order ("Zhang Jun" / "Jun Zhang": East Asian
        # names are printed both ways), when the name is exactly two written-out words; else "".
        # Shared between names, as ``lookups``: an import keeps one parsed name per author string.
        two_words = len(given) == 1 and full == 1 and " " not in surname
        self.swapped_block = sys.intern(f"{given[0]} {surname[0]}") if two_words else ""
        # How a co-author is recognised: surname and first given name as written ("liu yang", "yu
        # weijie"): an initial only matches an initial, and "Wei-jie Yu" is not "Wei Yu" (loose keys
        # would tell "Yu Zhang" from "Yue Zhang" no better than a coin).
        self.coauthor_key = f"{surname} {first}" if first else surname
        # Where in its block a researcher of this name may be filed (people.resolver): under the
        # written-out first name, its initial, no given name, or the given names run together;
        # empty for an initial (or no given name), which may be anyone of the block.
        head = given[0] if given else ""
        self.lookups: tuple[str, ...] = ()
        if len(head) > 1:
            lookups = (head, head[0], "", self.joined) if self.joined else (head, head[0], "")
            self.lookups = _LOOKUPS.setdefault(lookups, lookups)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParsedName):
            return NotImplemented
        return self.surname == other.surname and self.given == other.given

    def __hash__(self) -> int:
        return hash((self.surname, self.given))

    def __repr__(self) -> str:
        return f"ParsedName({self.surname!r}, {self.given!r})"

    @property
    def variant_block(self) -> str:
        """The block a researcher of the surname's other spelling is filed in ("schuetze h" for
        "Hinrich Schütze", "schutze h" for "Hinrich Schuetze"), "" when it has none."""
        if not self.variant:
            return ""
        return f"{self.variant} {self.given[0][0]}" if self.given else self.variant

    def is_swap_of(self, other: ParsedName) -> bool:
        """The same two written-out words in the other order ("Zhang Jun" / "Jun Zhang")."""
        return bool(self.swapped_block) and other.given == (self.surname,) and other.surname == self.given[0]


# Small: the resolver keeps its own table of every author string it parsed
# (``people.resolver.ResearcherResolver.parse``); this one serves the pages and the evals (a
# 200k-entry cache beside it cost ~40 MB at 75k papers).
@lru_cache(maxsize=16_384)
def parse_name(name: str) -> ParsedName | None:
    """``"Nancy F. Chen"`` → surname ``chen``, given ``("nancy", "f")``; None when not a person.

    The surname is the last word of the family name: particles and the first parts of a
    double-barrelled name are left out of it and out of the given names ("Nisansa de Silva" and
    "Jordan Boyd-Graber" are filed under "silva" and "graber", like "Nisansa De Silva" and "Jordan
    Boyd Graber", whose extra word is a middle name any other spelling agrees with). Hyphenated and
    dotted given names split into words ("Jean-Pierre", "J.-P." → two words), so initials line up
    with the names they abbreviate."""
    key = person_key(name)
    if key is None:
        return None
    if _UNUSUAL.search(name):
        parsed = HumanName(name)
        if fold(parsed.last):
            return _parsed(parsed.last, f"{parsed.first} {parsed.middle}", key)
    raw, words = name.split(), key.split()
    # How many folded words the last token makes: one for "Liu", two for "Boyd-Graber", none for
    # the "." of "Mausam ." (dropped). Plain tokens are not folded again (the hot path of an import).
    while not (tail := 1 if raw[-1].isalpha() else len(fold(raw[-1]).split())):
        raw.pop()
    first = raw[0] if len(raw) > 1 else ""
    if first and not (first.isalpha() and first.isascii()):
        first = _first_name(first)
    surname = words[-1]
    variant, umlaut = _variant(raw[-1], surname)
    return ParsedName(surname, tuple(words[:-tail]), key, first.lower(), variant=variant, umlaut=umlaut)


def _parsed(family: str, given: str, key: str) -> ParsedName:
    surname = fold(family).split()[-1]
    variant, umlaut = _variant(family, surname)
    first = _first_name(given.split()[0]) if given.split() else ""
    return ParsedName(surname, tuple(fold(given).split()), key, first, variant=variant, umlaut=umlaut)


def _variant(written: str, surname: str) -> tuple[str, bool]:
    """``ParsedName``'s ``variant`` and ``umlaut`` for a family name as written."""
    if not _UMLAUTS.isdisjoint(written):
        spelled = fold(written.translate(_WITH_E)).split()
        return (spelled[-1], True) if spelled and spelled[-1] != surname else ("", False)
    if "e" in surname and (folded := _DIGRAPH.sub(r"\1", surname)) != surname:
        return folded, False
    return "", False


def same_surname(a: ParsedName, b: ParsedName) -> bool:
    """The same surname, or one printed with an umlaut and the other in its "e" spelling ("Schütze" /
    "Schuetze"; "Suen" is not "Sun": only an umlaut tells that an "e" may be one)."""
    return (
        a.surname == b.surname
        or (a.umlaut and a.variant == b.surname)
        or (b.umlaut and b.variant == a.surname)
    )


def _first_name(token: str) -> str:
    """The first given name of a token, hyphens closed up ("Wei-jie" → "weijie"); initials stay an
    initial ("J.-P.", "J-C." → "j": "jc" would be a name no one has, and so look rare)."""
    parts = fold(token).split()
    if all(len(part) == 1 for part in parts):
        return parts[0] if parts else ""
    closed = fold(token.replace("-", "")).split()
    return closed[0] if closed else ""


def block_of(name: str) -> str | None:
    """The loose key of a written name (``ParsedName.block``), None when it names no person."""
    parsed = parse_name(name)
    return parsed.block if parsed else None


def names_compatible(a: ParsedName, b: ParsedName) -> bool:
    """Whether two parsed names (same surname) can be one person: each given name agrees with the one
    in its place, an initial with any name it starts ("Y." ~ "Yang"), and a missing middle name with
    any ("Nancy F. Chen" ~ "Nancy Chen"). Written-out given names run together also agree
    ("Jianfeng" ~ "Jian-Feng"); a hyphenated first name is one name ("Jian-Xun" ≁ "Jian")."""
    if not a.given or not b.given:
        return True
    if a.full and b.full and "".join(a.given) == "".join(b.given):  # "Jianfeng" ~ "Jian-Feng"
        return True
    if len(a.first) > 1 and len(b.first) > 1 and a.first != b.first:  # "Jian-Xun" is not "Jian"
        return False
    if all(map(_agree, a.given, b.given)):
        return True
    # A middle name left out ("Shareefa Al Amer" ~ "Shareefa Ahmed Al Amer"): the shorter given
    # names agree, in order, with some of the longer's, the first with the first.
    short, long = (a.given, b.given) if len(a.given) < len(b.given) else (b.given, a.given)
    if len(short) < 2 or len(short) == len(long) or not _agree(short[0], long[0]):
        return False
    rest = iter(long[1:])
    return all(any(_agree(x, y) for y in rest) for x in short[1:])


def _agree(x: str, y: str) -> bool:
    """Two given names in the same place: an initial agrees with any name it starts."""
    return x[0] == y[0] and (len(x) == 1 or len(y) == 1 or x == y)
