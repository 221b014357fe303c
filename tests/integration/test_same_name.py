"""Who a researcher page lists under "same name", and a person's name variants, over catalogue rows
written directly (whatever resolver produced them), on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
from itertools import count

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from catalog.db import recorded_statements
from catalog.models import Authorship, Paper, PaperCategory, Researcher
from catalog.names import person_key
from catalog.researchers import SAME_NAME_LIMIT, researcher_profile, told_apart

_ids = count(1)


def _person(session: Session, name: str) -> Researcher:
    key = person_key(name)
    assert key
    person = Researcher(display_name=name, name_key=key)
    session.add(person)
    session.flush()
    return person


def _paper(session: Session, day: dt.date, category: str, *authors: tuple[str, Researcher]) -> None:
    n = next(_ids)
    paper = Paper(
        arxiv_id=f"2401.{n:05d}",
        title=f"Paper {n}",
        abs_url="https://arxiv.org/abs/x",
        pdf_url="https://arxiv.org/pdf/x",
        source="test",
        content_hash="x",
        announced_on=day,
        activity_on=day,
    )
    session.add(paper)
    session.flush()
    session.add(PaperCategory(paper_id=paper.id, position=0, category=category))
    for position, (name, person) in enumerate(authors):
        role = "first" if position == 0 else "last"
        session.add(
            Authorship(paper_id=paper.id, position=position, name=name, role=role, researcher_id=person.id)
        )


def test_spellings_widen_the_namesakes_and_are_listed_as_variants(engine: Engine) -> None:
    with Session(engine) as session, session.begin():
        yang = _person(session, "Yang Liu")  # printed "Y. Liu" once: a resolver joined the initial
        other_yang = _person(session, "Yang Liu")
        initial = _person(session, "Y. Liu")  # kept apart: another person, or the same one unproven
        yan = _person(session, "Yan Liu")  # a different name
        _person(session, "Y. Liu")  # no papers left (its papers moved): not worth listing
        peer, chemist = _person(session, "Ana Peer"), _person(session, "Carl Chem")
        _paper(session, dt.date(2018, 3, 1), "cs.CV", ("Yang Liu", yang), ("Ana Peer", peer))
        _paper(session, dt.date(2021, 5, 1), "cs.CV", ("Yang  Liu", yang), ("Ana Peer", peer))
        _paper(session, dt.date(2022, 5, 1), "cs.CL", ("Y. Liu", yang), ("Ana Peer", peer))
        _paper(
            session, dt.date(2020, 1, 1), "physics.chem-ph", ("Yang Liu", other_yang), ("Carl Chem", chemist)
        )
        _paper(session, dt.date(2023, 1, 1), "math.AG", ("Y. Liu", initial))
        _paper(session, dt.date(2023, 1, 1), "math.AG", ("Yan Liu", yan))
        ids = yang.id, other_yang.id, initial.id
    with Session(engine) as session:
        profile = researcher_profile(session, ids[0])
        assert profile is not None and profile.same_name is not None
        assert profile.name_variants == ["Y. Liu"], (
            "whitespace is not a variant; the shown name is not listed"
        )
        this, others = profile.same_name.this, profile.same_name.others
        assert (this.papers, this.years, this.categories) == (3, "2018–2022", ["cs.CV", "cs.CL"])
        assert [c.name for c in this.coauthors] == ["Ana Peer"] and this.coauthors[0].shared == 3
        assert {o.id for o in others} == {ids[1], ids[2]}, "same key, or the key of one of the spellings"
        chem = next(o for o in others if o.id == ids[1])
        assert (chem.years, chem.categories, [c.name for c in chem.coauthors]) == (
            "2020",
            ["physics.chem-ph"],
            ["Carl Chem"],
        )
        # The other Yang Liu was never printed "Y. Liu": only the same key counts for them.
        theirs = researcher_profile(session, ids[1])
        assert theirs is not None and theirs.same_name is not None
        assert [o.id for o in theirs.same_name.others] == [ids[0]] and theirs.name_variants == []


def test_many_namesakes_cost_the_same_few_statements_and_are_capped(engine: Engine) -> None:
    def add_namesakes(n: int) -> int:
        with Session(engine) as session, session.begin():
            for i in range(n):
                person, peer = _person(session, "Wei Wang"), _person(session, f"Peer {i}")
                for year in range(2010, 2010 + 1 + i % 3):  # 1–3 papers each
                    _paper(session, dt.date(year, 1, 1), "cs.LG", ("Wei Wang", person), (f"Peer {i}", peer))
            return person.id

    def statements(researcher_id: int) -> int:
        with Session(engine) as session, recorded_statements(engine) as seen:
            assert researcher_profile(session, researcher_id) is not None
        return len(seen)

    few = statements(add_namesakes(3))
    last = add_namesakes(SAME_NAME_LIMIT + 10)
    assert statements(last) == few, "no statement per namesake"
    with Session(engine) as session:
        profile = researcher_profile(session, last)
    assert profile is not None and profile.same_name is not None
    others = profile.same_name.others
    assert (
        len(others) == SAME_NAME_LIMIT and profile.same_name.more == 3 + 10 - 1
    )  # 63 people, less itself, less 50
    assert [o.papers for o in others] == sorted((o.papers for o in others), reverse=True), "most papers first"
    assert all(o.coauthors and o.coauthors[0].name.startswith("Peer ") for o in others)


def test_a_list_of_coauthors_is_told_apart_in_the_same_few_statements(engine: Engine) -> None:
    with Session(engine) as session, session.begin():
        centre = _person(session, "Mira Centre")
        peers = [_person(session, f"Peer Told {i}") for i in range(12)]
        for i, peer in enumerate(peers):
            day, field = dt.date(2015 + i % 4, 1, 1), ["cs.LG", "math.AG"][i % 2]
            _paper(session, day, field, ("Mira Centre", centre), (peer.display_name, peer))
        ids = [p.id for p in peers]

    def statements(chosen: list[int]) -> int:
        with Session(engine) as session, recorded_statements(engine) as seen:
            told = told_apart(session, chosen)
            assert set(told) == set(chosen)
        return len(seen)

    assert statements(ids) == statements(ids[:2]), "no statement per co-author"
    with Session(engine) as session:
        told = told_apart(session, ids)
    assert (told[ids[3]].years, told[ids[3]].categories, told[ids[3]].papers) == ("2018", ["math.AG"], 1)
    assert [c.name for c in told[ids[0]].coauthors] == ["Mira Centre"]
    assert told_apart(Session(engine), []) == {}
