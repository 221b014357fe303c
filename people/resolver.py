"""Resolve author strings to researchers.

The rule (``docs/researchers.md``), incremental: each author of a new paper joins
the most likely existing researcher or founds a new one; nothing already resolved is re-clustered,
so researcher ids are stable.

1. Candidates come from a loose block: folded surname and first initial (``people.names``), also
   the two words swapped for two-word names ("Zhang Jun" / "Jun Zhang"), filed in the block by
   first given name. A candidate must have a compatible name: initials agree with written-out names
   ("Y. Liu" ~ "Yang Liu"), a missing middle name agrees with any ("Nancy F. Chen" ~ "Nancy Chen"),
   two different written-out names never do ("Yang Liu" ≁ "Yu Liu").
2. Each compatible candidate is scored by a small logistic model (``people.weights``) over the
   evidence a catalogue has (``people.evidence``): shared co-authors, fine-grained categories, venue
   words, printed affiliations, title/abstract words, the distance in years and the size of the
   researcher's co-author circle.
   The best candidate wins if its probability is at least ``JOIN_AT``; otherwise the author founds
   a new researcher (listed under "same name"). Another candidate at least ``MERGE_AT`` likely
   (with an agreeing name) is the same person seen before without a link: it is merged into the
   older researcher, which keeps its id; the merged id redirects (a ``merged`` change).
3. When no candidate is likely enough, a rare name (``RARE_NAME_BELOW``, ``people.name_counts``)
   joins the researcher written compatibly within the same broad field, unless both print
   affiliations that share no word.
4. After each batch, each researcher that gained papers is compared as a whole with the others of
   a compatible name (``consolidate``): evidence that no single paper carried may add up to
   ``MERGE_AT``. Two authors of one paper are never merged, now or later.
5. Strings that name no person ("ATLAS Collaboration", "et al.") link to no researcher.

``Rule.OLD`` keeps the previous rule for comparison (``python -m evals researchers --resolver old``):
same folded name, joined on a shared co-author or a shared broad field.

A researcher's display name is the most complete of the spellings on their papers
(``people.names.preferred_spelling``), refreshed whenever a paper brings a new spelling
(``people.writes.respell``).
Enrichment (ORCID / OpenAlex ids) overrules this rule.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from sqlalchemy import Connection, func, select

from catalog.models import Affiliation, Authorship, Paper, PaperCategory
from catalog.names import display_name, person_key
from people.evidence import (
    _EMPTY,
    FEATURES,
    PaperEvidence,
    Profile,
    _common,
    _shared,
    affiliation_overlap,
    affiliation_words,
    features,
    field_of,
    pair_features,
    topic_text,
)
from people.name_counts import expected_namesakes, pair_namesakes
from people.names import ParsedName, names_compatible, parse_name, same_surname
from people.weights import BIAS, JOIN_AT, MERGE_AT, RARE_NAME_BELOW, WEIGHTS

# Distinct author strings the resolver keeps parsed (``ResearcherResolver.parse``).
MAX_REMEMBERED_NAMES = 500_000


class Rule(Enum):
    EVIDENCE = "evidence"  # the rule above
    OLD = "old"  # same folded name; a shared co-author or broad field joins


def _log_odds(p: float) -> float:
    return math.log(p / (1.0 - p))


@dataclass(slots=True, frozen=True)
class Candidate:
    profile: Profile
    features: tuple[float, ...]
    score: float  # the model's log-odds for these features


# Chooses among the scored candidates of one author (None: found a new researcher). The evals swap
# it to fit the model on gold decisions.
Decide = Callable[[int, Sequence[Candidate]], Profile | None]


class ResearcherResolver:
    """Keeps profiles of the researchers seen in this run, loading the others from the catalogue."""

    def __init__(
        self,
        max_cached_blocks: int = 200_000,
        *,
        rule: Rule = Rule.EVIDENCE,
        weights: Sequence[float] = WEIGHTS,
        bias: float = BIAS,
        join_at: float = JOIN_AT,
        merge_at: float = MERGE_AT,
    ) -> None:
        # block → first given name (or initial, or "" for none; also several given names run
        # together) → the profiles filed there: a written-out first name only meets its own
        # profiles and the initials', not the block's every person.
        self._by_block: dict[str, dict[str, list[Profile]]] = {}
        # What of each block has been loaded from the catalogue: the filed-under keys, None for all.
        self._loaded: dict[str, set[str] | None] = {}
        self._max = max_cached_blocks
        self.rule = rule
        self.weights, self.bias = tuple(weights), bias
        self.join_at, self.merge_at = join_at, merge_at
        self._join_z, self._merge_z = _log_odds(join_at), _log_odds(merge_at)  # scores at those P
        # Skip candidates that cannot be joined before scoring them (``_candidates``); the evals turn
        # it off to fit the model on every candidate.
        self.prune = True
        # The largest score without shared co-authors, venue or affiliation: bias, category and the
        # years at their best, then per share of topic bits and per co-author.
        w = dict(zip(FEATURES, self.weights, strict=True))
        self._bound = (
            bias + max(w["category"], 0.0) + max(w["years_apart"], 0.0) * 2.0,
            max(w["topic"], 0.0),
            max(w["known"], 0.0),
        )
        self._born = 0
        self._names: dict[str, ParsedName | None] = {}  # author string → its parsed name (``parse``)
        # Researchers that gained a paper since ``consolidate`` last ran (insertion-ordered).
        self.grown: dict[Profile, None] = {}
        # Researchers that are two authors of one paper ("Li Zhang" and "Li Zhang"): never merged.
        self._apart: dict[Profile, set[Profile]] = {}
        self.new_profiles: list[Profile] = []
        # (survivor, merged) pairs decided since the importer last took them (see ``_best``).
        self.merges: list[tuple[Profile, Profile]] = []
        self.decide: Decide = self._best
        # The rare-name prior (``_same_rare_name``); the evals turn it off to fit the model.
        self.rare_names = rule is Rule.EVIDENCE

    def parse(self, name: str) -> ParsedName | None:
        """``parse_name``, remembered: a name costs ~10 us to parse and the same names recur (177k
        distinct of 433k in the 75k listings; a reload replays every co-author of its papers), and
        every occurrence then shares one parsed value."""
        names = self._names
        if name in names:
            return names[name]
        if len(names) >= MAX_REMEMBERED_NAMES:
            names.clear()
        return names.setdefault(name, parse_name(name))

    def parse_all(self, authors: Iterable[str]) -> list[ParsedName | None]:
        """``parse`` of each author of a paper (one call a paper: the hot path of an import)."""
        names, parse = self._names, self.parse
        return [names[a] if a in names else parse(a) for a in authors]

    # -- loading ---------------------------------------------------------------------------------

    def prefetch(self, conn: Connection, names: Iterable[ParsedName]) -> None:
        """Load from the catalogue the researchers these authors may be (one pass per batch of
        papers): in each block, those filed under a first name the author's agrees with, or the
        whole block for an initial. A common block ("wang y") holds hundreds of people, and loading
        one replays all their papers."""
        wanted: dict[str, set[str] | None] = {}  # block → filed-under keys (None: all of it)
        loaded, everything = self._loaded, self.rule is Rule.OLD
        for person in names:
            if (
                loaded.get(person.block, ()) is None
                and (not person.swapped_block or loaded.get(person.swapped_block, ()) is None)
                and (not person.variant or loaded.get(person.variant_block, ()) is None)
            ):
                continue  # all of its blocks are in memory already
            for block, keys in _wanted(person, whole=everything):
                if keys is None:
                    wanted[block] = None
                elif (held := wanted.setdefault(block, set())) is not None:
                    held |= keys
        missing = {block: keys for block, keys in wanted.items() if self._unloaded(block, keys)}
        blocks = sorted(missing)
        for start in range(0, len(blocks), 500):
            chunk = {block: missing[block] for block in blocks[start : start + 500]}
            for block, keys in chunk.items():
                self._by_block.setdefault(block, {})
                held = self._loaded.get(block, set())
                self._loaded[block] = None if keys is None or held is None else held | keys
            self._load(conn, chunk)

    def _unloaded(self, block: str, keys: set[str] | None) -> bool:
        if block not in self._loaded:
            return True
        held = self._loaded[block]
        return held is not None and (keys is None or not keys <= held)

    def _load(self, conn: Connection, wanted: dict[str, set[str] | None]) -> None:
        blocks = list(wanted)
        # Straight to the driver: in a large import most blocks are new, so this lookup usually finds
        # nothing, and compiling a 500-parameter IN clause each time cost more than running it.
        select_sql = (
            "SELECT id, display_name, name_key, block_key,"
            " orcid IS NOT NULL OR openalex_id IS NOT NULL OR semantic_scholar_id IS NOT NULL"
            " FROM researchers WHERE block_key"
        )
        if conn.dialect.name == "postgresql":
            # One array parameter, never prepared: PostgreSQL hashes the keys only in a plan made
            # for their values; the generic plan of a prepared statement (psycopg prepares after
            # five runs), like a 500-parameter IN list, compares every row with every key, which
            # took 150 ms to 1.7 s per lookup at 5-10k papers instead of ~7 ms.
            driver = conn.connection.driver_connection
            assert driver is not None
            rows = driver.execute(f"{select_sql} = ANY(%s)", (blocks,), prepare=False).fetchall()
        else:
            marks = ", ".join("?" * len(blocks))
            rows = conn.exec_driver_sql(f"{select_sql} IN ({marks})", tuple(blocks)).all()
        # Researchers already in memory (loaded before, or created by this run) are not loaded twice.
        held = {p.id for block in blocks for filed in self._by_block[block].values() for p in filed}
        parse = self.parse
        profiles: dict[int, Profile] = {}
        partly = set()  # blocks of which some researchers stay in the catalogue only
        for rid, name, key, block, identified in rows:
            parsed = parse(name) or ParsedName(block, ())
            keys = wanted.get(block)
            if rid in held:
                continue
            if keys is not None and keys.isdisjoint(_filed_under(parsed)):
                partly.add(block)  # no author of the batch can be this person
                continue
            profiles[rid] = profile = Profile(rid, name, key, parsed, identified=bool(identified))
        for block in blocks:
            if block not in partly:  # all of it in memory: never looked up again
                self._loaded[block] = None
        if not profiles:
            return
        # Each paper of these researchers is replayed as the evidence its import recorded.
        papers: dict[int, list[tuple[int, int]]] = defaultdict(list)  # paper -> (researcher, position)
        for ids in _chunked(list(profiles)):
            for rid, pid, position, name in conn.execute(
                select(
                    Authorship.researcher_id, Authorship.paper_id, Authorship.position, Authorship.name
                ).where(Authorship.researcher_id.in_(ids))
            ):
                if rid is None:
                    continue
                papers[pid].append((rid, position))
                if (spelled := parse(name)) is not None and spelled.full > profiles[rid].parsed.full:
                    profiles[rid].parsed = spelled
        authors: dict[int, list[str]] = defaultdict(list)
        categories: dict[int, list[str]] = defaultdict(list)
        printed: dict[tuple[int, int], set[str]] = defaultdict(set)
        rows = []
        for pids in _chunked(list(papers)):
            # Every author of the paper, in order: its co-author evidence, linear in authorships.
            for pid, name in conn.execute(
                select(Authorship.paper_id, Authorship.name)
                .where(Authorship.paper_id.in_(pids))
                .order_by(Authorship.paper_id, Authorship.position)
            ):
                authors[pid].append(name)
            for pid, category in conn.execute(
                select(PaperCategory.paper_id, PaperCategory.category)
                .where(PaperCategory.paper_id.in_(pids))
                .order_by(PaperCategory.paper_id, PaperCategory.position)
            ):
                categories[pid].append(category)
            for pid, position, raw in conn.execute(
                select(Affiliation.paper_id, Affiliation.author_position, Affiliation.raw).where(
                    Affiliation.paper_id.in_(pids)
                )
            ):
                printed[pid, position] |= affiliation_words(raw)
            rows += conn.execute(
                select(
                    Paper.id,
                    Paper.title,
                    Paper.abstract,
                    Paper.journal_ref,
                    func.coalesce(Paper.published_on, Paper.announced_on),
                ).where(Paper.id.in_(pids))
            ).all()
        for pid, title, abstract, journal, day in rows:
            paper = PaperEvidence.of(
                self.parse_all(authors[pid]),
                categories[pid],
                journal,
                day.year if day else None,
                topic_text(title, abstract),
            )
            for rid, position in papers[pid]:
                profile = profiles[rid]
                profile.add(profile.parsed, paper, _shared(frozenset(printed[pid, position])))
            if len(papers[pid]) > 1:
                self._keep_apart([profiles[rid] for rid, _position in papers[pid]])
        for profile in profiles.values():
            self._index(profile)

    # -- resolving -------------------------------------------------------------------------------

    def resolve_paper(
        self,
        names: Sequence[str],
        parsed: Sequence[ParsedName | None],
        paper: PaperEvidence,
        affiliations: dict[str, tuple[str, ...]] | None = None,
    ) -> list[Profile | None]:
        """The researcher of each author of one paper (None where the string names no person)."""
        chosen: list[Profile | None] = []
        taken: set[Profile] = set()  # one researcher is never two authors of the same paper
        for position, (name, person) in enumerate(zip(names, parsed, strict=True)):
            if person is None:
                chosen.append(None)
                continue
            printed = (
                _shared(frozenset(w for raw in affiliations.get(name, ()) for w in affiliation_words(raw)))
                if affiliations
                else _EMPTY
            )
            pool = _NONE
            if self.rule is Rule.OLD:
                profile = self._old_rule(name, person, paper, taken)
            else:
                pool, once = self._pool(person)
                candidates = self._candidates(pool, once, person, paper, printed, taken) if pool else []
                profile = self.decide(position, candidates) if candidates else None
                if profile is None and self.rare_names and pool:
                    profile = self._same_rare_name(pool, person, paper, printed, taken)
            if profile is None:
                self._born += 1
                profile = Profile.founded(display_name(name), person, paper, printed, self._born)
                self.new_profiles.append(profile)
                self._index(profile)
            else:
                if profile.add(person, paper, printed):
                    self._unindex(profile)  # its name now files it elsewhere
                    self._index(profile)
                # Only a researcher with namesakes has anyone to be consolidated with (one founded
                # later in the batch was compared with all of this one's evidence when it was founded).
                if len(pool) > 1:
                    self.grown[profile] = None
            taken.add(profile)
            chosen.append(profile)
        keys = [p.coauthor_key for p in parsed if p]
        if len(set(keys)) < len(keys):  # the same name twice: never one researcher, now or later
            self._keep_apart([p for p in chosen if p is not None])
        return chosen

    def _keep_apart(self, authors: Sequence[Profile]) -> None:
        """Record that these researchers of one paper are different people where their blocks agree."""
        by_block: dict[str, list[Profile]] = defaultdict(list)
        for profile in authors:
            by_block[profile.block].append(profile)
        for group in by_block.values():
            for a, b in itertools.combinations(group, 2):
                self._apart.setdefault(a, set()).add(b)
                self._apart.setdefault(b, set()).add(a)

    def _mergeable(self, a: Profile, b: Profile) -> bool:
        """Whether the resolver may merge two researchers: their names agree, enrichment did not
        identify both (it decides those), and they are not two authors of one paper."""
        return (
            same_surname(a.parsed, b.parsed)
            and names_compatible(a.parsed, b.parsed)
            and not (a.identified and b.identified)
            and b not in self._apart.get(a, ())
        )

    def _pool(self, person: ParsedName) -> tuple[list[Profile], bool]:
        """The profiles an author's candidates are drawn from, and whether none can appear twice."""
        filed = self._by_block.get(person.block)
        if not filed and not person.swapped_block and not person.variant:
            return _NONE, True
        pool: list[Profile] = []
        lookups = person.lookups
        once = bool(lookups) and not person.joined  # filed under one first name only
        if filed:
            if lookups:  # its own name, initials, no given name, run together
                for where in lookups:
                    held = filed.get(where)
                    if held:
                        pool += held
            else:  # an initial (or nothing) may be anyone of the block
                for held in filed.values():
                    pool += held
        if person.variant and (spelled := self._by_block.get(person.variant_block)):
            size = len(pool)  # "Schuetze" for "Schütze", and back: filed the same way
            for where in lookups or spelled:
                pool += spelled.get(where, ())
            once = once and len(pool) == size
        swapped = person.swapped_block
        if swapped and swapped != person.block:  # "Li Li" is its own swap
            other = self._by_block.get(swapped)
            held = other.get(person.surname) if other else None
            if held:
                pool += held
                once = False
        return pool, once

    def _candidates(
        self,
        pool: list[Profile],
        once: bool,
        person: ParsedName,
        paper: PaperEvidence,
        printed: frozenset[str],
        taken: set[Profile],
    ) -> list[Candidate]:
        # One pass (the hot loop of an import: ~1.2M candidates at 75k); a profile filed under the
        # very same parsed name (one object per distinct string) needs no name test.
        prune, weights, bias = self.prune, self.weights, self.bias
        people, own, topic = paper.people, person.coauthor_key, paper.topic
        more_than_topic = bool(paper.venue) or bool(printed)
        base, per_topic, per_known = self._bound
        # The topic bits a candidate without other evidence must share to reach ``join_at`` (the
        # bound's topic term, solved for the bit count: one integer comparison per candidate).
        if per_known:
            needed_bits = -math.inf  # the bound depends on each candidate's circle: score them all
        elif per_topic > 0 and paper.topic_bits:
            needed_bits = (self._join_z - base) / per_topic * paper.topic_bits
        else:
            needed_bits = math.inf if base < self._join_z else -math.inf
        candidates = []
        for p in pool if once else dict.fromkeys(pool):
            name = p.parsed
            if p in taken or (
                name is not person
                and not (
                    (same_surname(name, person) and names_compatible(person, name)) or person.is_swap_of(name)
                )
            ):
                continue
            # Skip a candidate that cannot reach ``join_at`` whatever its full features: no
            # co-author (besides the author's own key, which both sets may hold), venue or
            # affiliation in common, and too few topic bits (``_bound``). Most candidates of a
            # common name end here, for one set test and one bit count; exact: the decisions are
            # those of scoring everyone.
            if (
                prune
                and not (
                    (
                        not people.isdisjoint(known := p.coauthors)
                        and (own not in known or len(people.intersection(known)) > 1)
                    )
                    or (more_than_topic and ((paper.venue and p.venue) or (printed and p.affiliation)))
                )
                and (topic & p.topic).bit_count() < needed_bits
            ):
                continue
            f = features(p, person, paper, printed)
            candidates.append(Candidate(p, f, bias + sum(map(operator.mul, weights, f))))
        return candidates

    def _same_rare_name(
        self,
        pool: list[Profile],
        person: ParsedName,
        paper: PaperEvidence,
        printed: frozenset[str],
        taken: set[Profile],
    ) -> Profile | None:
        """The researcher already written so, when the name is rare among arXiv's authors (fewer
        than ``RARE_NAME_BELOW`` people expected to carry it by chance) and no broad field says
        otherwise. The evidence model needs a shared co-author, venue, affiliation or topic, which
        two papers of one person often lack; for a rare name the name itself is that evidence.
        "Written so" is a compatible name with the same surname: "Michael Yoder" is "Michael Miller
        Yoder", "G. Salton" is "Gerard Salton"; how rare is judged on the less specific of the two
        ("G. Salton": an initial and a rare surname)."""
        if expected_namesakes(person) >= RARE_NAME_BELOW:  # a spelling less specific is no rarer
            return None
        fields = {field_of(c) for c in paper.categories}
        best: Profile | None = None
        for profile in pool:
            name = profile.parsed
            if (
                profile in taken
                or not name.given
                or not same_surname(name, person)
                or not (name is person or names_compatible(person, name))
                or pair_namesakes(person, name) >= RARE_NAME_BELOW
            ):
                continue
            theirs = {field_of(c) for c in profile.categories}
            if fields and theirs and fields.isdisjoint(theirs):
                continue
            if printed and profile.affiliation and not affiliation_overlap(printed, profile.affiliation):
                continue
            if best is None or profile.papers > best.papers:
                best = profile
        return best

    def consolidate(self) -> None:
        """Merge each researcher that gained papers since the last call with any other of a
        compatible name whose evidence as a whole is as likely one person as a merge
        (``MERGE_AT``): two papers that each linked to neither may, together, link to both."""
        grown, self.grown = self.grown, {}
        if self.rule is not Rule.EVIDENCE:
            return
        weights, bias, at = self.weights, self.bias, self._merge_z
        # As in ``_candidates``: a pair without co-authors, venue or affiliation in common must share
        # this much of the smaller topic to reach ``at`` (``_bound``; exact).
        base, per_topic, per_known = self._bound
        needed = (at - base) / per_topic if per_topic else math.inf
        for profile in grown:
            profile = profile.current
            pool, _once = self._pool(profile.parsed)
            for other in dict.fromkeys(pool):
                if other is profile or other.merged_into is not None or not self._mergeable(profile, other):
                    continue
                small = profile if profile.papers <= other.papers else other  # as ``pair_features``
                if (
                    not per_known
                    and profile.venue.isdisjoint(other.venue)
                    and not affiliation_overlap(profile.affiliation, other.affiliation)
                    and (profile.topic & other.topic).bit_count() < needed * small.topic.bit_count()
                    and _common(profile.coauthors, other.coauthors) <= {small.parsed.coauthor_key}
                ):
                    continue
                f = pair_features(profile, other)
                if bias + sum(map(operator.mul, weights, f)) >= at:
                    profile = self._merge(profile, other)

    def _index(self, profile: Profile) -> None:
        profile.indexed = parsed = profile.parsed
        filed = self._by_block.setdefault(parsed.block, {})
        for name in _filed_under(parsed):
            filed.setdefault(name, []).append(profile)

    def _unindex(self, profile: Profile) -> None:
        indexed, profile.indexed = profile.indexed, None
        filed = self._by_block.get(indexed.block) if indexed else None
        if not indexed or not filed:
            return
        for name in _filed_under(indexed):
            held = filed.get(name)
            if held and profile in held:
                held.remove(profile)

    def _best(self, _position: int, candidates: Sequence[Candidate], merge: bool = True) -> Profile | None:
        """The most likely candidate if likely enough. Every other candidate that is as likely and
        whose name agrees with the winner's is the same person seen twice before without a link
        between the two: it is merged into the older of them (ids of merged researchers 301)."""
        if len(candidates) == 1:  # the common case: no ranking, nothing to merge
            only = candidates[0]
            return only.profile if only.score >= self._join_z else None
        scored = [(c.score, c.profile.papers, i) for i, c in enumerate(candidates)]
        top = max(scored)
        if top[0] < self._join_z:
            return None
        best = candidates[top[2]].profile
        if not merge:
            return best
        for _p, _papers, i in sorted(
            (s for s in scored if s[0] >= self._merge_z and s is not top), reverse=True
        ):
            other = candidates[i].profile
            if self._mergeable(other, best):
                best = self._merge(best, other)
        return best

    def _merge(self, a: Profile, b: Profile) -> Profile:
        keep, gone = (a, b) if _age(a) <= _age(b) else (b, a)
        keep.absorb(gone)
        for other in self._apart.pop(gone, ()):  # who could not be ``gone`` cannot be ``keep``
            self._apart[other].discard(gone)
            self._apart[other].add(keep)
            self._apart.setdefault(keep, set()).add(other)
        self._unindex(gone)
        if keep.indexed is None or _place(keep.indexed) != _place(keep.parsed):
            self._unindex(keep)
            self._index(keep)
        self.merges.append((keep, gone))
        return keep

    def _old_rule(
        self, name: str, person: ParsedName, paper: PaperEvidence, taken: set[Profile]
    ) -> Profile | None:
        key = person_key(name)
        fields = {field_of(c) for c in paper.categories}
        best: tuple[int, int, int] | None = None
        winner = None
        filed = self._by_block.get(person.block, {})
        for profile in dict.fromkeys(p for held in filed.values() for p in held):
            if profile.key != key or profile in taken:
                continue
            own = person.coauthor_key
            common = paper.people.intersection(profile.coauthors)
            shared = len(common) - (own in common)
            theirs = {field_of(c) for c in profile.categories}
            fields_agree = not fields or not theirs or not fields.isdisjoint(theirs)
            if shared <= 0 and not fields_agree:
                continue
            score = (shared, int(fields_agree), profile.papers)
            if best is None or score > best:
                best, winner = score, profile
        return winner

    def forget_if_large(self) -> None:
        """Drop the cache between batches once it grows past its bound (profiles reload from the DB)."""
        if len(self._by_block) > self._max:
            self._by_block.clear()
            self._loaded.clear()
            self._apart.clear()  # rebuilt from the catalogue's papers as researchers reload


_NONE: list[Profile] = []  # no candidates (never appended to)


def _wanted(person: ParsedName, whole: bool = False) -> list[tuple[str, set[str] | None]]:
    """The blocks an author's candidates live in and the keys they are filed under there (None:
    anyone of the block), as ``ResearcherResolver._pool`` looks them up."""
    keys = None if whole or not person.lookups else set(person.lookups)
    found: list[tuple[str, set[str] | None]] = [(person.block, keys)]
    if person.variant:
        found.append((person.variant_block, None if keys is None else set(keys)))
    if person.swapped_block and person.swapped_block != person.block:
        found.append((person.swapped_block, None if whole else {person.surname}))
    return found


def _chunked(ids: list[int], size: int = 5000) -> Iterable[list[int]]:
    return (ids[start : start + size] for start in range(0, len(ids), size))


def _filed_under(name: ParsedName) -> tuple[str, ...]:
    """Where a researcher of this name is filed in its block (see ``ResearcherResolver._by_block``)."""
    first = name.given[0] if name.given else ""
    return (first, name.joined) if name.joined else (first,)


def _place(name: ParsedName) -> tuple[str, tuple[str, ...]]:
    return name.block, _filed_under(name)


def _age(profile: Profile) -> tuple[int, int]:
    """Older first: researchers in the catalogue by id, then those of this run by creation."""
    if profile.identified:  # a researcher enrichment identified keeps its id
        return (-1, profile.id or 0)
    return (0, profile.id) if profile.id is not None else (1, profile.born)
