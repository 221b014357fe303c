"""The importers against real catalogues: the same tests run on SQLite and on PostgreSQL."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections.abc import Sequence
from itertools import islice
from pathlib import Path

from alembic import command
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session

from accounts.models import Follow, Person
from catalog.db import alembic_config, make_engine, migrate
from catalog.enrichment import ResearcherChange, surviving_researcher_id
from catalog.models import Affiliation, Authorship, Paper, PaperCategory, PaperVersion, Researcher
from ingest.importer import Importer
from ingest.records import RecordError
from ingest.sources import kaggle, listings
from people.names import parse_name


def _count(engine: Engine, model: type) -> int:
    with Session(engine) as s:
        return s.execute(select(func.count()).select_from(model)).scalar_one()


def _first_authors(engine: Engine) -> dict[str, int | None]:
    """Each paper's first author's researcher."""
    with Session(engine) as s:
        rows = s.execute(
            select(Paper.arxiv_id, Authorship.researcher_id).join(Authorship).where(Authorship.position == 0)
        )
        return {pid: rid for pid, rid in rows}  # noqa: C416 (rows are Row objects, not pairs, to mypy)


def _write_jsonl(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_kaggle_snapshot_imports_once(engine: Engine, shared_data: Path) -> None:
    path = shared_data / "arxiv" / "kaggle-snapshot-249.jsonl"
    first = Importer(engine, source="kaggle").run(kaggle.read(path))
    assert (first.added, first.failed) == (249, 0)
    counts = [_count(engine, m) for m in (Paper, Authorship, Researcher, PaperVersion, PaperCategory)]

    second = Importer(engine, source="kaggle").run(kaggle.read(path))
    assert (second.added, second.updated, second.unchanged) == (0, 0, 249)
    assert [_count(engine, m) for m in (Paper, Authorship, Researcher, PaperVersion, PaperCategory)] == counts

    with Session(engine) as s:
        paper = s.execute(select(Paper).where(Paper.arxiv_id == "0704.0001")).scalar_one()
        assert paper.doi == "10.1103/PhysRevD.76.013009"
        assert paper.journal_ref == "Phys.Rev.D76:013009,2007"
        assert paper.latest_version == 2
        assert [v.version for v in paper.versions] == [1, 2]
        assert paper.versions[0].submitted_at is not None
        assert paper.published_on == dt.date(2007, 4, 2)
        assert paper.updated_on == dt.date(2007, 7, 24)
        assert [a.name for a in paper.authorships] == [
            "C. Balázs",
            "E. L. Berger",
            "P. M. Nadolsky",
            "C. -P. Yuan",
        ]
        assert [a.role for a in paper.authorships] == ["first", "middle", "middle", "last"]
        assert paper.pdf_url == "https://arxiv.org/pdf/0704.0001"


def test_listings_fields_and_date(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "arxiv" / "listings-20k.jsonl.gz"
    with gzip.open(source, "rt") as handle:
        rows = [json.loads(line) for line in islice(handle, 300)]
    path = _write_jsonl(tmp_path / "sample.jsonl", rows)
    summary = Importer(engine, source="listings", batch_size=64).run(listings.read(path))
    assert (summary.added, summary.failed) == (300, 0)
    first = rows[0]
    with Session(engine) as s:
        paper = s.execute(select(Paper).where(Paper.arxiv_id == first["id"])).scalar_one()
        assert paper.title == " ".join(first["title"].split())
        assert paper.announced_on == dt.date.fromisoformat(first["_listing_file"])
        assert paper.activity_on == paper.announced_on
        # MSC / ACM codes in the categories list are not arXiv categories.
        assert [c.category for c in paper.categories] == [
            c for c in first["categories"] if " " not in c and not c[0].isupper() and not c[0].isdigit()
        ]
        assert paper.primary_category == first["categories"][0]


def test_newer_version_updates_and_older_does_not(engine: Engine, tmp_path: Path) -> None:
    base = {
        "id": "2401.01234",
        "title": "A title",
        "abstract": "Old abstract.",
        "categories": "cs.LG",
        "authors_parsed": [["Doe", "Jane", ""], ["Roe", "Richard", ""]],
        "versions": [{"version": "v1", "created": "Mon, 1 Jan 2024 10:00:00 GMT"}],
    }
    newer = {
        **base,
        "abstract": "New abstract.",
        "versions": [*base["versions"], {"version": "v2", "created": "Mon, 5 Feb 2024 10:00:00 GMT"}],
    }
    Importer(engine, source="kaggle").run(kaggle.read(_write_jsonl(tmp_path / "a.jsonl", [base])))
    with Session(engine) as s:
        pid, researchers = (
            s.execute(select(Paper.id)).scalar_one(),
            s.execute(select(Authorship.researcher_id).order_by(Authorship.position)).scalars().all(),
        )

    summary = Importer(engine, source="kaggle").run(kaggle.read(_write_jsonl(tmp_path / "b.jsonl", [newer])))
    assert (summary.updated, summary.added) == (1, 0)
    summary = Importer(engine, source="kaggle").run(kaggle.read(_write_jsonl(tmp_path / "c.jsonl", [base])))
    assert (summary.unchanged, summary.updated) == (1, 0)  # an older snapshot never wins

    with Session(engine) as s:
        paper = s.execute(select(Paper)).scalar_one()
        assert (paper.id, paper.abstract, paper.latest_version) == (pid, "New abstract.", 2)
        assert paper.updated_on == dt.date(2024, 2, 5)
        assert [v.version for v in paper.versions] == [1, 2]
        # Same author list: the researcher links survive the update.
        assert [a.researcher_id for a in paper.authorships] == researchers
    assert _count(engine, Researcher) == 2


def test_changed_author_list_rebuilds_authorships(engine: Engine, tmp_path: Path) -> None:
    base = {
        "id": "2401.00001",
        "title": "T",
        "abstract": "A",
        "categories": "cs.LG",
        "authors_parsed": [["Doe", "Jane", ""]],
        "versions": [{"version": "v1", "created": None}],
    }
    changed = {
        **base,
        "authors_parsed": [["Doe", "Jane", ""], ["Poe", "Edgar", ""]],
        "versions": [{"version": "v1", "created": None}, {"version": "v2", "created": None}],
    }
    Importer(engine, source="kaggle").run(kaggle.read(_write_jsonl(tmp_path / "a.jsonl", [base])))
    Importer(engine, source="kaggle").run(kaggle.read(_write_jsonl(tmp_path / "b.jsonl", [changed])))
    with Session(engine) as s:
        names = s.execute(select(Authorship.name, Authorship.role).order_by(Authorship.position)).all()
    assert [tuple(n) for n in names] == [("Jane Doe", "first"), ("Edgar Poe", "last")]


def test_malformed_records_are_reported_and_skipped(engine: Engine, tmp_path: Path) -> None:
    good = {"id": "2401.00002", "title": "Good", "summary": "S", "authors": ["A B"], "categories": ["cs.AI"]}
    path = _write_jsonl(
        tmp_path / "mixed.jsonl",
        [
            good,
            "{not json",
            {**good, "id": "not-an-id"},
            {**good, "id": "2401.00003", "title": ""},
            {**good, "id": "2401.00004", "authors": "A B"},
            "[1, 2]",
            {**good, "id": "2401.00005"},
        ],
    )
    summary = Importer(engine, source="listings").run(listings.read(path))
    assert (summary.added, summary.failed) == (2, 5)
    assert [(e.source, e.line) for e in summary.errors] == [
        ("mixed.jsonl", 2),
        ("mixed.jsonl", 3),
        ("mixed.jsonl", 4),
        ("mixed.jsonl", 5),
        ("mixed.jsonl", 6),
    ]
    reasons = [e.reason for e in summary.errors]
    assert "invalid JSON" in reasons[0]
    assert "not an arXiv id" in reasons[1]
    assert "missing title" in reasons[2]
    assert "authors must be a list" in reasons[3]
    assert all(isinstance(e, RecordError) for e in summary.errors)


def test_nul_bytes_and_surrogates_never_reach_the_database(engine: Engine, tmp_path: Path) -> None:
    row = {
        "id": "2401.00006",
        "title": "Bad\x00 title\ud800",
        "summary": "abs\x00tract \udfff",
        "authors": ["Nul\x00 Person"],
        "categories": ["cs.AI"],
    }
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n")  # json escapes keep the lone surrogates in the file
    assert Importer(engine, source="listings").run(listings.read(path)).added == 1
    with Session(engine) as s:
        paper = s.execute(select(Paper)).scalar_one()
        assert (paper.title, paper.abstract) == ("Bad title", "abstract")
        assert paper.authorships[0].name == "Nul Person"


def test_same_name_researchers_kept_apart_without_evidence_and_joined_by_it(
    engine: Engine, tmp_path: Path
) -> None:
    # The old rule joined every same-name author in one broad field (cs); the evidence rule joins
    # on a shared co-author, or on a shared category with a similar title, and nothing less.
    def rec(pid: str, title: str, authors: list[str], cat: str) -> dict[str, object]:
        return {"id": pid, "title": title, "summary": "", "authors": authors, "categories": [cat]}

    rows = [
        rec("2401.00010", "Sparse attention for long documents", ["Wei Zhang", "Ann Lee"], "cs.LG"),
        rec("2401.00011", "Dust in galaxy clusters", ["Wei Zhang", "Bob Stone"], "astro-ph.GA"),
        rec("2401.00012", "Sparse attention for long videos", ["Wéi Zhang", "Carol King"], "cs.LG"),
        rec("2401.00013", "Elliptic estimates", ["Wei  Zhang", "Bob Stone"], "math.AP"),  # co-author
        rec("2401.00015", "Robot grasping from pixels", ["Wei Zhang", "Dan Moss"], "cs.RO"),  # no evidence
        rec("2401.00014", "Detector", ["ATLAS Collaboration"], "hep-ex"),
    ]
    Importer(engine, source="listings", batch_size=2).run(
        listings.read(_write_jsonl(tmp_path / "r.jsonl", rows))
    )
    by_paper = _first_authors(engine)
    with Session(engine) as s:
        zhangs = s.execute(select(Researcher.id).where(Researcher.name_key == "wei zhang")).scalars().all()
    assert len(zhangs) == 3
    assert by_paper["2401.00010"] == by_paper["2401.00012"]
    assert by_paper["2401.00011"] == by_paper["2401.00013"]
    assert len({by_paper["2401.00010"], by_paper["2401.00011"], by_paper["2401.00015"]}) == 3
    assert by_paper["2401.00014"] is None


def test_new_papers_never_change_the_ids_of_researchers_already_resolved(
    engine: Engine, tmp_path: Path
) -> None:
    def rec(pid: str, title: str, authors: list[str], cat: str) -> dict[str, object]:
        return {"id": pid, "title": title, "summary": "", "authors": authors, "categories": [cat]}

    first = [
        rec("2402.00001", "Graph kernels", ["Yang Liu", "Ann Lee", "Tom Hart"], "cs.LG"),
        rec("2402.00002", "Dust in galaxy clusters", ["Yang Liu", "Bo Chen"], "astro-ph.GA"),
    ]
    Importer(engine, source="listings").run(listings.read(_write_jsonl(tmp_path / "1.jsonl", first)))
    before = _first_authors(engine)
    assert before["2402.00001"] != before["2402.00002"]
    second = [
        # An initial and the same co-authors: the first one.
        rec("2402.00003", "Kernel methods", ["Y. Liu", "Ann Lee", "Tom Hart"], "stat.ML"),
        rec("2402.00004", "Robot grasping", ["Yang Liu", "Eve Park"], "cs.RO"),  # nothing shared: new
        rec("2402.00005", "Graph kernels", ["Yu Liu", "Ann Lee", "Tom Hart"], "cs.LG"),  # another name
    ]
    Importer(engine, source="listings").run(listings.read(_write_jsonl(tmp_path / "2.jsonl", second)))
    after = _first_authors(engine)
    assert {pid: after[pid] for pid in before} == before
    assert after["2402.00003"] == before["2402.00001"]
    assert after["2402.00004"] not in set(before.values())
    assert after["2402.00005"] not in {*before.values(), after["2402.00004"]}


def test_a_paper_linking_two_researchers_merges_them_and_the_old_id_redirects(
    engine: Engine, tmp_path: Path
) -> None:
    def rec(pid: str, title: str, authors: list[str], cat: str) -> dict[str, object]:
        return {"id": pid, "title": title, "summary": "", "authors": authors, "categories": [cat]}

    # Two "Yang Liu"s with nothing in common but a name, then a paper sharing co-authors with both.
    first = [
        rec("2403.00001", "Speech summarization", ["Yang Liu", "Ann Lee", "Tom Hart", "Kim Ode"], "cs.CL")
    ]
    second = [rec("2403.00002", "Protein folding", ["Yang Liu", "Bo Chen", "Eve Park", "Al Roy"], "q-bio.BM")]
    Importer(engine, source="listings").run(listings.read(_write_jsonl(tmp_path / "1.jsonl", first)))
    Importer(engine, source="listings").run(listings.read(_write_jsonl(tmp_path / "2.jsonl", second)))
    with Session(engine) as s:
        older, newer = sorted(
            s.execute(select(Researcher.id).where(Researcher.name_key == "yang liu")).scalars()
        )
        reader = Person(display_name="reader")
        s.add(reader)
        s.flush()
        s.add(Follow(person_id=reader.id, researcher_id=newer))
        s.commit()
        reader_id = reader.id
    both = ["Yang Liu", "Ann Lee", "Tom Hart", "Kim Ode", "Bo Chen", "Eve Park", "Al Roy"]
    Importer(engine, source="listings").run(
        listings.read(_write_jsonl(tmp_path / "3.jsonl", [rec("2403.00003", "Review", both, "cs.CL")]))
    )
    with Session(engine) as s:
        assert s.execute(select(Researcher.id).where(Researcher.name_key == "yang liu")).scalars().all() == [
            older
        ]
        assert set(s.execute(select(Authorship.researcher_id).where(Authorship.position == 0)).scalars()) == {
            older
        }
        assert surviving_researcher_id(s, newer) == older
        assert s.execute(
            select(Follow.researcher_id).where(Follow.person_id == reader_id)
        ).scalars().all() == [older]


def test_resolution_uses_researchers_already_in_the_catalogue(engine: Engine, tmp_path: Path) -> None:
    first = {
        "id": "2401.00020",
        "title": "x",
        "summary": "",
        "authors": ["Mia Wong", "Tom Hart"],
        "categories": ["physics.optics"],
    }
    second = {**first, "id": "2401.00021", "categories": ["cs.LG"]}  # other field, shared co-author
    Importer(engine, source="listings").run(listings.read(_write_jsonl(tmp_path / "1.jsonl", [first])))
    Importer(engine, source="listings").run(listings.read(_write_jsonl(tmp_path / "2.jsonl", [second])))
    assert _count(engine, Researcher) == 2


def test_a_later_run_loads_the_researchers_each_batch_may_be_and_no_one_twice(
    engine: Engine, tmp_path: Path
) -> None:
    # A later run loads a block's researchers under the first names its authors agree with ("Yi" →
    # the Yis of "wang y"), and the rest of the block when an initial arrives in a later batch.
    def rec(pid: str, authors: list[str]) -> dict[str, object]:
        return {"id": pid, "title": "t", "summary": "", "authors": authors, "categories": ["cs.LG"]}

    first = [
        rec("2404.00001", ["Yang Wang", "Ann Lee", "Tom Hart"]),
        rec("2404.00002", ["Yi Wang", "Cai Xu", "Dan Moss"]),
    ]
    Importer(engine, source="listings").run(listings.read(_write_jsonl(tmp_path / "1.jsonl", first)))
    second = [
        rec("2404.00003", ["Yi Wang", "Cai Xu"]),
        rec("2404.00004", ["Y. Wang", "Ann Lee", "Tom Hart"]),
        rec("2404.00005", ["Yang Wang", "Ann Lee"]),
    ]
    Importer(engine, source="listings", batch_size=1).run(
        listings.read(_write_jsonl(tmp_path / "2.jsonl", second))
    )
    by_paper = _first_authors(engine)
    with Session(engine) as s:
        keys = s.execute(select(Researcher.name_key).where(Researcher.block_key == "wang y")).scalars().all()
    assert sorted(keys) == ["yang wang", "yi wang"]
    assert _count(engine, ResearcherChange) == 0  # found at once, not founded anew and merged later
    assert by_paper["2404.00003"] == by_paper["2404.00002"]
    assert by_paper["2404.00004"] == by_paper["2404.00005"] == by_paper["2404.00001"]


def test_a_later_run_finds_a_researcher_under_the_other_spelling_of_an_umlaut(
    engine: Engine, tmp_path: Path
) -> None:
    # "Schütze" is filed under "schutze h"; a later run's "Schuetze" looks there too (and the other
    # way round), while "Suen" never meets a "Sun", whatever they share.
    def rec(pid: str, authors: list[str]) -> dict[str, object]:
        return {
            "id": pid,
            "title": "Word embeddings",
            "summary": "",
            "authors": authors,
            "categories": ["cs.CL"],
        }

    first = [
        rec("2404.00001", ["Hinrich Schütze", "Ann Lee"]),
        rec("2404.00002", ["Anders Soegaard", "Bob Stone"]),
        rec("2404.00003", ["C. Sun", "Cai Xu"]),
    ]
    Importer(engine, source="listings").run(listings.read(_write_jsonl(tmp_path / "1.jsonl", first)))
    later = [
        rec("2404.00004", ["Hinrich Schuetze", "Ann Lee"]),
        rec("2404.00005", ["Anders Søgaard", "Bob Stone"]),
        rec("2404.00006", ["Ching Y. Suen", "Cai Xu"]),
    ]
    Importer(engine, source="listings", batch_size=1).run(
        listings.read(_write_jsonl(tmp_path / "2.jsonl", later))
    )
    by_paper = _first_authors(engine)
    assert by_paper["2404.00004"] == by_paper["2404.00001"]
    assert by_paper["2404.00005"] == by_paper["2404.00002"]
    assert by_paper["2404.00006"] != by_paper["2404.00003"]


def test_two_authors_of_one_paper_stay_two_researchers_in_later_runs(engine: Engine, tmp_path: Path) -> None:
    # Each later paper fits both "Li Zhang"s equally (the same co-author): it joins one, and neither
    # that paper's merge nor consolidation makes them one, also when a new run reloads them.
    def rec(pid: str, authors: list[str]) -> dict[str, object]:
        return {"id": pid, "title": "Parsing", "summary": "", "authors": authors, "categories": ["cs.CL"]}

    first = [rec("2404.00001", ["Li Zhang", "Li Zhang", "Bo Chen"])]
    Importer(engine, source="listings").run(listings.read(_write_jsonl(tmp_path / "1.jsonl", first)))
    later = [rec(f"2404.0000{i}", ["Li Zhang", "Bo Chen"]) for i in range(2, 5)]
    Importer(engine, source="listings", batch_size=1).run(
        listings.read(_write_jsonl(tmp_path / "2.jsonl", later))
    )
    with Session(engine) as s:
        ids = s.execute(select(Researcher.id).where(Researcher.name_key == "li zhang")).scalars().all()
        on_first = s.execute(
            select(func.coalesce(Authorship.researcher_id, 0))
            .join(Paper)
            .where(Paper.arxiv_id == "2404.00001", Authorship.position < 2)
        ).scalars()
        assert len(ids) == 2 and sorted(on_first) == sorted(ids)
    assert _count(engine, ResearcherChange) == 0


def test_demo_pdf_records_keep_affiliations(engine: Engine, shared_data: Path) -> None:
    summary = Importer(engine, source="kaggle").run(kaggle.read(shared_data / "pdfs" / "papers.jsonl"))
    assert (summary.added, summary.failed) == (35, 0)
    with Session(engine) as s:
        raws = (
            s.execute(
                select(Affiliation.raw)
                .join(Paper)
                .where(Paper.arxiv_id == "1412.6980")
                .order_by(Affiliation.raw)
            )
            .scalars()
            .all()
        )
    assert raws == ["University of Amsterdam, OpenAI", "University of Toronto"]


def test_first_version_date_only_when_v1_is_known(engine: Engine, shared_data: Path, tmp_path: Path) -> None:
    """The demo's Adam record lists only v9: its date is the latest version's, not the first's."""
    adam = next(
        line
        for line in (shared_data / "pdfs" / "papers.jsonl").read_text().splitlines()
        if '"1412.6980"' in line
    )
    Importer(engine, source="kaggle").run(kaggle.read(_write_jsonl(tmp_path / "adam.jsonl", [adam])))
    with Session(engine) as s:
        paper = s.execute(select(Paper).where(Paper.arxiv_id == "1412.6980")).scalar_one()
        assert [v.version for v in paper.versions] == [9]
        assert (paper.published_on, paper.updated_on) == (None, dt.date(2017, 1, 30))


def test_display_name_is_the_most_complete_spelling_whatever_the_order(
    engine: Engine, tmp_path: Path
) -> None:
    def rec(pid: str, author: str) -> dict[str, object]:
        return {
            "id": pid,
            "title": pid,
            "summary": "",
            "authors": [author, "Ann Lee"],
            "categories": ["cs.LG"],
        }

    spellings = ["Christopher Re", "Christopher Ré", "CHRISTOPHER RE", "Christopher Re"]
    shown = []
    for order, batch_size in ((spellings, 1), (spellings[::-1], 1), (spellings, 10)):
        with engine.begin() as conn:  # a fresh catalogue for each order
            for table in (
                "authorships",
                "paper_categories",
                "paper_versions",
                "affiliations",
                "papers",
                "researchers",
            ):
                conn.exec_driver_sql(f"DELETE FROM {table}")
        rows = [rec(f"2401.0{i:04d}", name) for i, name in enumerate(order)]
        Importer(engine, source="listings", batch_size=batch_size).run(
            listings.read(_write_jsonl(tmp_path / "r.jsonl", rows))
        )
        with Session(engine) as s:
            shown.append(
                s.execute(select(Researcher.display_name).where(Researcher.name_key == "christopher re"))
                .scalars()
                .all()
            )
    assert shown == [["Christopher Ré"]] * 3


def test_migration_0009_refiles_block_keys_of_researchers_already_in_the_catalogue(tmp_path: Path) -> None:
    # Before 0009 a particle was part of the surname: "Ludwig van Beethoven" was filed under
    # "van beethoven l", where a new paper by "Ludwig Van Beethoven" ("beethoven l") never looks.
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    command.upgrade(alembic_config(engine), "0008_researcher_blocks")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO researchers (id, display_name, name_key, block_key, created_at)"
                " VALUES (1, 'Ludwig van Beethoven', 'ludwig van beethoven', 'van beethoven l', :now),"
                " (2, 'Yang Liu', 'yang liu', 'liu y', :now)"
            ),
            {"now": dt.datetime(2026, 1, 1)},
        )
    migrate(engine)
    with engine.connect() as conn:
        blocks: dict[int, str] = dict(conn.execute(text("SELECT id, block_key FROM researchers")).all())
    engine.dispose()
    assert blocks == {1: "beethoven l", 2: "liu y"}


def test_migration_0010_refiles_transliterated_keys_of_researchers_and_institutions(tmp_path: Path) -> None:
    # Before 0010 "ø" and "ł" survived folding: "Anders Søgaard" was filed under "søgaard a", where a
    # new paper by "Anders Sogaard" ("sogaard a") never looks, and a printed "Lodz" missed "Łódź".
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    command.upgrade(alembic_config(engine), "0009_refile_researcher_blocks")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO researchers (id, display_name, name_key, block_key, created_at)"
                " VALUES (1, 'Anders Søgaard', 'anders søgaard', 'søgaard a', :now),"
                " (2, 'Yang Liu', 'yang liu', 'liu y', :now)"
            ),
            {"now": dt.datetime(2026, 1, 1)},
        )
        conn.execute(
            text(
                "INSERT INTO institutions (id, name, aliases, acronyms, types, links, created_at)"
                " VALUES (1, 'Lodz University of Technology', '[]', '[]', '[]', '{}', :now)"
            ),
            {"now": dt.datetime(2026, 1, 1)},
        )
        conn.execute(
            text(
                "INSERT INTO institution_names (institution_id, name_key, kind) VALUES"
                " (1, 'lodz university of technology', 'name'),"
                " (1, 'politechnika łodzka', 'label'), (1, 'łodz university of technology', 'alias')"
            )
        )
    migrate(engine)
    with engine.connect() as conn:
        researchers = {
            rid: (key, block)
            for rid, key, block in conn.execute(text("SELECT id, name_key, block_key FROM researchers"))
        }
        names = sorted(conn.execute(text("SELECT name_key, kind FROM institution_names")).all())
    engine.dispose()
    assert researchers == {1: ("anders sogaard", "sogaard a"), 2: ("yang liu", "liu y")}
    assert [tuple(n) for n in names] == [
        ("lodz university of technology", "name"),
        ("politechnika lodzka", "label"),
    ]
    sogaard = parse_name("Anders Sogaard")
    assert sogaard is not None and sogaard.block == researchers[1][1]  # where new papers look
