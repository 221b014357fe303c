"""Search latency: p50/p99 of ``/api/search`` (warm, over HTTP on loopback) on the 20k demo listings
and on the 75k listings, each in its own data dir, next to a raw Chroma query for the same query
vectors in the same run.

    .venv/bin/python benchmarks/search_latency.py [--sizes 20k,75k] [--embed 2000] [--queries 200]

What is real and what is not: the catalogue (SQLite), the lexical index (every paper), the Chroma
collection (one title + abstract vector per paper, so the HNSW index has its full size) and the app
are the product's own. Embedding 75k abstracts takes hours on 2 cores, so only ``--embed`` papers
are embedded with the bundled MiniLM; every other paper gets one of those vectors plus small noise
(re-normalised). Latency depends on the index size, not on which vectors are in it; ranking quality
is measured by ``python -m evals``, not here. Data dirs are kept under ``data/bench-search-*`` and
reused by the next run.

Printed: for each size, raw Chroma k-NN (k = search_candidates) as Chroma answers by default
(documents, metadata, distances) and with ids + distances only (what search's k-NN asks for; it reads
the details of the few papers it shows afterwards), and ``/api/search`` with fresh queries (the query
is embedded) and repeated queries (the query vector is cached), each p50/p99 in ms, and the p99 ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.db import make_engine, migrate  # noqa: E402
from indexing.pipeline import Pipeline, load_papers  # noqa: E402
from indexing.wiring import make_embedder, open_store  # noqa: E402
from ingest.importer import Importer  # noqa: E402
from ingest.sources import listings  # noqa: E402
from retrieval.lexical import LexicalIndex  # noqa: E402
from settings import SHARED_DATA, Settings, get_settings  # noqa: E402

FILES = {"20k": "listings-20k.jsonl.gz", "75k": "listings-75k.jsonl.gz"}


def configure(data_dir: Path) -> Settings:
    os.environ.update(
        {
            "WOVEPAPER_DATA_DIR": str(data_dir),
            "WOVEPAPER_WORKER_EMBEDDED": "false",
            "WOVEPAPER_ENVIRONMENT": "test",
            "WOVEPAPER_PAGE_CACHE_SECONDS": "0",
        }
    )
    os.environ.pop("WOVEPAPER_DATABASE_URL", None)
    get_settings.cache_clear()
    return get_settings()


def build(size: str, data_dir: Path, embed: int) -> tuple[int, int]:
    """Catalogue, lexical index and Chroma for one listings file (skipped when already built)."""
    settings = configure(data_dir)
    done = data_dir / "bench-complete.json"
    if done.is_file():
        info = json.loads(done.read_text())
        return info["papers"], info["embedded"]
    engine = make_engine(settings.database_url)
    migrate(engine)
    started = time.perf_counter()
    records = (r for r in listings.read(SHARED_DATA / "arxiv" / FILES[size]) if not isinstance(r, Exception))
    Importer(engine, source="listings").run(records)
    print(f"[{size}] catalogue imported in {time.perf_counter() - started:.0f} s", flush=True)

    started = time.perf_counter()
    lexical = LexicalIndex.from_settings(settings)
    lexical.sync_catalogue(engine, full=True)
    lexical.flush()
    print(f"[{size}] lexical index built in {time.perf_counter() - started:.0f} s", flush=True)

    embedder = make_embedder(settings)
    store = open_store(settings, embedder)
    pipeline = Pipeline(settings, engine, store, embedder)
    papers = load_papers(engine)
    rng = np.random.default_rng(7)
    sample = set(rng.choice(len(papers), size=min(embed, len(papers)), replace=False).tolist())
    chosen = [p for i, p in enumerate(papers) if i in sample]
    started = time.perf_counter()
    chunks = [pipeline.chunks_for(p, p.latest_version, None)[0] for p in chosen]
    real = np.asarray(pipeline.embed([c.text for c in chunks]), dtype=np.float32)
    store.replace_abstracts(chunks, real.tolist(), [p.fields() for p in chosen])
    print(f"[{size}] embedded {len(chosen)} abstracts in {time.perf_counter() - started:.0f} s", flush=True)

    started = time.perf_counter()
    rest = [p for i, p in enumerate(papers) if i not in sample]
    for start in range(0, len(rest), 2000):
        part = rest[start : start + 2000]
        base = real[rng.integers(0, len(real), size=len(part))]
        noisy = base + rng.normal(0, 0.05, size=base.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        heads = [pipeline.chunks_for(p, p.latest_version, None)[0] for p in part]
        store.replace_abstracts(heads, noisy.tolist(), [p.fields() for p in part])
    print(f"[{size}] stored {len(rest)} reused vectors in {time.perf_counter() - started:.0f} s", flush=True)
    pipeline.close()
    store.close()
    engine.dispose()
    done.write_text(json.dumps({"papers": len(papers), "embedded": len(chosen)}))
    return len(papers), len(chosen)


def queries(data_dir: Path, n: int) -> list[str]:
    """Short queries: a few words from real titles of this corpus, fixed seed."""
    settings = configure(data_dir)
    engine = make_engine(settings.database_url)
    titles = [p.title for p in load_papers(engine)]
    engine.dispose()
    rng = random.Random(11)
    picked = rng.sample(titles, n)
    return [" ".join(t.split()[:6]) for t in picked]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99


def raw_chroma(data_dir: Path, texts: list[str]) -> dict[str, tuple[float, float]]:
    """A plain Chroma query per vector, two ways: Chroma's default (documents, metadata and
    distances) and ids + distances only (what search's k-NN asks for), timed alternately."""
    settings = configure(data_dir)
    embedder = make_embedder(settings)
    store = open_store(settings, embedder)
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    k = settings.search.search_candidates
    includes = {"default": ["documents", "metadatas", "distances"], "ids_only": ["distances"]}
    for v in vectors[:10]:
        store.collection.query(query_embeddings=v[None, :], n_results=k)
    times: dict[str, list[float]] = {name: [] for name in includes}
    for v in vectors:
        for name, include in includes.items():
            started = time.perf_counter()
            store.collection.query(query_embeddings=v[None, :], n_results=k, include=include)  # type: ignore[arg-type]
            times[name].append((time.perf_counter() - started) * 1000)
    store.close()
    return {name: percentiles(samples) for name, samples in times.items()}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_app(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    """``python -m app serve`` with ``env`` on ``port``, returned once ``/healthz`` answers. Its
    output goes to a temporary file (a pipe nobody reads would stall the app once full)."""
    with tempfile.TemporaryFile() as log:  # the child keeps its own descriptor
        server = subprocess.Popen(
            [sys.executable, "-m", "app", "serve"],
            cwd=ROOT,
            env={**env, "WOVEPAPER_PORT": str(port)},
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            wait_until_answering(f"http://127.0.0.1:{port}", server, 180)
        except RuntimeError:
            log.seek(0)
            detail = log.read().decode(errors="replace")
            raise RuntimeError(f"the app did not start: {detail[-2000:]}") from None
    return server


def wait_until_answering(base: str, server: subprocess.Popen[bytes], seconds: float) -> None:
    """Until ``/healthz`` answers 200 (RuntimeError when the app exits or ``seconds`` pass)."""
    deadline = time.monotonic() + seconds
    with httpx.Client(base_url=base, timeout=10) as client:
        while True:
            try:
                if client.get("/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError(f"the app at {base} does not answer /healthz")
            time.sleep(0.5)


def api(data_dir: Path, texts: list[str]) -> dict[str, tuple[float, float]]:
    configure(data_dir)
    port = free_port()
    server = serve_app(dict(os.environ), port)
    try:
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, timeout=60) as client:
            # Warm-up: models loaded, lexical index and Chroma segments in memory, a few plans cached.
            for text in ["warm up the retrieval stack", "graph neural networks", "language model agents"]:
                client.get("/api/search", params={"q": text})
            results: dict[str, tuple[float, float]] = {}
            for label, batch in (("fresh", texts), ("repeated", texts)):
                times = []
                for text in batch:
                    started = time.perf_counter()
                    response = client.get("/api/search", params={"q": text})
                    times.append((time.perf_counter() - started) * 1000)
                    response.raise_for_status()
                results[label] = percentiles(times)
            return results
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="20k,75k")
    parser.add_argument("--embed", type=int, default=2000, help="abstracts embedded for real per corpus")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    report = []
    for size in args.sizes.split(","):
        data_dir = ROOT / "data" / f"bench-search-{size}"
        papers, embedded = build(size, data_dir, args.embed)
        texts = queries(data_dir, args.queries)
        chroma = raw_chroma(data_dir, texts)
        http = api(data_dir, texts)
        row = {
            "corpus": size,
            "papers": papers,
            "embedded_for_real": embedded,
            "queries": len(texts),
            "raw_chroma_ms": {"p50": round(chroma["default"][0], 1), "p99": round(chroma["default"][1], 1)},
            "raw_chroma_ids_only_ms": {
                "p50": round(chroma["ids_only"][0], 1),
                "p99": round(chroma["ids_only"][1], 1),
            },
            "api_fresh_ms": {"p50": round(http["fresh"][0], 1), "p99": round(http["fresh"][1], 1)},
            "api_repeated_ms": {"p50": round(http["repeated"][0], 1), "p99": round(http["repeated"][1], 1)},
            "p99_ratio_fresh_to_raw_chroma": round(http["fresh"][1] / chroma["default"][1], 2),
            "p99_ratio_repeated_to_raw_chroma": round(http["repeated"][1] / chroma["default"][1], 2),
            "p99_ratio_fresh_to_ids_only": round(http["fresh"][1] / chroma["ids_only"][1], 2),
        }
        report.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
