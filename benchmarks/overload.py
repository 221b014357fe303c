"""Mixed load on loopback: cached pages, searches and ``/healthz`` together, at 8, 32 and 64
concurrent clients, with the background indexing idle and then running.

    .venv/bin/python benchmarks/overload.py [--levels 8,32,64] [--seconds 20] [--embed 500]

The corpus is the 20k demo listings built by ``benchmarks/search_latency.py`` (catalogue, lexical
index, one vector per paper; only ``--embed`` abstracts embedded for real, the rest reuse them with
noise), copied to a scratch directory per run. The app is ``python -m app serve`` (one uvicorn
worker, default settings: page cache on, search concurrency one per core, queue 4). At N concurrent
clients, half of them ask for pages from a fixed set of 40 (warmed before each level, so cached)
through ``wrk`` (C, so the load generator costs little CPU; Debian: ``apt-get install wrk``), half
run searches with queries not asked before in this run (Python, asyncio), and a separate process
asks ``/healthz`` every 50 ms (its latency is the server's, not a busy client's).
"Indexing running": the app's embedded worker embeds the catalogue's abstracts for a new collection
while the load runs (``python -m indexing abstracts`` enqueues them; the app's worker does the work).

Printed per phase and level: pages p50/p99, search p50/p99 (answered searches only), ``/healthz``
p99 and max, counts of 200s, deliberate 503s and anything else, and the load average before and
after (the machine is shared: read the figures with it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import Queue, get_context
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from search_latency import build, free_port, queries, serve_app, wait_until_answering  # noqa: E402

WRK_LATENCY = re.compile(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", re.M)
UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


@dataclass
class Tally:
    pages: dict[str, float] = field(default_factory=dict)  # wrk's p50 / p99 in ms, and requests
    searches: list[float] = field(default_factory=list)
    health: list[float] = field(default_factory=list)
    ok: int = 0
    shed: int = 0
    other: dict[str, int] = field(default_factory=dict)


class QueryPool:
    """Search queries not asked before in this run, for as long as there are any; then the same
    ones again, counted (a repeated query may be answered from a cache: read the figures with it)."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.next = 0
        self.repeated = 0

    def take(self) -> str:
        if self.next >= len(self.texts):
            self.repeated += 1
        text = self.texts[self.next % len(self.texts)]
        self.next += 1
        return text


def pct(samples: list[float], q: float) -> float | None:
    if not samples:
        return None
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 1)


def start_app(data_dir: Path, port: int, worker: bool) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WOVEPAPER_")}
    env.update(
        {
            "WOVEPAPER_DATA_DIR": str(data_dir),
            "WOVEPAPER_ENVIRONMENT": "test",
            "WOVEPAPER_WORKER_EMBEDDED": "true" if worker else "false",
            # Every client is one loopback address: the per-address API limit (a 429 long before
            # the server is loaded) is not what this measures.
            "WOVEPAPER_LIMIT_API": "100000000/60",
        }
    )
    return serve_app(env, port)


def enqueue_abstracts(data_dir: Path) -> None:
    """Queue every abstract for embedding (the running app's worker picks them up)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WOVEPAPER_")}
    env.update({"WOVEPAPER_DATA_DIR": str(data_dir), "WOVEPAPER_ENVIRONMENT": "test"})
    subprocess.run(
        [sys.executable, "-m", "indexing", "abstracts"], cwd=ROOT, env=env, check=True, capture_output=True
    )


def page_paths(base: str) -> list[str]:
    with httpx.Client(base_url=base, timeout=60) as client:
        items = client.get("/api/papers", params={"size": 30}).json()["items"]
    paths = ["/" + item["url"].split("://", 1)[1].split("/", 1)[1] for item in items]
    return [*paths, "/", "/papers", "/about", "/researchers", "/institutions"] + [
        f"/papers?page={n}" for n in range(2, 7)
    ]


def warm(base: str, paths: list[str]) -> None:
    """Render every page once, so the level runs within the page cache's 30 s."""
    with httpx.Client(base_url=base, timeout=60) as client:
        for path in paths:
            client.get(path).raise_for_status()


def probe_health(base: str, seconds: float, out: Queue[list[float] | str]) -> None:
    """``/healthz`` every 50 ms on one keep-alive connection, in its own process; latencies in ms."""
    samples: list[float] = []
    stop = time.monotonic() + seconds
    with httpx.Client(base_url=base, timeout=60) as http:
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                status: int | str = http.get("/healthz").status_code
            except httpx.HTTPError as exc:  # counted, not fatal: the figures say what happened
                status = type(exc).__name__
            if status == 200:
                samples.append((time.perf_counter() - started) * 1000)
            else:
                out.put(f"healthz {status}")
            time.sleep(0.05)
    out.put(samples)


def wrk_pages(
    base: str, connections: int, seconds: float, paths: list[str], folder: Path
) -> dict[str, object]:
    """``wrk`` over the pages in turn; its p50/p99, request count and anything not 2xx/3xx."""
    script = folder / "pages.lua"
    listed = ", ".join(json.dumps(p) for p in paths)
    script.write_text(
        f"paths = {{{listed}}}\ni = 0\n"
        "request = function()\n  i = i % #paths + 1\n  return wrk.format('GET', paths[i])\nend\n"
    )
    threads = min(2, connections)
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{seconds:g}s",
        "--latency",
        "-s",
        str(script),
        base,
    ]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    found = {q: float(v) * UNITS[unit] for q, v, unit in WRK_LATENCY.findall(output)}
    requests = re.search(r"(\d+) requests in", output)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = re.search(r"Socket errors: (.*)", output)
    return {
        "p50": round(found["50"], 1),
        "p99": round(found["99"], 1),
        "n": int(requests.group(1)) if requests else 0,
        "non_2xx": int(bad.group(1)) if bad else 0,
        "socket_errors": errors.group(1) if errors else "",
    }


async def searches(base: str, clients: int, seconds: float, texts: QueryPool, tally: Tally) -> None:
    stop = time.monotonic() + seconds
    # Below uvicorn's 5 s keep-alive timeout, so the client never reuses a connection being closed.
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients, keepalive_expiry=4)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:

        async def client() -> None:
            while time.monotonic() < stop:
                started = time.perf_counter()
                try:
                    response = await http.get("/api/search", params={"q": texts.take()})
                    status: int | str = response.status_code
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                if status == 200:
                    tally.searches.append((time.perf_counter() - started) * 1000)
                elif status == 503:
                    tally.shed += 1
                else:
                    tally.other[str(status)] = tally.other.get(str(status), 0) + 1

        await asyncio.gather(*(client() for _ in range(clients)))


def run_level(
    base: str, clients: int, seconds: float, paths: list[str], texts: QueryPool, folder: Path
) -> Tally:
    tally = Tally()
    searchers = max(1, clients // 2)
    results: Queue[list[float] | str] = get_context("spawn").Queue()
    prober = get_context("spawn").Process(target=probe_health, args=(base, seconds, results))
    prober.start()
    with ThreadPoolExecutor(1) as pool:
        pages = pool.submit(wrk_pages, base, clients - searchers, seconds, paths, folder)
        asyncio.run(searches(base, searchers, seconds, texts, tally))
        tally.pages = pages.result()  # type: ignore[assignment]
    prober.join(timeout=120)
    while not results.empty():
        found = results.get()
        if isinstance(found, str):
            tally.other[found] = tally.other.get(found, 0) + 1
        else:
            tally.health = found
    return tally


def report(
    phase: str, clients: int, tally: Tally, load_before: float, load_after: float, repeated: int
) -> dict[str, object]:
    return {
        "phase": phase,
        "clients": clients,
        "pages_ms": tally.pages,
        "search_ms": {
            "p50": pct(tally.searches, 0.5),
            "p99": pct(tally.searches, 0.99),
            "n": len(tally.searches),
        },
        "healthz_ms": {"p99": pct(tally.health, 0.99), "max": pct(tally.health, 1.0), "n": len(tally.health)},
        "shed_503": tally.shed,
        "repeated_queries": repeated,
        "errors": tally.other,
        "load_average": [round(load_before, 2), round(load_after, 2)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--levels", default="8,32,64")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--embed", type=int, default=500, help="abstracts embedded for real when building")
    args = parser.parse_args()
    levels = [int(n) for n in args.levels.split(",")]
    source = ROOT / "data" / "bench-search-20k"
    build("20k", source, args.embed)
    # Enough unseen queries for the default run (6 levels of 20 s); a longer one repeats some.
    texts = QueryPool(queries(source, 12000))
    rows = []
    for phase, worker in (("indexing idle", False), ("indexing running", True)):
        with tempfile.TemporaryDirectory(prefix="bench-overload-") as scratch:
            data_dir = Path(scratch) / "data"
            shutil.copytree(source, data_dir)
            port = free_port()
            server = start_app(data_dir, port, worker)
            try:
                base = f"http://127.0.0.1:{port}"
                if worker:
                    enqueue_abstracts(data_dir)
                pages = page_paths(base)
                for clients in levels:
                    # Every client starts only once the app answers (it may still be busy after
                    # the level before, or with the indexing just queued).
                    wait_until_answering(base, server, 120)
                    warm(base, pages)
                    before = os.getloadavg()[0]
                    repeated = texts.repeated
                    tally = run_level(base, clients, args.seconds, pages, texts, Path(scratch))
                    row = report(phase, clients, tally, before, os.getloadavg()[0], texts.repeated - repeated)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                if worker:
                    answer = httpx.get(f"{base}/api/ingest/status", timeout=60)
                    status = answer.json() if answer.status_code == 200 else {}
                    indexed = status.get("abstracts_indexed", f"status {answer.status_code}")
                    print(json.dumps({"indexed_during_the_run": indexed}), flush=True)
            finally:
                server.terminate()
                server.wait(timeout=60)
    print()
    print("phase             clients  pages p50/p99  search p50/p99  healthz p99/max  503  errors  load avg")
    for r in rows:
        p, q, h, errors = r["pages_ms"], r["search_ms"], r["healthz_ms"], r["errors"]
        assert (
            isinstance(p, dict) and isinstance(q, dict) and isinstance(h, dict) and isinstance(errors, dict)
        )
        print(
            f"{r['phase']:<17} {r['clients']!s:>7}  {p['p50']!s:>6}/{p['p99']!s:<6}"
            f" {q['p50']!s:>7}/{q['p99']!s:<7} {h['p99']!s:>7}/{h['max']!s:<7}"
            f" {r['shed_503']!s:>4} {sum(errors.values()) + int(p.get('non_2xx', 0)):>7}  {r['load_average']}"
        )


if __name__ == "__main__":
    main()
