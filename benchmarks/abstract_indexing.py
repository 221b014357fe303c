"""First-run abstract indexing with the bundled and the per-channel int8 MiniLM, same run, same papers.

    .venv/bin/python benchmarks/abstract_indexing.py [--abstracts 2000] [--order bundled,per-channel]

A fresh data dir gets the first ``--abstracts`` papers of ``arxiv/listings-20k.jsonl.gz`` (imported by
``python -m ingest listings``); then ``python -m indexing abstracts`` runs as a child process once per
embedder (``WOVEPAPER_EMBEDDING_QUANTIZED=false``/``true``): it enqueues the backfill and its own worker
embeds every title + abstract chunk into that embedder's collection (the index name differs, so both
are first runs). Printed per embedder: wall time, abstracts/min and the child's CPU seconds (the
figure that load from other processes on this shared machine disturbs least).
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from settings import SHARED_DATA  # noqa: E402

EMBEDDERS = {"bundled": "false", "per-channel": "true"}


def run(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``python -m <args>`` (CPU: user + system of the child) and the last
    line it logged (the worker's summary: jobs and the seconds they took, start-up excluded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--abstracts", type=int, default=2000, help="How many listings to import and index.")
    parser.add_argument("--order", default="bundled,per-channel", help="Which embedder runs first.")
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="wovepaper-abstracts-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("WOVEPAPER_")}
    env["WOVEPAPER_DATA_DIR"] = str(data)
    try:
        sample = data / "listings.jsonl.gz"
        with gzip.open(SHARED_DATA / "arxiv" / "listings-20k.jsonl.gz", "rt") as src:
            lines = [line for _, line in zip(range(args.abstracts), src, strict=False)]
        with gzip.open(sample, "wt") as out:
            out.writelines(lines)
        run(["ingest", "listings", str(sample)], env)
        print(f"{len(lines)} listings; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        for label in args.order.split(","):
            choice = {"WOVEPAPER_EMBEDDING_QUANTIZED": EMBEDDERS[label]}
            wall, cpu, summary = run(["indexing", "abstracts"], env | choice)
            print(
                f"{label:12} {wall:7.1f} s wall, {len(lines) / wall * 60:6.0f} abstracts/min, "
                f"{cpu:7.1f} CPU-s ({cpu / len(lines) * 1000:.1f} per 1,000); load {os.getloadavg()[0]:.1f}"
            )
            print(f"{'':12} {summary}")
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
