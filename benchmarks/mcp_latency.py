"""MCP tool-call latency against the JSON API, same server, same run: ``search_papers`` vs
``GET /api/search`` and ``get_paper`` vs ``GET /api/papers/<id>``, p50/p99 over loopback.

    .venv/bin/python benchmarks/mcp_latency.py [--size 75k] [--calls 200]

The corpus is the one ``benchmarks/search_latency.py`` builds (catalogue, lexical index and one
vector per paper under ``data/bench-search-<size>``, reused when present). One ``python -m app
serve`` answers both sides; the MCP side is the official SDK's client over streamable HTTP (one
connection: the handshake once, then one POST per call), the API side one keep-alive httpx client.
Calls alternate between the two sides, so both see the same load. Page and search caches are off.

What each side does: ``search_papers`` runs the same search as ``/api/search`` and also renders the
search page's markdown; ``get_paper`` reads the same paper as ``/api/papers/<id>`` and also renders
its page's markdown, reads its full-text status and its chunks for the section outline. The target
(issue 14): MCP adds at most 20 % or 10 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from functools import partial
from pathlib import Path

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from mcp import Client  # noqa: E402
from search_latency import build, configure, free_port, percentiles, queries, serve_app  # noqa: E402

from catalog.db import make_engine  # noqa: E402
from indexing.pipeline import load_papers  # noqa: E402


def paper_ids(data_dir: Path, n: int) -> list[str]:
    settings = configure(data_dir)
    engine = make_engine(settings.database_url)
    ids = [p.arxiv_id for p in load_papers(engine)]
    engine.dispose()
    return random.Random(13).sample(ids, n)


async def measure(base: str, texts: list[str], ids: list[str]) -> dict[str, tuple[float, float]]:
    times: dict[str, list[float]] = {k: [] for k in ("api_search", "mcp_search", "api_paper", "mcp_paper")}
    async with httpx.AsyncClient(base_url=base, timeout=60) as http, Client(f"{base}/mcp") as mcp:

        async def api(path: str, params: dict[str, str] | None = None) -> float:
            started = time.perf_counter()
            (await http.get(path, params=params)).raise_for_status()
            return (time.perf_counter() - started) * 1000

        async def tool(name: str, arguments: dict[str, object]) -> float:
            started = time.perf_counter()
            result = await mcp.call_tool(name, arguments)
            elapsed = (time.perf_counter() - started) * 1000
            assert not result.is_error, result.content
            return elapsed

        for text in ["warm up the retrieval stack", "graph neural networks", "language model agents"]:
            await api("/api/search", {"q": text, "size": "10"})
            await tool("search_papers", {"query": text, "size": 10})
        for i, (text, arxiv_id) in enumerate(zip(texts, ids, strict=True)):
            # Alternate which side goes first, so neither always meets a cold cache.
            sides = [
                ("api_search", partial(api, "/api/search", {"q": text, "size": "10"})),
                ("mcp_search", partial(tool, "search_papers", {"query": text, "size": 10})),
                ("api_paper", partial(api, f"/api/papers/{arxiv_id}")),
                ("mcp_paper", partial(tool, "get_paper", {"arxiv_id": arxiv_id})),
            ]
            for name, run in sides if i % 2 == 0 else list(reversed(sides)):
                times[name].append(await run())
    return {name: percentiles(samples) for name, samples in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="75k", choices=["20k", "75k"])
    parser.add_argument("--embed", type=int, default=2000, help="abstracts embedded for real (if built now)")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    data_dir = ROOT / "data" / f"bench-search-{args.size}"
    papers, _ = build(args.size, data_dir, args.embed)
    texts, ids = queries(data_dir, args.calls), paper_ids(data_dir, args.calls)
    configure(data_dir)
    port = free_port()
    env = {
        **os.environ,
        "WOVEPAPER_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "WOVEPAPER_LIMIT_API": "1000000/60",
        "WOVEPAPER_LIMIT_MCP": "1000000/60",
        # No chat model: nothing else runs in the server while it is measured.
        "WOVEPAPER_LOCAL_LLM_ENABLED": "false",
    }
    server = serve_app(env, port)
    try:
        figures = anyio.run(measure, f"http://127.0.0.1:{port}", texts, ids)
    finally:
        server.terminate()
        server.wait(timeout=30)
    row: dict[str, object] = {"corpus": args.size, "papers": papers, "calls": args.calls}
    for name, (p50, p99) in figures.items():
        row[f"{name}_ms"] = {"p50": round(p50, 1), "p99": round(p99, 1)}
    for op in ("search", "paper"):
        api_p50, api_p99 = figures[f"api_{op}"]
        mcp_p50, mcp_p99 = figures[f"mcp_{op}"]
        row[f"{op}_mcp_added_ms"] = {"p50": round(mcp_p50 - api_p50, 1), "p99": round(mcp_p99 - api_p99, 1)}
        row[f"{op}_mcp_ratio"] = {"p50": round(mcp_p50 / api_p50, 2), "p99": round(mcp_p99 / api_p99, 2)}
    row["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
