"""Resolve author strings to researchers.

The rule (README, "Researchers from author strings"):

1. Names are compared by their folded key (``catalog.names.person_key``): accents, case and
   punctuation do not matter; "Jörg Müller" and "Jorg Muller" are one key; initials are NOT expanded,
   so "D. P. Kingma" and "Diederik P. Kingma" stay different keys.
2. A paper's author joins an existing researcher with the same key when they share a co-author
   (strongest evidence; the candidate with most shared co-authors wins) or, failing that, a field
   (the top-level arXiv group of any category: cs, math, physics, stat …), or when either side's
   fields are unknown. Otherwise a new researcher with the same name is created: two people are
   kept apart only when co-authors AND fields both say so.
3. Strings that name no person ("ATLAS Collaboration", "et al.") link to no researcher.

A researcher's display name is the most complete of the spellings on their papers
(``catalog.names.preferred_spelling``), refreshed whenever a paper brings a new spelling.

Limits: the grouping depends on import order (the first paper seen founds the researcher); two people
with a common name in the same field who never share a co-author are merged; one person who changes
field with new co-authors is split. Enrichment (ORCID / OpenAlex ids) overrules this rule.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection, bindparam, func, select, update
from sqlalchemy.orm import aliased

from catalog.models import Authorship, PaperCategory, Researcher
from catalog.names import display_name, preferred_spelling

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


@dataclass(slots=True, eq=False)
class Profile:
    """What the resolver knows about one researcher; ``id`` is None until the row is inserted."""

    id: int | None
    name: str
    key: str
    fields: set[str] = field(default_factory=set)
    coauthors: set[str] = field(default_factory=set)
    papers: int = 0


class ResearcherResolver:
    """Keeps profiles of the researchers seen in this run, loading the others from the catalogue."""

    def __init__(self, max_cached_keys: int = 200_000) -> None:
        self._by_key: dict[str, list[Profile]] = {}
        self._max = max_cached_keys
        self.new_profiles: list[Profile] = []

    def prefetch(self, conn: Connection, keys: Iterable[str]) -> None:
        """Load the profiles of every key not cached yet (one pass per batch of papers)."""
        missing = sorted({k for k in keys if k not in self._by_key})
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            for key in chunk:
                self._by_key[key] = []
            self._load(conn, chunk)

    def _load(self, conn: Connection, keys: list[str]) -> None:
        # Straight to the driver: in a large import most keys are new, so this lookup usually finds
        # nothing, and compiling a 500-parameter IN clause each time cost more than running it.
        select_sql = "SELECT id, display_name, name_key FROM researchers WHERE name_key"
        if conn.dialect.name == "postgresql":
            # One array parameter, never prepared: PostgreSQL hashes the keys only in a plan made
            # for their values; the generic plan of a prepared statement (psycopg prepares after
            # five runs), like a 500-parameter IN list, compares every row with every key, which
            # took 150 ms to 1.7 s per lookup at 5-10k papers instead of ~7 ms.
            driver = conn.connection.driver_connection
            assert driver is not None
            rows = driver.execute(f"{select_sql} = ANY(%s)", (keys,), prepare=False).fetchall()
        else:
            marks = ", ".join("?" * len(keys))
            rows = conn.exec_driver_sql(f"{select_sql} IN ({marks})", tuple(keys)).all()
        if not rows:
            return
        profiles: dict[int | None, Profile] = {rid: Profile(rid, name, key) for rid, name, key in rows}
        for profile in profiles.values():
            self._by_key[profile.key].append(profile)
        ids = list(profiles)
        for rid, category in conn.execute(
            select(Authorship.researcher_id, PaperCategory.category)
            .join(PaperCategory, PaperCategory.paper_id == Authorship.paper_id)
            .where(Authorship.researcher_id.in_(ids))
            .distinct()
        ):
            profiles[rid].fields.add(field_of(category))
        for rid, count in conn.execute(
            select(Authorship.researcher_id, func.count())
            .where(Authorship.researcher_id.in_(ids))
            .group_by(Authorship.researcher_id)
        ):
            profiles[rid].papers = count
        other = aliased(Authorship)
        for rid, key in conn.execute(
            select(Authorship.researcher_id, Researcher.name_key)
            .join(other, (other.paper_id == Authorship.paper_id) & (other.position != Authorship.position))
            .join(Researcher, Researcher.id == other.researcher_id)
            .where(Authorship.researcher_id.in_(ids))
        ):
            profiles[rid].coauthors.add(key)

    def resolve_paper(
        self, names: Sequence[str], keys: Sequence[str | None], categories: Iterable[str]
    ) -> list[Profile | None]:
        """The researcher of each author of one paper (None where the string names no person).

        An author's co-authors are the paper's other keys (``people - {key}``); that set is never
        built per author (it is the hot loop of an import): counts and updates use ``people`` and
        correct for the author's own key."""
        fields = {field_of(c) for c in categories}
        people = {k for k in keys if k}
        record_coauthors = len(people) <= MAX_COAUTHOR_EVIDENCE
        by_key = self._by_key
        chosen: list[Profile | None] = []
        for name, key in zip(names, keys, strict=True):
            if key is None:
                chosen.append(None)
                continue
            candidates = by_key.get(key)
            profile = self._match(candidates, people, key, fields) if candidates else None
            if profile is None:
                profile = Profile(None, display_name(name), key)
                by_key.setdefault(key, []).append(profile)
                self.new_profiles.append(profile)
            profile.fields |= fields
            if record_coauthors:
                known = profile.coauthors
                had_own_key = key in known  # only possible through another person of the same name
                known |= people
                if not had_own_key:
                    known.discard(key)
            profile.papers += 1
            chosen.append(profile)
        return chosen

    @staticmethod
    def _match(candidates: list[Profile], people: set[str], key: str, fields: set[str]) -> Profile | None:
        best: tuple[int, int, int] | None = None
        winner = None
        for profile in candidates:
            known = profile.coauthors
            shared = len(people & known) - (key in known) if known else 0
            fields_agree = not fields or not profile.fields or not fields.isdisjoint(profile.fields)
            if not shared and not fields_agree:
                continue
            score = (shared, int(fields_agree), profile.papers)
            if best is None or score > best:
                best, winner = score, profile
        return winner

    def forget_if_large(self) -> None:
        """Drop the cache between batches once it grows past its bound (profiles reload from the DB)."""
        if len(self._by_key) > self._max:
            self._by_key.clear()


def preferred_names(conn: Connection, researcher_ids: Collection[int]) -> dict[int, str]:
    """Each researcher's preferred spelling over all their authorships (see ``preferred_spelling``)."""
    spellings: dict[int, Counter[str]] = defaultdict(Counter)
    ids = sorted(researcher_ids)
    for start in range(0, len(ids), 500):
        for rid, name, count in conn.execute(
            select(Authorship.researcher_id, Authorship.name, func.count())
            .where(Authorship.researcher_id.in_(ids[start : start + 500]))
            .group_by(Authorship.researcher_id, Authorship.name)
        ):
            if rid is not None:
                spellings[rid][display_name(name)] += count
    return {rid: preferred_spelling(counts) for rid, counts in spellings.items()}


def respell(conn: Connection, profiles: Iterable[Profile]) -> None:
    """Give these researchers their preferred spelling, in the catalogue and in the resolver's cache."""
    by_id = {p.id: p for p in profiles if p.id is not None}
    if not by_id:
        return
    names = preferred_names(conn, by_id)
    changed = [{"rid": rid, "name": name} for rid, name in names.items() if by_id[rid].name != name]
    if changed:
        conn.execute(
            update(Researcher)
            .where(Researcher.id == bindparam("rid"))
            .values(display_name=bindparam("name")),
            changed,
            execution_options={"synchronize_session": False},
        )
    for rid, name in names.items():
        by_id[rid].name = name
