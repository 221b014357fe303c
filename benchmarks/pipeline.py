"""End to end: PDFs through fetch-less ingestion (parse → chunk → embed → upsert) with the real
worker, the bundled MiniLM and the embedded Chroma; PDFs/min, chunks/s and the worker's peak memory.

    .venv/bin/python benchmarks/pipeline.py [--pdfs 35] [--keep DIR]

A fresh data dir gets the 35 demo papers' metadata; then ``python -m indexing pdfs`` runs as a child
process (enqueue, then its own worker until the queue drains: the same code the web app runs in its
background thread). Its resident memory is sampled every 0.1 s: the worker process alone, and the
worker plus its PDF parser children.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from catalog.db import make_engine, migrate  # noqa: E402
from catalog.indexing import indexing_progress  # noqa: E402
from catalog.models import FullText  # noqa: E402
from indexing.wiring import index_name, make_embedder  # noqa: E402
from ingest.importer import Importer  # noqa: E402
from ingest.sources import kaggle  # noqa: E402
from settings import SHARED_DATA, get_settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pdfs", type=int, default=35, help="How many of the 35 demo PDFs (in id order).")
    parser.add_argument("--keep", type=Path, help="Use (and keep) this data dir instead of a temporary one.")
    args = parser.parse_args()

    data = args.keep or Path(tempfile.mkdtemp(prefix="wovepaper-pipeline-"))
    os.environ["WOVEPAPER_DATA_DIR"] = str(data)
    os.environ.pop("WOVEPAPER_DATABASE_URL", None)
    os.environ.pop("WOVEPAPER_CHROMA_HOST", None)
    os.environ.pop("WOVEPAPER_REDIS_URL", None)
    get_settings.cache_clear()
    settings = get_settings()
    engine = make_engine(settings.database_url)
    migrate(engine)
    Importer(engine, source="kaggle").run(kaggle.read(SHARED_DATA / "pdfs" / "papers.jsonl"))

    pdfs = sorted((SHARED_DATA / "pdfs" / "arxiv").glob("*.pdf"))[: args.pdfs]
    folder = data / "input"
    folder.mkdir(exist_ok=True)
    for path in pdfs:
        target = folder / path.name
        if not target.exists():
            target.symlink_to(path)
    size = sum(p.stat().st_size for p in pdfs)
    print(
        f"{len(pdfs)} PDFs, {size / 2**20:.1f} MiB; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"  # noqa: E501
    )

    started = time.perf_counter()
    worker = subprocess.Popen(
        [sys.executable, "-m", "indexing", "pdfs", str(folder)],
        cwd=ROOT,
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    process = psutil.Process(worker.pid)
    peak_worker = peak_tree = 0
    while worker.poll() is None:
        try:
            own = process.memory_info().rss
            tree = own + sum(c.memory_info().rss for c in process.children(recursive=True))
        except psutil.Error:
            break
        peak_worker, peak_tree = max(peak_worker, own), max(peak_tree, tree)
        time.sleep(0.1)
    _, errors = worker.communicate()
    seconds = time.perf_counter() - started

    with Session(engine) as session:
        progress = indexing_progress(session, index_name(settings, make_embedder(settings)))
        chunks, pages = session.execute(
            select(func.sum(FullText.chunk_count), func.sum(FullText.pages))
        ).one()
    print(errors.strip().splitlines()[-1] if errors.strip() else "")
    print(f"exit status {worker.returncode}; full texts {progress.full_texts}")
    print(
        f"{len(pdfs)} PDFs, {pages or 0} pages, {chunks or 0} chunks in {seconds:.1f} s: "
        f"{len(pdfs) / seconds * 60:.1f} PDFs/min, {(pages or 0) / seconds:.1f} pages/s, "
        f"{(chunks or 0) / seconds:.1f} chunks/s end to end"
    )
    print(
        f"peak resident memory: worker {peak_worker / 2**20:.0f} MiB, "
        f"worker + parser children {peak_tree / 2**20:.0f} MiB"
    )
    engine.dispose()
    if not args.keep:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
