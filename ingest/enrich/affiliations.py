"""Printed affiliation strings → ROR institutions, with rapidfuzz.

A printed affiliation ("Dept. of Physics, Univ. of Toronto, Toronto, ON, Canada") names an
institution somewhere among its comma-separated parts, next to departments, streets and countries.
The matcher:

1. splits the string into parts and looks at every run of one to three adjacent parts;
2. normalises each run like the stored names (accents, case, punctuation folded; common
   abbreviations such as "Univ." and "Inst." expanded; "The" and company suffixes such as "Inc."
   dropped) and looks it up exactly among every name, label, alias and (for a part written in
   capitals) acronym of the imported institutions;
3. otherwise compares it with rapidfuzz (``token_sort_ratio`` over the words that carry meaning)
   against the names that share its rarest word;
4. uses the place: a candidate in another country than the one the string names is dropped, one in
   the city the string names wins a tie;
5. answers only when the best candidate scores at least the threshold and no other institution
   scores as well (a tie it cannot break is an abstention, never a guess).

Precision over recall: a wrong institution on a page is worse than none (``benchmarks/affiliations.py``
measures both on 6,000 real strings with known ROR ids).
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from rapidfuzz import fuzz, process
from sqlalchemy import Connection, select

from catalog.institutions import institution_key
from catalog.models import Institution
from ingest.enrich.ror import RorRecord

DEFAULT_THRESHOLD = 90.0
SPAN_SCORE = 96.0  # a known name inside a longer part: strong, but the whole part is stronger
ACRONYM_SCORE = 92.0  # an acronym alone is evidence, not proof: a stated country must agree


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PAREN = re.compile(r"\s*\([^)]*\)\s*")
_SPLIT = re.compile(r"[,;()\[\]|\n\t]+|\s[-–—]\s")
_STOPWORDS = _words(
    "the of and for at in de del della di der des du la le les y e et fur und von van zu a an"
)
# Words that name a kind of institution, not one institution: a span made only of them is no match.
_GENERIC = _words(
    "university universitat universidad universite universita college school institute institution "
    "hospital clinic center centre laboratory laboratories department faculty academy research science "
    "sciences technology medical medicine national international state general central foundation "
    "society council agency ministry group company health care of the and for at in de"
)
_LEGAL = _words("inc ltd llc gmbh corp corporation co plc sa ag bv nv pvt limited srl spa kg oy ab as")
_ABBREVIATIONS = {
    "univ": "university",
    "uni": "university",
    "universitaet": "universitat",
    "inst": "institute",
    "institut": "institute",
    "dept": "department",
    "natl": "national",
    "nat": "national",
    "tech": "technology",
    "technol": "technology",
    "lab": "laboratory",
    "labs": "laboratories",
    "ctr": "center",
    "centre": "center",
    "hosp": "hospital",
    "coll": "college",
    "acad": "academy",
    "sch": "school",
    "med": "medical",
    "sci": "science",
    "res": "research",
    "st": "saint",
}
# Ways papers write countries that are not their geonames names.
_COUNTRY_ALIASES = {
    "usa": "US",
    "us": "US",
    "u s a": "US",
    "u s": "US",
    "united states of america": "US",
    "america": "US",
    "uk": "GB",
    "u k": "GB",
    "england": "GB",
    "scotland": "GB",
    "wales": "GB",
    "northern ireland": "GB",
    "great britain": "GB",
    "prc": "CN",
    "p r china": "CN",
    "peoples republic of china": "CN",
    "people s republic of china": "CN",
    "korea": "KR",
    "republic of korea": "KR",
    "south korea": "KR",
    "the netherlands": "NL",
    "holland": "NL",
    "russia": "RU",
    "russian federation": "RU",
    "iran": "IR",
    "viet nam": "VN",
    "vietnam": "VN",
    "czech republic": "CZ",
    "deutschland": "DE",
    "espana": "ES",
    "brasil": "BR",
    "italia": "IT",
    "turkiye": "TR",
    "taiwan": "TW",
    "roc": "TW",
}
_US_STATES = _words(
    "al ak az ar ca co ct de fl ga hi id il in ia ks ky la me md ma mi mn ms mo mt ne nv nh nj nm ny nc "
    "nd oh ok or pa ri sc sd tn tx ut vt va wa wv wi wy dc"
)


def normalise(text: str) -> str:
    """The comparable form of a name or printed part: folded, abbreviations expanded, "The" and
    company suffixes dropped."""
    words = [_ABBREVIATIONS.get(w, w) for w in institution_key(text.replace("&", " and ")).split()]
    while words and words[0] == "the":
        words = words[1:]
    while len(words) > 1 and words[-1] in _LEGAL:
        words = words[:-1]
    return " ".join(words)


def _content(key: str) -> str:
    """The words that carry meaning, for fuzzy comparison."""
    return " ".join(w for w in key.split() if w not in _STOPWORDS)


@dataclass(frozen=True, slots=True)
class Place:
    institution_id: int | None
    ror_id: str | None
    name: str
    country_code: str | None
    city_key: str | None


@dataclass(frozen=True, slots=True)
class Match:
    """The institution a printed string was matched to, how, and how sure (0–100)."""

    institution_id: int | None
    ror_id: str | None
    name: str
    score: float
    method: str  # "exact" | "acronym" | "fuzzy"
    substring: str


@dataclass(slots=True)
class _Candidate:
    place: int
    score: float
    method: str
    substring: str
    city: bool = False


class AffiliationMatcher:
    """An in-memory index of institution names; :meth:`match` is cheap and thread-safe."""

    def __init__(
        self,
        names: Iterable[tuple[Place, str, str]],
        *,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        """``names``: (institution, name, kind) for every name it goes by (kind as in
        ``InstitutionName``: name, label, alias, acronym)."""
        self.threshold = threshold
        self.places: list[Place] = []
        place_index: dict[tuple[int | None, str | None], int] = {}
        self._exact: dict[str, set[int]] = defaultdict(set)
        self._acronyms: dict[str, set[int]] = defaultdict(set)
        keys: dict[str, set[int]] = defaultdict(set)
        for place, name, kind in names:
            ident = (place.institution_id, place.ror_id)
            pid = place_index.get(ident)
            if pid is None:
                pid = place_index[ident] = len(self.places)
                self.places.append(place)
            if kind == "acronym":
                if len(name) >= 2:
                    self._acronyms[name].add(pid)
                continue
            for key in _variant_keys(name):
                self._exact[key].add(pid)
                keys[_content(key)].add(pid)
        self._keys: list[str] = list(keys)
        self._key_places: list[set[int]] = [keys[k] for k in self._keys]
        self._by_word: dict[str, list[int]] = defaultdict(list)
        for i, key in enumerate(self._keys):
            for word in set(key.split()):
                self._by_word[word].append(i)
        self._countries: dict[str, str] = dict(_COUNTRY_ALIASES)
        self._city_country: dict[str, set[str]] = defaultdict(set)
        for place in self.places:
            if place.country_code and place.city_key:
                self._city_country[place.city_key].add(place.country_code)

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def from_records(
        cls, records: Iterable[RorRecord], *, threshold: float = DEFAULT_THRESHOLD
    ) -> AffiliationMatcher:
        """An index straight from ROR records (no catalogue; ``institution_id`` is None)."""
        names: list[tuple[Place, str, str]] = []
        countries: dict[str, str] = {}
        for record in records:
            if record.status == "withdrawn":
                continue
            place = Place(None, record.ror_id, record.name, record.country_code, _city_key(record.city))
            names += [(place, name, kind) for name, kind in record.names()]
            if record.country_name and record.country_code:
                countries[institution_key(record.country_name)] = record.country_code
        matcher = cls(names, threshold=threshold)
        matcher._add_countries(countries)
        return matcher

    @classmethod
    def from_catalogue(cls, conn: Connection, *, threshold: float = DEFAULT_THRESHOLD) -> AffiliationMatcher:
        """An index of every institution in the catalogue that is not withdrawn."""
        places: dict[int, Place] = {}
        countries: dict[str, str] = {}
        raw: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for row in conn.execute(
            select(
                Institution.id,
                Institution.ror_id,
                Institution.name,
                Institution.aliases,
                Institution.acronyms,
                Institution.country_code,
                Institution.country_name,
                Institution.city,
                Institution.status,
            )
        ):
            if row.status == "withdrawn":
                continue
            places[row.id] = Place(row.id, row.ror_id, row.name, row.country_code, _city_key(row.city))
            raw[row.id].append((row.name, "name"))
            raw[row.id] += [(a, "alias") for a in row.aliases or []]
            raw[row.id] += [(a, "acronym") for a in row.acronyms or []]
            if row.country_name and row.country_code:
                countries[institution_key(row.country_name)] = row.country_code
        matcher = cls(
            ((places[iid], name, kind) for iid, names in raw.items() for name, kind in names),
            threshold=threshold,
        )
        matcher._add_countries(countries)
        return matcher

    def _add_countries(self, countries: dict[str, str]) -> None:
        for name, code in countries.items():
            self._countries.setdefault(name, code)

    # -- matching ------------------------------------------------------------------------------

    def match(self, text: str) -> Match | None:
        """The institution ``text`` names, or None when no candidate is sure enough or two tie."""
        ranked = self.candidates(text)
        if not ranked or ranked[0].score < self.threshold:
            return None
        if len(ranked) > 1 and ranked[1].score >= ranked[0].score:
            return None  # a tie the place could not break
        return ranked[0]

    def candidates(self, text: str, *, limit: int = 5) -> list[Match]:
        """The best candidates for ``text``, best first (for debugging and the benchmark)."""
        parts = [p.strip() for p in _SPLIT.split(html.unescape(text)) if p and p.strip()]
        if not parts:
            return []
        keys = [normalise(p) for p in parts]
        countries = self._countries_in(keys)
        words = set(" ".join(keys).split())
        best: dict[int, _Candidate] = {}

        def offer(pid: int, score: float, method: str, substring: str) -> None:
            place = self.places[pid]
            if countries and place.country_code and place.country_code not in countries:
                return
            held = best.get(pid)
            if held is None or score > held.score:
                city = place.city_key is not None and set(place.city_key.split()) <= words
                best[pid] = _Candidate(pid, score, method, substring, city)

        for part, key in zip(parts, keys, strict=True):
            for span in self._spans(key):
                for pid in self._exact[span]:
                    offer(pid, SPAN_SCORE, "span", part)
        for start in range(len(parts)):
            for end in range(start + 1, min(start + 3, len(parts)) + 1):
                key = " ".join(k for k in keys[start:end] if k)
                if not key or key in self._countries or (end - start == 1 and key in self._city_country):
                    continue  # a place, not an institution (some aliases are city names)
                substring = ", ".join(parts[start:end])
                raw = parts[start].strip(" .")
                short = end - start == 1 and " " not in key and len(key) <= 5
                if short and (key in _US_STATES or len(key) < 3):
                    continue  # "CA", "MA": a state, not an acronym
                exact = self._exact.get(key)
                if exact:
                    for pid in exact:  # a short one-word name is as weak as an acronym
                        offer(pid, ACRONYM_SCORE if short else 100.0, "exact", substring)
                    continue
                if short and raw.isupper() and raw in self._acronyms:
                    for pid in self._acronyms[raw]:
                        offer(pid, ACRONYM_SCORE, "acronym", substring)
                for pid, score in self._fuzzy(key):
                    offer(pid, score, "fuzzy", substring)
        ranked = sorted(best.values(), key=lambda c: (c.score, c.city), reverse=True)
        # A name matched on a longer stretch of the text beats one matched inside that stretch
        # ("Indian Institute of Technology, Madras" is IIT Madras, not an alias "Indian Institute of
        # Technology" of another IIT).
        sure = [c for c in ranked if c.score >= self.threshold]
        ranked = [
            c
            for c in ranked
            if not any(o is not c and c.substring in o.substring and c.substring != o.substring for o in sure)
        ]
        # A candidate in the city the string names beats one that only ties on the name.
        if len(ranked) > 1 and ranked[0].score == ranked[1].score and ranked[0].city and not ranked[1].city:
            ranked[0].score += 0.5
        return [
            Match(
                self.places[c.place].institution_id,
                self.places[c.place].ror_id,
                self.places[c.place].name,
                c.score,
                c.method,
                c.substring,
            )
            for c in ranked[:limit]
        ]

    def _spans(self, key: str) -> list[str]:
        """Known names written inside a longer part ("… Planning University of Aveiro Portugal"),
        longest first and none inside another: at least two words, not all of them generic."""
        words = key.split()
        found: list[tuple[int, int]] = []
        for size in range(len(words) - 1, 1, -1):
            for start in range(len(words) - size + 1):
                end = start + size
                if any(s <= start and end <= e for s, e in found):
                    continue
                span = words[start:end]
                if " ".join(span) in self._exact and not set(span) <= _GENERIC:
                    found.append((start, end))
        return [" ".join(words[s:e]) for s, e in found]

    def _fuzzy(self, key: str) -> list[tuple[int, float]]:
        content = _content(key)
        words = content.split()
        if not words:
            return []
        rare = sorted((w for w in set(words) if w in self._by_word), key=lambda w: len(self._by_word[w]))[:2]
        if not rare:
            return []
        pool = {i for w in rare for i in self._by_word[w]}
        choices = {i: self._keys[i] for i in pool}
        cutoff = max(self.threshold - 10, 0)
        found: list[tuple[int, float]] = []
        for name, score, i in process.extract(
            content, choices, scorer=fuzz.token_sort_ratio, score_cutoff=cutoff, limit=10
        ):
            if _covers(words, name.split()):
                found += [(pid, float(score)) for pid in self._key_places[i]]
        return found

    def _countries_in(self, keys: Sequence[str]) -> set[str]:
        """Countries the string names: a part that is a country ("Canada", "USA"), an address part
        that ends with one ("D-48149 Münster Germany"), or a US state and ZIP code ("CA 94305")."""
        found: set[str] = set()
        for key in keys:
            code = self._countries.get(key)
            if code:
                found.add(code)
                continue
            words = key.split()
            if len(words) >= 2 and words[0] in _US_STATES and words[1].isdigit():
                found.add("US")
                continue
            if any(w.isdigit() for w in words):
                for size in (3, 2, 1):
                    code = self._countries.get(" ".join(words[-size:]))
                    if code:
                        found.add(code)
                        break
        return found


def _covers(printed: list[str], name: list[str]) -> bool:
    """Whether every word of an institution's name is in the printed text, allowing spelling
    variants ("Organisation"/"Organization", "Application"/"Applications") but not other words
    ("Hue" is not "HSE", "Lyon 1" is not "Lyon 2"): a fuzzy score alone would accept those."""
    spare = [w for w in printed if w not in name]
    for word in name:
        if word in printed:
            continue
        if word.isdigit():
            return False
        pair = process.extractOne(word, spare, scorer=fuzz.ratio, score_cutoff=85)
        if pair is None or pair[0].isdigit():
            return False
        spare.remove(pair[0])
    return True


def _variant_keys(name: str) -> set[str]:
    """The normalised keys a name is indexed under: itself and, for ROR's "Google (United States)"
    style, the name without its parenthetical."""
    keys = {normalise(name)}
    if "(" in name:
        keys.add(normalise(_PAREN.sub(" ", name)))
    return {k for k in keys if k}


def _city_key(city: str | None) -> str | None:
    return institution_key(city) if city else None


class Matcher(Protocol):
    def match(self, text: str) -> Match | None: ...


class LazyMatcher:
    """Builds its index (a few seconds for the 13.5k ROR records) on the first string it must match,
    so runs that match nothing never pay for it."""

    def __init__(self, build: Callable[[], AffiliationMatcher | None]) -> None:
        self._build = build
        self._matcher: AffiliationMatcher | None = None
        self._built = False

    def match(self, text: str) -> Match | None:
        if not self._built:
            self._matcher, self._built = self._build(), True
        return self._matcher.match(text) if self._matcher else None


def match_all(matcher: Matcher, texts: Iterable[str]) -> dict[str, Match | None]:
    """Match many strings once each (the same string printed on many papers is matched once)."""
    return {text: matcher.match(text) for text in dict.fromkeys(texts)}
