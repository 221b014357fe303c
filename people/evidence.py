"""The evidence that tells researchers of one name apart: what a paper says about its authors
(co-authors, fine-grained categories, venue words, a topic signature of its title and abstract, its
year), a researcher's profile of it, the words of printed affiliations, and the features the
resolver's model scores (``FEATURES``; the model's weights are ``people.weights``)."""

from __future__ import annotations

import functools
import math
import operator
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from people.names import ParsedName

# Co-author evidence is recorded for papers up to this many authors: a 300-author collaboration
# would add 90,000 pairs and says little about who is who.
MAX_COAUTHOR_EVIDENCE = 50
_PHYSICS = {
    "astro-ph",
    "cond-mat",
    "gr-qc",
    "hep-ex",
    "hep-lat",
    "hep-ph",
    "hep-th",
    "math-ph",
    "nlin",
    "nucl-ex",
    "nucl-th",
    "physics",
    "quant-ph",
    "acc-phys",
    "chao-dyn",
    "supr-con",
    "atom-ph",
}


def field_of(category: str) -> str:
    """The broad field of a category: ``cs.LG`` → ``cs``, ``hep-th`` → ``physics``, ``math.GT`` → ``math``."""
    archive = category.split(".", 1)[0]
    return "physics" if archive in _PHYSICS else archive


# -- evidence -------------------------------------------------------------------------------------

# The topic of a paper or researcher: its title and abstract words (6-letter prefixes, a cheap
# stemmer) hashed into a 1024-bit signature: a Python int, so a profile costs ~150 bytes and an
# overlap is two integer operations (a 75k import keeps ~180k profiles in memory).
TOPIC_BITS = 1024
_WORD = re.compile(r"[a-z]{4,}")
_STOP = frozenset(
    [
        "this",
        "that",
        "with",
        "from",
        "have",
        "been",
        "were",
        "which",
        "their",
        "these",
        "those",
        "such",
        "than",
        "also",
        "into",
        "over",
        "only",
        "more",
        "most",
        "both",
        "each",
        "other",
        "when",
        "where",
        "while",
        "there",
        "then",
        "them",
        "they",
        "will",
        "would",
        "could",
        "should",
        "about",
        "paper",
        "propose",
        "proposed",
        "present",
        "show",
        "shows",
        "based",
        "using",
        "used",
        "results",
        "approach",
        "method",
        "methods",
        "work",
        "study",
        "task",
        "tasks",
        "model",
        "models",
        "data",
        "dataset",
        "datasets",
        "performance",
        "well",
        "first",
        "however",
        "international",
        "conference",
        "proceedings",
        "annual",
        "meeting",
        "workshop",
        "association",
        "computational",
        "linguistics",
        "journal",
        "volume",
        "part",
        "transactions",
        "letters",
        "findings",
        "joint",
        "papers",
    ]
)
# Venue words that tell venues apart (not "proceedings", "long papers", years).
_VENUE_WORD = re.compile(r"[a-z]{3,}")
_VENUE_STOP = _STOP | frozenset(
    ["the", "and", "for", "long", "short", "main", "vol", "its", "new", "int", "conf", "proc"]
)


_PUNCTUATION = str.maketrans(dict.fromkeys("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", " "))


class _WordBits(dict[str, int]):
    """Token → the bit of its 6-letter prefix (0 for a stop word or no word), judged on first sight."""

    def __missing__(self, token: str) -> int:
        if len(self) > 500_000:  # bounded: a long import meets ever more rare tokens
            self.clear()
        word = token if _WORD.fullmatch(token) and token not in _STOP else ""
        bit = self[token] = _BIT[zlib.crc32(word[:6].encode()) % TOPIC_BITS] if word else 0
        return bit


_BIT = [1 << i for i in range(TOPIC_BITS)]  # one int per bit, shared by every word that sets it


_BITS = _WordBits()


def topic_signature(text: str) -> int:
    """The bits of a text's words: split by str methods, each distinct token judged once (a repeated
    word would only set its bit again) and the bits OR-ed in C (the hot path of an import)."""
    return functools.reduce(
        operator.or_, map(_BITS.__getitem__, set(text.lower().translate(_PUNCTUATION).split())), 0
    )


# Evidence sets are shared wherever they can be: every empty one is this one (an empty frozenset
# costs 216 bytes, and most arXiv authors have no printed affiliation and most papers no venue), a
# researcher of one paper holds the paper's own sets, and papers and researchers share equal
# category sets.
_EMPTY: frozenset[str] = frozenset()
_CATEGORY_SETS: dict[frozenset[str], frozenset[str]] = {}

# A researcher's co-authors: the paper's own frozenset for a researcher of one paper; once papers
# add up, a tuple (a fifth of a frozenset's memory: the co-author sets were the resolver's largest
# cost at 75k papers), a frozenset again past ``PEOPLE_AS_SET_FROM`` (fast tests for the prolific).
People = frozenset[str] | tuple[str, ...]
PEOPLE_AS_SET_FROM = 64


def _shared(words: frozenset[str]) -> frozenset[str]:
    return words if words else _EMPTY


def _union(held: frozenset[str], more: frozenset[str]) -> frozenset[str]:
    if not more or more <= held:
        return held
    return held | more if held else more


def _union_people(held: People, more: People) -> People:
    if not held:
        return more
    if not more:
        return held
    new = (more if type(more) is frozenset else frozenset(more)).difference(held)
    if not new:
        return held
    if len(held) + len(new) < PEOPLE_AS_SET_FROM:
        return (*held, *new)
    return held.union(new) if type(held) is frozenset else new.union(held)


def _common(a: People, b: People) -> frozenset[str]:
    """The co-authors two sets of people share (either may be a tuple)."""
    if type(a) is frozenset:
        return a.intersection(b)
    return b.intersection(a) if type(b) is frozenset else frozenset(a).intersection(b)


def _categories(categories: Iterable[str]) -> frozenset[str]:
    held = frozenset(categories)
    return _one_category_set(held) if held else _EMPTY


def _union_categories(held: frozenset[str], more: frozenset[str]) -> frozenset[str]:
    union = _union(held, more)
    return union if union is held or union is more else _one_category_set(union)


def _one_category_set(categories: frozenset[str]) -> frozenset[str]:
    if len(_CATEGORY_SETS) > 100_000:
        _CATEGORY_SETS.clear()
    return _CATEGORY_SETS.setdefault(categories, categories)


def venue_words(venue: str | None) -> frozenset[str]:
    if not venue:
        return _EMPTY
    return _shared(frozenset(w for w in _VENUE_WORD.findall(venue.lower()) if w not in _VENUE_STOP))


@dataclass(slots=True, frozen=True)
class PaperEvidence:
    """What one paper says about each of its authors."""

    people: frozenset[str]  # its authors' co-author keys (empty past MAX_COAUTHOR_EVIDENCE)
    categories: frozenset[str]
    venue: frozenset[str]
    year: int | None
    topic: int
    topic_bits: int = 0  # topic.bit_count()

    @classmethod
    def of(
        cls,
        parsed: Sequence[ParsedName | None],
        categories: Iterable[str],
        venue: str | None,
        year: int | None,
        text: str,
    ) -> PaperEvidence:
        people = frozenset(p.coauthor_key for p in parsed if p)
        return cls(
            _shared(people) if len(people) <= MAX_COAUTHOR_EVIDENCE else _EMPTY,
            _categories(categories),
            venue_words(venue),
            year,
            topic := topic_signature(text),
            topic.bit_count(),
        )


# The topic is read from the title and the start of the abstract: its first sentences name the
# subject, and the signature was the largest cost of resolving (the gold files give the same
# figures, within 0.007, with the title alone, the first 150 to 840 characters or all of it:
# docs/decisions/researcher-evidence.md).
TOPIC_ABSTRACT_CHARS = 250


def topic_text(title: str, abstract: str | None) -> str:
    return f"{title} {(abstract or '')[:TOPIC_ABSTRACT_CHARS]}"


@dataclass(slots=True, eq=False)
class Profile:
    """What the resolver knows about one researcher; ``id`` is None until the row is inserted."""

    id: int | None
    name: str
    key: str  # catalog.names.person_key of the display name
    parsed: ParsedName  # the most written-out form seen (a candidate's name must agree with it)
    # Evidence as frozensets: a researcher of one paper shares the paper's own sets (most of a large
    # catalogue's researchers have one paper: no copies). Co-authors may include the person's own key.
    coauthors: People = _EMPTY
    categories: frozenset[str] = _EMPTY
    venue: frozenset[str] = _EMPTY
    affiliation: frozenset[str] = _EMPTY
    topic: int = 0
    first_year: int | None = None
    last_year: int | None = None
    papers: int = 0
    merged_into: Profile | None = None  # set when the resolver joined this researcher to another
    born: int = 0  # creation order in this run, for profiles without an id yet
    identified: bool = False  # carries an ORCID / OpenAlex / Semantic Scholar id (enrichment's)
    indexed: ParsedName | None = None  # the name the resolver's index files it under

    @property
    def block(self) -> str:
        return self.parsed.block

    @property
    def current(self) -> Profile:
        """The researcher this one now is (itself unless merged)."""
        profile = self
        while profile.merged_into is not None:
            profile = profile.merged_into
        return profile

    @classmethod
    def founded(
        cls, name: str, parsed: ParsedName, paper: PaperEvidence, affiliation: frozenset[str], born: int
    ) -> Profile:
        """A new researcher of one paper (its evidence is the paper's own, shared, not copied)."""
        return cls(
            None,
            name,
            parsed.key or parsed.block,
            parsed,
            coauthors=paper.people,
            categories=paper.categories,
            venue=paper.venue,
            affiliation=affiliation,
            topic=paper.topic,
            first_year=paper.year,
            last_year=paper.year,
            papers=1,
            born=born,
        )

    def absorb(self, other: Profile) -> None:
        """Take over ``other``'s evidence (``other`` is merged into this one)."""
        if other.parsed.full > self.parsed.full:
            self.parsed = other.parsed
        self.coauthors = _union_people(self.coauthors, other.coauthors)
        self.categories = _union_categories(self.categories, other.categories)
        self.venue = _union(self.venue, other.venue)
        self.affiliation = _union(self.affiliation, other.affiliation)
        self.topic = self.topic | other.topic if self.topic else other.topic
        years = [y for y in (self.first_year, self.last_year, other.first_year, other.last_year) if y]
        self.first_year, self.last_year = (min(years), max(years)) if years else (None, None)
        self.papers += other.papers
        other.merged_into = self

    def add(self, parsed: ParsedName, paper: PaperEvidence, affiliation: frozenset[str]) -> bool:
        """Add one paper's evidence; whether the name became more written-out (it is refiled)."""
        renamed = parsed.full > self.parsed.full or (
            parsed.full == self.parsed.full and len(parsed.given) > len(self.parsed.given)
        )
        if renamed:
            self.parsed = parsed
        self.coauthors = _union_people(self.coauthors, paper.people)
        self.categories = _union_categories(self.categories, paper.categories)
        self.venue = _union(self.venue, paper.venue)
        self.affiliation = _union(self.affiliation, affiliation)
        if paper.topic & ~self.topic:  # a new int only when bits are added (else shared or kept)
            self.topic = self.topic | paper.topic if self.topic else paper.topic
        if paper.year is not None:
            self.first_year = min(self.first_year or paper.year, paper.year)
            self.last_year = max(self.last_year or paper.year, paper.year)
        self.papers += 1
        return renamed


FEATURES = (
    "coauthors",  # log(1 + shared co-authors' keys)
    "category",  # 1 when a fine-grained category is shared
    "venue",  # share of the paper's venue words the researcher has published under
    "affiliation",  # share of printed affiliation words in common (of the shorter)
    "topic",  # share of the paper's topic bits the researcher has, less the share by chance
    "years_apart",  # years outside the researcher's span, / 10, at most 2
    "known",  # log(1 + the researcher's co-authors): a large circle is shared by chance
)


def features(
    profile: Profile,
    parsed: ParsedName,
    paper: PaperEvidence,
    affiliation: frozenset[str],
) -> tuple[float, ...]:
    """The evidence that ``profile`` wrote this paper as the author ``parsed``."""
    return _features(
        profile,
        parsed.coauthor_key,  # the paper's people include the author; so may the co-authors
        paper.people,
        paper.categories,
        paper.venue,
        affiliation,
        paper.topic,
        paper.topic_bits,
        paper.year,
        paper.year,
    )


def pair_features(a: Profile, b: Profile) -> tuple[float, ...]:
    """``features`` of two researchers: the one of fewer papers read as one paper of the other."""
    small, large = (a, b) if a.papers <= b.papers else (b, a)  # ties: ``a`` is the smaller
    return _features(
        large,
        small.parsed.coauthor_key,
        small.coauthors,
        small.categories,
        small.venue,
        small.affiliation,
        small.topic,
        0,
        small.first_year,
        small.last_year,
    )


def _features(
    profile: Profile,
    own: str,
    people: People,
    categories: frozenset[str],
    venue_words: frozenset[str],
    affiliation: frozenset[str],
    topic_signature: int,
    topic_bits: int,
    first_year: int | None,
    last_year: int | None,
) -> tuple[float, ...]:
    known = profile.coauthors
    shared = 0
    if type(people) is not frozenset or not people.isdisjoint(known):  # a tuple has no isdisjoint
        common = _common(people, known)
        shared = len(common) - (own in common)
    venue = len(venue_words & profile.venue) / len(venue_words) if venue_words and profile.venue else 0.0
    topic = 0.0
    if topic_signature and profile.topic:
        topic = (topic_signature & profile.topic).bit_count() / (topic_bits or topic_signature.bit_count())
        topic -= profile.topic.bit_count() / TOPIC_BITS
    apart = 0.0
    if first_year is not None and last_year is not None:
        first, last = profile.first_year, profile.last_year
        if first is not None and last is not None:
            apart = min(max(first - last_year, first_year - last, 0) / 10, 2.0)
    return (
        math.log1p(max(shared, 0)),
        float(not categories.isdisjoint(profile.categories)),
        venue,
        affiliation_overlap(affiliation, profile.affiliation),
        topic,
        apart,
        math.log1p(max(len(known) - 1, 0)),
    )


def affiliation_words(raw: str) -> frozenset[str]:
    """The words of a printed affiliation that tell institutions apart, and (marked "^") the
    acronyms its parts' capitalised words make: "National Research Council Canada" is also "^nrcc"
    and "^nrc", which ``affiliation_overlap`` matches with a printed "NRC"."""
    words = {w for w in _VENUE_WORD.findall(raw.lower()) if w not in _AFFILIATION_STOP}
    for part in raw.split(","):
        initials = "".join(w[0] for w in _CAPITALISED.findall(part) if w != "The").lower()
        words.update(f"^{a}" for a in (initials, initials[:-1]) if len(a) >= 3)
    return frozenset(words)


def affiliation_overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """The share of printed affiliation words in common, of the shorter; an acronym printed on one
    side counts for the words it abbreviates on the other, never for two words abbreviated alike
    (every "Department of Computer Science" makes "^dcs")."""
    if not a or not b:
        return 0.0
    common = sum(w[0] != "^" for w in a & b)
    common += sum(w[1:] in b for w in a if w[0] == "^") + sum(w[1:] in a for w in b if w[0] == "^")
    shorter = min(sum(w[0] != "^" for w in a), sum(w[0] != "^" for w in b))
    return min(common / shorter, 1.0) if shorter else 0.0


_CAPITALISED = re.compile(r"\b[A-Z][a-z]+")


_AFFILIATION_STOP = frozenset(
    [
        "university",
        "univ",
        "department",
        "dept",
        "school",
        "college",
        "institute",
        "institution",
        "laboratory",
        "lab",
        "faculty",
        "science",
        "sciences",
        "engineering",
        "research",
        "center",
        "centre",
        "national",
        "state",
        "the",
        "and",
        "for",
        "usa",
        "china",
        "computer",
        "technology",
    ]
)
