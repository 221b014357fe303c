"""The resolver's decisions written to the catalogue: researchers merged (authorships, follows and
claims moved, a ``merged`` change recorded so the old page redirects) and researchers shown under
their preferred spelling."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update

from catalog.enrichment import ResearcherChange, move_researcher_references
from catalog.models import Authorship, Researcher
from catalog.names import display_name
from people.evidence import Profile
from people.names import preferred_spelling


def merge_in_catalogue(conn: Connection, merges: Sequence[tuple[int, int]]) -> None:
    """Fold each researcher ``gone`` into ``keep`` (``(keep, gone)`` pairs, each ``keep`` a survivor):
    authorships, follows and a person's claim move, and a ``merged`` change is recorded so
    ``/researchers/<gone>`` redirects (as enrichment's merges do). A few statements for a whole batch."""
    if not merges:
        return
    move_researcher_references(conn, [(gone, keep) for keep, gone in merges])  # authorships, follows …
    pairs = [{"keep": keep, "gone": gone} for keep, gone in merges]
    conn.execute(
        update(ResearcherChange)
        .where(ResearcherChange.kind == "merged", ResearcherChange.other_id == bindparam("gone"))
        .values(other_id=bindparam("keep")),
        pairs,
    )
    now = dt.datetime.now(dt.UTC)
    conn.execute(
        insert(ResearcherChange),
        [
            {
                "kind": "merged",
                "researcher_id": gone,
                "other_id": keep,
                "source": "resolver",
                "detail": "one author linked both researchers (shared co-authors, venue, topic, affiliation)",
                "created_at": now,
            }
            for keep, gone in merges
        ],
    )
    conn.execute(delete(Researcher).where(Researcher.id == bindparam("gone")), pairs)


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
