"""Pages per second: the sandboxed parser vs raw PyMuPDF ``page.get_text()``, same PDFs, one run.

    .venv/bin/python benchmarks/pdf_parse.py [--rounds 3] [--workers 2]

Raw: open each PDF in this process and call ``get_text()`` on every page, one after another.
Sandboxed: ``ingest.pdf.parse_pdf`` on the same files, called from ``--workers`` threads, each
call served by a parser child (RLIMIT_AS, timeout, hidden-text detection, reading order,
headings, metadata). The first sandboxed round starts the children (that cost is shown apart);
rounds alternate raw/sandboxed so machine load hits both alike. Prints the median of the rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.modules["pymupdf.layout"] = None  # type: ignore[assignment]  # same import as the child: no layout models
sys.modules["pymupdf4llm"] = None  # type: ignore[assignment]

import pymupdf  # noqa: E402

from ingest.pdf import PdfLimits, PdfParserPool  # noqa: E402
from settings import SHARED_DATA  # noqa: E402


def raw_round(files: list[Path]) -> tuple[int, float]:
    started = time.perf_counter()
    pages = 0
    for path in files:
        with pymupdf.open(path) as doc:
            for page in doc:
                page.get_text()
                pages += 1
    return pages, time.perf_counter() - started


def sandbox_round(pool: PdfParserPool, files: list[Path], workers: int) -> tuple[int, float]:
    limits = PdfLimits()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as threads:
        results = list(threads.map(lambda p: pool.parse(p, limits), files))
    return sum(r.page_count for r in results), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="parser children working at once")
    args = parser.parse_args()
    files = sorted((SHARED_DATA / "pdfs" / "arxiv").glob("*.pdf"))
    pool = PdfParserPool(max_idle=args.workers)
    print(f"{len(files)} PDFs, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")

    started = time.perf_counter()
    pool.parse(files[0], PdfLimits())  # starts the pool's first child
    cold = time.perf_counter() - started
    raw: list[float] = []
    sandboxed: list[float] = []
    pages = 0
    for i in range(args.rounds):
        pages, seconds = raw_round(files)
        raw.append(pages / seconds)
        sandbox_pages, seconds = sandbox_round(pool, files, args.workers)
        assert sandbox_pages == pages
        sandboxed.append(pages / seconds)
        print(f"round {i + 1}: raw {raw[-1]:.1f} pages/s, sandboxed {sandboxed[-1]:.1f} pages/s")
    single: list[float] = []
    for _ in range(max(1, args.rounds // 2)):
        _, seconds = sandbox_round(pool, files, 1)
        single.append(pages / seconds)
    pool.close()

    r, s = statistics.median(raw), statistics.median(sandboxed)
    print(f"\n{pages} pages per round, median of {args.rounds} rounds")
    print(f"raw PyMuPDF get_text(), 1 process:           {r:7.1f} pages/s")
    print(f"sandboxed parse_pdf, {args.workers} children:            {s:7.1f} pages/s  = {s / r:.2f}x raw")
    print(
        f"sandboxed parse_pdf, 1 child:                {statistics.median(single):7.1f} pages/s  = "
        f"{statistics.median(single) / r:.2f}x raw"
    )
    print(f"first document incl. starting a child:       {cold:7.2f} s")


if __name__ == "__main__":
    main()
