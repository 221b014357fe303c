"""Milliseconds per page for the page reader, cold and cached, on demo PDFs.

    .venv/bin/python benchmarks/page_reader.py [--pages 12] [--zoom 2.0]

Through ``indexing.page_reader.SandboxPageReader`` (what ``/papers/<id>/pages/<n>`` uses): the
first call starts a parser child (timed apart); then, for ``--pages`` pages spread over three PDFs,
the PNG drawn in the child (cold: not in the cache), the page view without drawing (size, text and
a quote's rectangles: what the HTML page needs), and the PNG again (cached). Reading and hashing
the file is part of every cold call, as in the app. One run, medians and p90s.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexing.page_reader import SandboxPageReader
from ingest.pdf import PdfLimits
from settings import SHARED_DATA

FILES = ("1412.6980", "1706.03762", "1512.03385")


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"median {1000 * statistics.median(values):.1f} ms, p90 {1000 * p90:.1f} ms (n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=12)
    parser.add_argument("--zoom", type=float, default=2.0)
    args = parser.parse_args()
    reader = SandboxPageReader(PdfLimits(), zoom=args.zoom)
    docs = []
    for name in FILES:
        file = SHARED_DATA / "pdfs" / "arxiv" / f"{name}.pdf"
        docs.append((str(file), hashlib.sha256(file.read_bytes()).hexdigest()))
    try:
        started = time.perf_counter()
        reader.view(docs[0][0], docs[0][1], 1, "")
        print(f"first call, starting a parser child: {1000 * (time.perf_counter() - started):.0f} ms")
        cold, view, cached, sizes = [], [], [], []
        for i in range(args.pages):
            path, sha = docs[i % len(docs)]
            number = 1 + i // len(docs)
            t0 = time.perf_counter()
            png = reader.image(path, sha, number)
            t1 = time.perf_counter()
            reader.view(path, sha, number, "the")
            t2 = time.perf_counter()
            assert reader.image(path, sha, number) == png
            t3 = time.perf_counter()
            cold.append(t1 - t0)
            view.append(t2 - t1)
            cached.append(t3 - t2)
            sizes.append(len(png))
        print(f"PNG at zoom {args.zoom:g}, cold (drawn in the child): {ms(cold)}")
        print(f"page view without drawing (size, text, a quote's rectangles): {ms(view)}")
        print(f"PNG from the cache: median {1e6 * statistics.median(cached):.0f} µs")
        print(f"PNG size: median {statistics.median(sizes) / 1024:.0f} KiB, max {max(sizes) / 1024:.0f} KiB")
    finally:
        reader.close()


if __name__ == "__main__":
    main()
