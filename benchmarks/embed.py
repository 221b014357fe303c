"""Embedding throughput: our MiniLM embedder vs chromadb's own ``ONNXMiniLM_L6_V2``, same chunks, same run.

    .venv/bin/python benchmarks/embed.py [--papers 6] [--abstracts 300] [--rounds 3] [--batch-sizes 4 8 16 32]

Both run the same bundled int8 all-MiniLM-L6-v2 file (chromadb's function is pointed at it through
``DOWNLOAD_PATH``, so nothing is downloaded). The chunks are real: the body chunks of the first
``--papers`` demo PDFs (parsed and chunked with the default settings) and ``--abstracts`` title +
abstract chunks of the demo listings. The two are timed on the same slices of 32 chunks, alternating which
goes first, ``--rounds`` times, so load from other processes on this shared machine falls on both
alike; printed are the total chunks/s of each and the median of the per-slice ratios. Also printed:
the cosine agreement of the two functions' vectors, and our embedder at other batch sizes.
Target: ours ≥ 1.3× chromadb's chunks/s.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2
from tokenizers import Tokenizer

from ingest.chunking import chunk_paper
from ingest.pdf import PdfLimits, default_pool, parse_pdf
from retrieval.embedder import MiniLMEmbedder, minilm_files
from settings import SHARED_DATA, ChunkSettings

SLICE = 32  # texts timed together: long enough to measure, short enough to interleave finely
TOKENIZER_FILES = (
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "tokenizer.json",
    "vocab.txt",
)


def chromadb_function(folder: Path) -> ONNXMiniLM_L6_V2:
    """chromadb's embedding function, reading the bundled model and tokenizer (no download)."""
    model, tokenizer = minilm_files()
    onnx = folder / "onnx"
    onnx.mkdir(parents=True)
    (onnx / "model.onnx").symlink_to(model)
    for name in TOKENIZER_FILES:
        (onnx / name).symlink_to(tokenizer.parent / name)
    function = ONNXMiniLM_L6_V2()
    function.DOWNLOAD_PATH = folder  # the documented way to point it elsewhere
    return function


def body_chunks(papers: int) -> list[str]:
    files = sorted((SHARED_DATA / "pdfs" / "arxiv").glob("*.pdf"))[:papers]
    texts = []
    settings = ChunkSettings()
    for path in files:
        parsed = parse_pdf(path, PdfLimits())
        chunks = chunk_paper(
            arxiv_id=path.stem, version=1, title="", abstract="", parsed=parsed, settings=settings
        )
        texts += [c.text for c in chunks if c.kind == "body"]
    default_pool.close()
    return texts


def abstract_chunks(count: int) -> list[str]:
    texts = []
    with gzip.open(SHARED_DATA / "arxiv" / "listings-20k.jsonl.gz", "rt") as lines:
        for line in lines:
            record = json.loads(line)
            chunks = chunk_paper(
                arxiv_id=record["id"],
                version=None,
                title=record["title"],
                abstract=record["summary"],
                parsed=None,
                settings=ChunkSettings(),
            )
            texts.append(chunks[0].text)
            if len(texts) == count:
                break
    return texts


def compare(
    label: str,
    texts: Sequence[str],
    ours: Callable[[list[str]], object],
    theirs: Callable[[list[str]], object],
    rounds: int,
) -> None:
    """Time both on the same slices of ``texts``, alternating which goes first, so load from
    other processes falls on both alike; print total chunks/s and the median of per-slice ratios."""
    slices = [list(texts[i : i + SLICE]) for i in range(0, len(texts), SLICE)]
    mine = chroma = 0.0
    ratios = []
    for r in range(rounds):
        for n, part in enumerate(slices):
            order = [(ours, True), (theirs, False)] if (r + n) % 2 else [(theirs, False), (ours, True)]
            took = {}
            for function, is_ours in order:
                started = time.perf_counter()
                function(part)
                took[is_ours] = time.perf_counter() - started
            mine += took[True]
            chroma += took[False]
            ratios.append(took[False] / took[True])
    count = len(texts) * rounds
    print(
        f"{label:>16}: ours {count / mine:6.1f} chunks/s, chromadb {count / chroma:6.1f} chunks/s "
        f"→ {chroma / mine:.2f}× (median of {len(ratios)} slice ratios {statistics.median(ratios):.2f}×)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=6)
    parser.add_argument("--abstracts", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-sizes", type=int, nargs="*", default=[4, 16])
    args = parser.parse_args()

    bodies = body_chunks(args.papers)
    abstracts = abstract_chunks(args.abstracts)
    tokenizer = Tokenizer.from_file(str(minilm_files()[1]))
    tokenizer.no_truncation()
    lengths = [len(e.ids) for e in tokenizer.encode_batch(bodies + abstracts)]
    print(
        f"{len(bodies)} body chunks from {args.papers} demo PDFs + {len(abstracts)} abstract chunks; "
        f"word-pieces median {statistics.median(lengths):.0f}, max {max(lengths)} (both functions cut at "
        f"256); {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )

    ours = MiniLMEmbedder()  # the defaults the worker uses
    with tempfile.TemporaryDirectory() as tmp:
        theirs = chromadb_function(Path(tmp))
        ours.embed(bodies[:8])  # load both models before timing
        theirs(bodies[:8])
        print(
            f"ours: batch {ours.batch_size}, threads {ours.threads or 'all'}; chromadb: batch 32, pads to 256"
        )
        for label, texts in (("body chunks", bodies), ("abstract chunks", abstracts)):
            compare(label, texts, ours.embed, theirs, args.rounds)
        mine = np.asarray(ours.embed(bodies[:64]))
        reference = np.asarray(theirs(bodies[:64]))
        agreement = (mine * reference).sum(axis=1) / np.linalg.norm(reference, axis=1)
        print(f"cosine(ours, chromadb) on 64 chunks: min {agreement.min():.5f}, mean {agreement.mean():.5f}")
        for size in args.batch_sizes:
            other = MiniLMEmbedder(batch_size=size)
            other.embed(bodies[:8])
            compare(f"batch {size} vs chromadb", bodies, other.embed, theirs, 1)


if __name__ == "__main__":
    main()
