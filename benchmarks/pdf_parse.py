"""Pages per second: the sandboxed parser vs raw PyMuPDF ``page.get_text()``, same PDFs, one run.

    .venv/bin/python benchmarks/pdf_parse.py [--rounds 5] [--workers 2]

Raw: open each PDF in this process and call ``get_text()`` on every page, one after another.
Sandboxed: ``ingest.pdf.parse_pdf`` on the same files, called from ``--workers`` threads, each
call served by a parser child (RLIMIT_AS, timeout, hidden-text detection, reading order,
headings, metadata); then the same with one child at a time. Starting the first child is timed
apart. Each round runs raw, sandboxed and one-child back to back and the ratios are taken per
round, so a burst of load from other work hits both sides of a ratio alike.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.modules["pymupdf.layout"] = None  # type: ignore[assignment]  # same import as the child: no layout models
sys.modules["pymupdf4llm"] = None  # type: ignore[assignment]

import psutil  # noqa: E402
import pymupdf  # noqa: E402

from ingest.pdf import PdfLimits, PdfParserPool  # noqa: E402
from settings import SHARED_DATA  # noqa: E402


def children_cpu() -> dict[int, float]:
    """CPU seconds used so far by each live child process (the parser children)."""
    out = {}
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.NoSuchProcess):
            times = child.cpu_times()
            out[child.pid] = times.user + times.system
    return out


def raw_round(files: list[Path]) -> tuple[int, float, float]:
    """Pages, wall seconds, CPU seconds."""
    started, cpu = time.perf_counter(), time.process_time()
    pages = 0
    for path in files:
        with pymupdf.open(path) as doc:
            for page in doc:
                page.get_text()
                pages += 1
    return pages, time.perf_counter() - started, time.process_time() - cpu


def sandbox_round(pool: PdfParserPool, files: list[Path], workers: int) -> tuple[int, float, float]:
    """Pages, wall seconds, CPU seconds of this process and the parser children together."""
    limits = PdfLimits()
    before = children_cpu()
    started, cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(max_workers=workers) as threads:
        results = list(threads.map(lambda p: pool.parse(p, limits), files))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    cpu += sum(used - before.get(pid, 0.0) for pid, used in children_cpu().items())
    return sum(r.page_count for r in results), wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
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
    single: list[float] = []
    raw_cpu: list[float] = []
    sandboxed_cpu: list[float] = []
    pages = 0
    for i in range(args.rounds):
        # Each round measures all three back to back, so a ratio compares runs under the same load.
        pages, seconds, cpu = raw_round(files)
        raw.append(pages / seconds)
        raw_cpu.append(1000 * cpu / pages)
        sandbox_pages, seconds, cpu = sandbox_round(pool, files, args.workers)
        assert sandbox_pages == pages
        sandboxed.append(pages / seconds)
        sandboxed_cpu.append(1000 * cpu / pages)
        _, seconds, _ = sandbox_round(pool, files, 1)
        single.append(pages / seconds)
        print(
            f"round {i + 1}: raw {raw[-1]:.1f} pages/s, sandboxed {sandboxed[-1]:.1f} "
            f"({sandboxed[-1] / raw[-1]:.2f}x), one child {single[-1]:.1f} ({single[-1] / raw[-1]:.2f}x)"
        )
    pool.close()

    def ratio(values: list[float]) -> float:
        return statistics.median(v / r for v, r in zip(values, raw, strict=True))

    print(f"\n{pages} pages per round; medians of {args.rounds} rounds (ratios taken per round)")
    print(f"raw PyMuPDF get_text(), 1 process:   {statistics.median(raw):7.1f} pages/s")
    print(
        f"sandboxed parse_pdf, {args.workers} children:    {statistics.median(sandboxed):7.1f} pages/s"
        f"  = {ratio(sandboxed):.2f}x raw"
    )
    print(
        f"sandboxed parse_pdf, 1 child:        {statistics.median(single):7.1f} pages/s"
        f"  = {ratio(single):.2f}x raw"
    )
    print(
        f"CPU per page (load-independent): raw {statistics.median(raw_cpu):.1f} ms, sandboxed "
        f"{statistics.median(sandboxed_cpu):.1f} ms (children + parent)"
    )
    print(f"first document incl. starting a child: {cold:.2f} s")


if __name__ == "__main__":
    main()
