"""How common a person's name is among arXiv's authors: the rare-name prior of the resolver.

Two people rarely share a rare name: "Zhouhan Lin" on two cs.CL papers is one person even when the
papers share no co-author, while "Yang Liu" is dozens. The estimate is how many people one would
expect to carry both the first given name and the surname if the two were independent:
``names × p(given) × p(surname)``, counted over the distinct names (first given name and surname)
of the 74,728 arXiv listings of ``../shared/data/arxiv/listings-75k.jsonl.gz`` (arXiv metadata,
CC0). Distinct names, not mentions: a prolific "Maosong Sun" is one person, and must not make
"Maosong" look common. For a name written with an initial ("G. Salton"), p(given) is the share of
first names with that first letter. Stored beside this module in ``name_counts.json.gz`` (names
seen at least twice; rarer ones count as 1). Rebuild with
``python -m people.name_counts LISTINGS.jsonl.gz``.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Collection, Hashable, Sequence
from functools import cache
from pathlib import Path

from people.names import ParsedName, parse_name

COUNTS = Path(__file__).with_name("name_counts.json.gz")
_KEPT_FROM = 2  # rarer names are left out of the file (and count as 1)


@cache
def _counts() -> tuple[int, dict[str, int], dict[str, int], dict[str, int]]:
    with gzip.open(COUNTS, "rt", encoding="utf-8") as f:
        data = json.load(f)
    return data["people"], data["given"], data["surname"], data["initials"]


def expected_namesakes(person: ParsedName) -> float:
    """People expected to carry this first given name (as written, "Ting-Hao" is one name; or its
    initial) and surname by chance; infinity for a name without a given name."""
    if not person.given:
        return float("inf")
    people, given, surname, initials = _counts()
    first = person.first
    share = given.get(first, 1) if len(first) > 1 else initials.get(first[0], 1)
    return share * surname.get(person.surname, 1) / people


def pair_namesakes(a: ParsedName, b: ParsedName) -> float:
    """How rare two compatible spellings of one name are together: the people expected to carry
    the less specific of them ("G. Salton" for "G. Salton" and "Gerard Salton")."""
    return expected_namesakes(a if len(a.first) <= len(b.first) else b)


def build(listings: Path, out: Path = COUNTS) -> None:
    names = _people_by_name(listings)
    given, surname, initials = Counter[str](), Counter[str](), Counter[str]()
    for (first, last), people in names.items():
        given[first] += people
        surname[last] += people
        initials[first[0]] += people
    data = {
        "source": listings.name,
        "people": sum(names.values()),
        "given": {k: v for k, v in sorted(given.items()) if v >= _KEPT_FROM},
        "surname": {k: v for k, v in sorted(surname.items()) if v >= _KEPT_FROM},
        "initials": dict(sorted(initials.items())),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(out, "wb", mtime=0) as f:  # mtime 0: the same input gives the same bytes
        f.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def _people_by_name(listings: Path) -> dict[tuple[str, str], int]:
    """(first given name as written, surname) → how many people carry it, at most: its mentions
    joined when their papers share a co-author (a prolific author is one, however many papers)."""
    mentions: dict[tuple[str, str], list[frozenset[str]]] = defaultdict(list)
    with gzip.open(listings, "rt", encoding="utf-8") as f:
        for line in f:
            parsed = [p for p in map(parse_name, json.loads(line).get("authors", [])) if p is not None]
            keys = frozenset(p.coauthor_key for p in parsed)
            for person in parsed:
                if len(person.first) > 1:
                    mentions[person.first, person.surname].append(keys - {person.coauthor_key})
    return {name: len(set(coauthor_groups(papers))) for name, papers in mentions.items()}


def coauthor_groups(papers: Sequence[Collection[Hashable]]) -> list[int]:
    """Each paper's group among ``papers`` (each given by its co-authors): papers are joined when
    they share a co-author, directly or through others. The people one name may be, at most."""
    from scipy.cluster.hierarchy import DisjointSet  # only builds and evals need it: not at start-up

    groups = DisjointSet(range(len(papers)))
    first_with: dict[Hashable, int] = {}
    for i, coauthors in enumerate(papers):
        for coauthor in coauthors:
            groups.merge(i, first_with.setdefault(coauthor, i))
    return [groups[i] for i in range(len(papers))]


if __name__ == "__main__":
    build(Path(sys.argv[1]))
