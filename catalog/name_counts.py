"""How common a person's name is among arXiv's authors: the rare-name prior of the resolver.

Two people rarely share a rare name: "Zhouhan Lin" on two cs.CL papers is one person even when the
papers share no co-author, while "Yang Liu" is dozens. The estimate is the number of author mentions
one would expect to carry both the first given name and the surname if the two were independent:
``mentions × p(given) × p(surname)``, from the counts of first given names and surnames (each written
out) over the 74,728 arXiv listings of ``../shared/data/arxiv/listings-75k.jsonl.gz`` (arXiv
metadata, CC0), stored beside this module in ``name_counts.json.gz`` (names seen at least 3 times; rarer ones
count as 1). Rebuild with ``python -m catalog.name_counts LISTINGS.jsonl.gz``.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from functools import cache
from pathlib import Path

from catalog.names import ParsedName, parse_name

COUNTS = Path(__file__).with_name("name_counts.json.gz")
_KEPT_FROM = 3  # rarer names are left out of the file (and count as 1)


@cache
def _counts() -> tuple[int, dict[str, int], dict[str, int]]:
    with gzip.open(COUNTS, "rt", encoding="utf-8") as f:
        data = json.load(f)
    return data["mentions"], data["given"], data["surname"]


def expected_namesakes(person: ParsedName) -> float:
    """Author mentions expected to carry this first given name and surname by chance (None-safe:
    an initial or a missing given name is common by definition: infinity)."""
    if not person.given or len(person.given[0]) < 2:
        return float("inf")
    mentions, given, surname = _counts()
    return given.get(person.given[0], 1) * surname.get(person.surname, 1) / mentions


def build(listings: Path, out: Path = COUNTS) -> None:
    given, surname, mentions = Counter[str](), Counter[str](), 0
    with gzip.open(listings, "rt", encoding="utf-8") as f:
        for line in f:
            for author in json.loads(line).get("authors", []):
                person = parse_name(author)
                if person is None or not person.given or len(person.given[0]) < 2:
                    continue
                given[person.given[0]] += 1
                surname[person.surname] += 1
                mentions += 1
    data = {
        "source": listings.name,
        "mentions": mentions,
        "given": {k: v for k, v in sorted(given.items()) if v >= _KEPT_FROM},
        "surname": {k: v for k, v in sorted(surname.items()) if v >= _KEPT_FROM},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(out, "wb", mtime=0) as f:  # mtime 0: the same input gives the same bytes
        f.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


if __name__ == "__main__":
    build(Path(sys.argv[1]))
