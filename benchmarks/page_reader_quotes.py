"""How often the page reader finds a cited sentence on its page, on the demo PDFs.

    .venv/bin/python benchmarks/page_reader_quotes.py [--files 10] [--per-file 30]

For the first ``--files`` demo PDFs: parse each as the indexing worker does (sandboxed), split its
pages' text into sentences as the chat's key quotes are split (``chat.sentences.split``), keep those
of 40-400 characters that are mostly letters, sample ``--per-file`` (seeded), and ask PyMuPDF, as the
reader does (``extract.page_view``), where each stands on its page: found whole, found by its first
and last words only ("partly"), found whole on the next or previous page, or not found.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.urls import reader_quote
from chat.sentences import split
from ingest.pdf import PdfLimits, parse_pdf
from ingest.pdf.extract import page_view
from settings import SHARED_DATA


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--per-file", type=int, default=30)
    args = parser.parse_args()
    rng = random.Random(7)
    counts = {"whole": 0, "partly": 0, "neighbour": 0, "not found": 0}
    missed = []
    files = sorted((SHARED_DATA / "pdfs" / "arxiv").glob("*.pdf"))[: args.files]
    for path in files:
        data = path.read_bytes()
        parsed = parse_pdf(data, PdfLimits())
        candidates = [
            (page.number, s.text)
            for page in parsed.pages
            for s in split(page.text)
            if 40 <= len(s.text) <= 400 and sum(c.isalpha() for c in s.text) > 0.6 * len(s.text)
        ]
        for number, sentence in rng.sample(candidates, min(args.per_file, len(candidates))):
            quote = reader_quote(sentence)
            view = page_view(data, number, 0, quote, 500, draw=False)
            if view["rects"]:
                counts["partly" if view.get("partial") else "whole"] += 1
                continue
            others = [n for n in (number + 1, number - 1) if 1 <= n <= parsed.page_count]
            if any(page_view(data, n, 0, quote, 500, draw=False)["rects"] for n in others):
                counts["neighbour"] += 1
            else:
                counts["not found"] += 1
                missed.append(f"{path.stem} p. {number}: {sentence[:100]}")
    total = sum(counts.values())
    print(f"{len(files)} PDFs, {total} sentences: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for line in missed:
        print("  not found:", line)


if __name__ == "__main__":
    main()
