"""Do our chunks fit the embedder? cl100k chunk sizes vs MiniLM word-pieces, on the 35 real papers.

    .venv/bin/python benchmarks/chunk_window.py [--sizes 150 200 230 256]

all-MiniLM-L6-v2 reads at most 256 word-pieces including [CLS] and [SEP] and silently drops the
rest, so a chunk longer than that is embedded without its tail. For each ``chunk_tokens`` size
(overlap fixed at 15 % of it) this prints the word-pieces per chunk (median, p95, max), the share
of chunks that would be truncated, and the chunk count and chunking time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tokenizers import Tokenizer

from ingest.chunking import chunk_paper
from ingest.pdf import PdfLimits, default_pool, parse_pdf
from retrieval.embedder import MINILM_MAX_TOKENS, minilm_files
from settings import SHARED_DATA, ChunkSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[150, 180, 200, 220, 256])
    args = parser.parse_args()
    files = sorted((SHARED_DATA / "pdfs" / "arxiv").glob("*.pdf"))
    with ThreadPoolExecutor(max_workers=2) as threads:
        parsed = list(threads.map(lambda p: parse_pdf(p, PdfLimits()), files))
    default_pool.close()
    tokenizer = Tokenizer.from_file(str(minilm_files()[1]))
    tokenizer.no_truncation()
    print(
        f"{len(files)} papers, {sum(p.page_count for p in parsed)} pages; MiniLM window {MINILM_MAX_TOKENS}"
    )
    header = ("cl100k", "overlap", "chunks", "median wp", "p95 wp", "max wp", "cut", "s")
    print(" ".join(f"{h:>9}" for h in header))
    for size in args.sizes:
        settings = ChunkSettings(chunk_tokens=size, chunk_overlap_tokens=round(size * 0.15))
        started = time.perf_counter()
        chunks = [
            chunk
            for path, doc in zip(files, parsed, strict=True)
            for chunk in chunk_paper(
                arxiv_id=path.stem, version=1, title="", abstract="", parsed=doc, settings=settings
            )
            if chunk.kind == "body"
        ]
        elapsed = time.perf_counter() - started
        pieces = sorted(len(e.ids) for e in tokenizer.encode_batch([c.text for c in chunks]))
        cut = sum(n > MINILM_MAX_TOKENS for n in pieces) / len(pieces)
        p95 = pieces[int(0.95 * (len(pieces) - 1))]
        median = statistics.median(pieces)
        row = (size, settings.chunk_overlap_tokens, len(chunks), f"{median:.0f}", p95, pieces[-1])
        print(" ".join(f"{v:>9}" for v in row), f"{cut:>9.1%} {elapsed:>9.1f}")


if __name__ == "__main__":
    main()
