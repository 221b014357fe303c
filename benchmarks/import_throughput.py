"""Import throughput: the 75k listings into a fresh SQLite and a fresh PostgreSQL catalogue.

Each import runs in its own child process, so the printed peak memory is the RSS high-water mark of
exactly one import (``getrusage(RUSAGE_SELF).ru_maxrss`` read by the child when it is done). The
timed part is ``Importer.run`` over the streamed file: migrations and process start are excluded.

    .venv/bin/python benchmarks/import_throughput.py                      # both backends, 75k file
    .venv/bin/python benchmarks/import_throughput.py --backend sqlite \
        --file ../shared/data/arxiv/listings-20k.jsonl.gz
    .venv/bin/python benchmarks/import_throughput.py --incremental 2000   # new papers into 73k

Targets (issue 2): >= 2,000 records/s into SQLite on a 2-core machine, peak <= 500 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from sqlalchemy import create_engine, text  # noqa: E402

from catalog.db import make_engine, migrate  # noqa: E402
from ingest.importer import Importer  # noqa: E402
from ingest.sources import listings  # noqa: E402
from people import evidence  # noqa: E402
from people.names import parse_name  # noqa: E402
from settings import SHARED_DATA  # noqa: E402

DEFAULT_FILE = SHARED_DATA / "arxiv" / "listings-75k.jsonl.gz"
POSTGRES_ADMIN_URL = os.environ.get(
    "WOVEPAPER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
TARGET_RATE = 2_000
TARGET_PEAK_MB = 500


def child(url: str, path: Path, batch_size: int, incremental: int = 0) -> None:
    """Import ``path`` into ``url`` and print one JSON line of figures. With ``incremental`` N, the
    last N records are held back, then imported by a new importer (a fresh resolver, as a later run
    would be: its candidates are loaded from the catalogue) into the full catalogue and, for
    comparison, into an empty one beside it."""
    if incremental:
        incremental_child(url, path, batch_size, incremental)
        return
    engine = make_engine(url)
    migrate(engine)
    cpu_before = _cpu_seconds()
    started = time.perf_counter()
    summary = Importer(engine, source="listings", batch_size=batch_size).run(listings.read(path))
    seconds = time.perf_counter() - started
    cpu = _cpu_seconds() - cpu_before
    engine.dispose()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    print(
        json.dumps(
            {
                "seen": summary.seen,
                "added": summary.added,
                "failed": summary.failed,
                "seconds": seconds,
                "cpu_seconds": cpu,
                "peak_mb": peak_kb / 1024,
            }
        )
    )


def incremental_child(url: str, path: Path, batch_size: int, held_back: int) -> None:
    records = list(listings.read(path))
    head, tail = records[:-held_back], records[-held_back:]
    engine = make_engine(url)
    migrate(engine)
    Importer(engine, source="listings", batch_size=batch_size).run(head)
    figures: dict[str, object] = {"catalogue": len(head), "held_back": len(tail)}
    with tempfile.TemporaryDirectory(prefix="wovepaper-bench-empty-") as tmp:
        empty = make_engine(f"sqlite:///{Path(tmp) / 'empty.sqlite3'}")
        migrate(empty)
        for label, target in (("into_full", engine), ("into_empty", empty)):
            # A later run is a new process: its parsed names and topic words start cold.
            parse_name.cache_clear()
            evidence._BITS.clear()
            cpu_before, started = _cpu_seconds(), time.perf_counter()
            Importer(target, source="listings", batch_size=batch_size).run(tail)
            figures[label] = {
                "seconds": time.perf_counter() - started,
                "cpu_seconds": _cpu_seconds() - cpu_before,
            }
            target.dispose()
    print(json.dumps(figures))


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_child(url: str, path: Path, batch_size: int, incremental: int = 0) -> dict:
    cmd = [sys.executable, __file__, "--child", url, "--file", str(path), "--batch-size", str(batch_size)]
    cmd += ["--incremental", str(incremental)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=PROJECT_ROOT)
    if result.returncode != 0:
        raise SystemExit(f"import child failed ({result.returncode}):\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def bench_sqlite(path: Path, batch_size: int, incremental: int = 0) -> dict:
    with tempfile.TemporaryDirectory(prefix="wovepaper-bench-") as tmp:
        return run_child(f"sqlite:///{Path(tmp) / 'catalogue.sqlite3'}", path, batch_size, incremental)


def bench_postgresql(path: Path, batch_size: int) -> dict[str, float]:
    name = f"wovepaper_bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        return run_child(POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}", path, batch_size)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument(
        "--incremental",
        type=int,
        default=0,
        metavar="N",
        help="SQLite: also time the last N records imported into the catalogue of all the others.",
    )
    parser.add_argument("--child", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.file, args.batch_size, args.incremental)
        return
    if args.incremental:
        r = bench_sqlite(args.file, args.batch_size, args.incremental)
        print(f"file: {args.file}: the last {r['held_back']:,} records after {r['catalogue']:,} (SQLite)")
        for label in ("into_full", "into_empty"):
            f = r[label]
            rate = r["held_back"] / f["seconds"]
            print(
                f"  {label.replace('_', ' '):<11} {f['seconds']:6.2f} s, {rate:7,.0f} records/s,"
                f" {f['cpu_seconds']:6.2f} CPU s"
            )
        return

    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    print(f"file: {args.file} (batch size {args.batch_size}, {os.cpu_count()} CPUs)")
    print(
        f"{'backend':<11} {'records':>8} {'added':>8} {'failed':>6} {'seconds':>8} {'records/s':>10} "
        f"{'CPU s':>7} {'rec/CPU s':>10} {'peak MB':>8} {'load':>5}"
    )
    for backend in backends:
        bench = bench_sqlite if backend == "sqlite" else bench_postgresql
        r = bench(args.file, args.batch_size)
        rate = r["seen"] / r["seconds"]
        # The 1-minute load average shows how much of the CPUs other work was using; records per
        # CPU-second (this process, all threads) is the rate with one core to itself, a figure that
        # load does not change much (a lower bound: the read-ahead overlaps on a second core).
        print(
            f"{backend:<11} {r['seen']:>8,} {r['added']:>8,} {r['failed']:>6} {r['seconds']:>8.1f} "
            f"{rate:>10,.0f} {r['cpu_seconds']:>7.1f} {r['seen'] / r['cpu_seconds']:>10,.0f} "
            f"{r['peak_mb']:>8.0f} {os.getloadavg()[0]:>5.1f}"
        )
        if backend == "sqlite":
            verdict = "met" if rate >= TARGET_RATE else "MISSED"
            print(f"  target >= {TARGET_RATE:,} records/s into SQLite: {verdict}")
        verdict = "met" if r["peak_mb"] <= TARGET_PEAK_MB else "MISSED"
        print(f"  target peak <= {TARGET_PEAK_MB} MB: {verdict}")


if __name__ == "__main__":
    main()
