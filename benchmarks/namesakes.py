"""What the same-name comparison costs a researcher page when a name has dozens of researchers.

    .venv/bin/python benchmarks/namesakes.py [--names 5] [--catalogue path.sqlite3]

The demo corpus (``arxiv/listings-20k.jsonl.gz``) is imported into a fresh SQLite catalogue (or
``--catalogue`` is used as is), and the researchers with most papers are timed twice: as imported,
then split into the connected groups of their co-author graph, each group a researcher of the same
name (what a resolver that keeps people apart without shared co-authors would make: "Yang Liu"
becomes dozens). Printed per name: papers, researchers after the split, the statements one
``researcher_profile`` runs, and its median / max milliseconds over every piece.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import Engine, func, select, update  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from catalog.db import make_engine, migrate, recorded_statements  # noqa: E402
from catalog.models import Authorship, Researcher  # noqa: E402
from catalog.researchers import researcher_profile  # noqa: E402
from ingest.importer import Importer  # noqa: E402
from ingest.sources import listings  # noqa: E402
from people.name_counts import coauthor_groups  # noqa: E402
from settings import SHARED_DATA  # noqa: E402


def timed(engine: Engine, ids: list[int]) -> tuple[float, float, int]:
    """Median and max milliseconds of ``researcher_profile`` over ``ids``, and its statements."""
    times, statements = [], 0
    for rid in ids:
        with Session(engine) as session, recorded_statements(engine) as seen:
            started = time.perf_counter()
            researcher_profile(session, rid)
            times.append(1000 * (time.perf_counter() - started))
        statements = max(statements, len(seen))
    return statistics.median(times), max(times), statements


def split_by_coauthors(engine: Engine, researcher_id: int) -> list[int]:
    """Give each co-author component of ``researcher_id``'s papers a researcher of the same name."""
    with Session(engine) as session, session.begin():
        person = session.get(Researcher, researcher_id)
        assert person is not None
        theirs = select(Authorship.paper_id).where(Authorship.researcher_id == researcher_id)
        rows = session.execute(
            select(Authorship.paper_id, Authorship.researcher_id).where(Authorship.paper_id.in_(theirs))
        ).all()
        coauthors: dict[int, set[int]] = defaultdict(set)  # paper → its other researchers
        for paper, other in rows:
            coauthors[paper].update(() if other is None or other == researcher_id else (other,))
        papers = list(coauthors)
        groups: dict[int, list[int]] = defaultdict(list)
        for paper, group in zip(papers, coauthor_groups([coauthors[p] for p in papers]), strict=True):
            groups[group].append(paper)
        ids = [researcher_id]
        for papers in sorted(groups.values(), key=len, reverse=True)[1:]:
            piece = Researcher(display_name=person.display_name, name_key=person.name_key)
            session.add(piece)
            session.flush()
            session.execute(
                update(Authorship)
                .where(Authorship.researcher_id == researcher_id, Authorship.paper_id.in_(papers))
                .values(researcher_id=piece.id)
            )
            ids.append(piece.id)
        return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=5, help="how many of the most prolific names")
    parser.add_argument("--catalogue", type=Path, help="an imported SQLite catalogue to copy instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "catalogue.sqlite3"
        if args.catalogue:
            shutil.copy(args.catalogue, path)
        engine = make_engine(f"sqlite:///{path}")
        if not args.catalogue:
            migrate(engine)
            Importer(engine, source="listings").run(
                listings.read(SHARED_DATA / "arxiv" / "listings-20k.jsonl.gz")
            )
        with Session(engine) as session:
            papers = func.count(func.distinct(Authorship.paper_id))
            top = session.execute(
                select(Authorship.researcher_id, papers)
                .where(Authorship.researcher_id.is_not(None))
                .group_by(Authorship.researcher_id)
                .order_by(papers.desc())
                .limit(args.names)
            ).all()
        print(
            "name | papers | researchers after split | statements | ms as imported | ms split, median / max"
        )
        for rid, n in top:
            if rid is None:
                continue
            with Session(engine) as session:
                name = session.execute(
                    select(Researcher.display_name).where(Researcher.id == rid)
                ).scalar_one()
            before, _, _ = timed(engine, [rid] * 5)
            pieces = split_by_coauthors(engine, rid)
            median, most, statements = timed(engine, pieces)
            print(f"{name} | {n} | {len(pieces)} | {statements} | {before:.1f} | {median:.1f} / {most:.1f}")
        engine.dispose()


if __name__ == "__main__":
    main()
