"""Mixed load on loopback: cached pages, searches and ``/healthz`` together, at 8, 32 and 64
concurrent clients, with the background indexing idle and then running.

    .venv/bin/python benchmarks/overload.py [--levels 8,32,64] [--seconds 20] [--embed 500]
        [--search-in threads,processes,processes-nice0] [--pages-only] [--clients-nice 10]

The corpus is the 20k demo listings built by ``benchmarks/search_latency.py`` (catalogue, lexical
index, one vector per paper; only ``--embed`` abstracts embedded for real, the rest reuse them with
noise), copied to a scratch directory per level. The app is ``python -m app serve`` (one uvicorn
worker, default settings: page cache on, search concurrency one per core, queue 4), started afresh
for each level and each search path of ``--search-in``: ``threads`` (of the web process) or
``processes`` (of their own, ``WOVEPAPER_SEARCH_PROCESSES``, niced as the settings say) or
``processes-nice0`` (the same at the web process's priority); with several, the paths alternate and
their order flips from one level to the next, so they share the machine's moods. At N concurrent
clients, half of them ask for pages from a fixed set of 40 (warmed before each level, so cached)
through ``wrk`` (C, so the load generator costs little CPU; Debian: ``apt-get install wrk``), half
run searches with queries not asked before in this run (Python, asyncio), and a separate process
asks ``/healthz`` every 50 ms (its latency is the server's, not a busy client's).
"Indexing running": the app's embedded worker embeds the catalogue's abstracts for a new collection
while the load runs (``python -m indexing abstracts`` enqueues them; the app's worker does the work).

Printed per phase and level: pages p50/p99, search p50/p99 (answered searches only), ``/healthz``
p99 and max, counts of 200s, deliberate 503s and anything else, the load average before and
after (the machine is shared: read the figures with it), and where the web process's event loop
thread spent the level (Linux schedstat): on a CPU, and runnable but waiting for one (the machine's
cores, not the GIL: a thread waiting for the GIL sleeps). ``--pages-only`` leaves the search clients
out (half the clients still ask for pages): the floor that searches add to.
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
import threading
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


@dataclass(frozen=True)
class Clients:
    """How the load is generated: ``pages_only`` leaves the search clients out; ``niceness`` runs
    ``wrk`` and the search clients at a lower priority than the app, as clients on other machines
    would be (the probe of ``/healthz`` keeps the app's priority: its latency is the figure)."""

    pages_only: bool = False
    niceness: int = 0


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


def start_app(data_dir: Path, port: int, worker: bool, search_in: str = "threads") -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WOVEPAPER_")}
    env.update(
        {
            "WOVEPAPER_DATA_DIR": str(data_dir),
            "WOVEPAPER_ENVIRONMENT": "test",
            "WOVEPAPER_WORKER_EMBEDDED": "true" if worker else "false",
            "WOVEPAPER_SEARCH_PROCESSES": "false" if search_in == "threads" else "true",
            # Every client is one loopback address: the per-address API limit (a 429 long before
            # the server is loaded) is not what this measures.
            "WOVEPAPER_LIMIT_API": "100000000/60",
        }
    )
    if search_in == "processes-nice0":  # the search processes at the web process's own priority
        env["WOVEPAPER_SEARCH_PROCESS_NICENESS"] = "0"
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
    base: str, connections: int, seconds: float, paths: list[str], folder: Path, niceness: int = 0
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
        *(["nice", "-n", str(niceness)] if niceness else []),
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


def search_clients(
    base: str, clients: int, seconds: float, texts: QueryPool, tally: Tally, niceness: int
) -> None:
    """The search clients in a thread of their own, which Linux lets lower alone (niceness is per thread)."""
    if niceness:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
    asyncio.run(searches(base, clients, seconds, texts, tally))


def loop_thread(pid: int) -> tuple[float, float]:
    """Seconds the process's main (event loop) thread has run on a CPU, and waited runnable for one."""
    try:
        ran, waited, _ = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
    except OSError:  # not Linux
        return 0.0, 0.0
    return int(ran) / 1e9, int(waited) / 1e9


def run_level(
    base: str,
    clients: int,
    seconds: float,
    paths: list[str],
    texts: QueryPool,
    folder: Path,
    load: Clients,
) -> Tally:
    tally = Tally()
    searchers = max(1, clients // 2)
    results: Queue[list[float] | str] = get_context("spawn").Queue()
    prober = get_context("spawn").Process(target=probe_health, args=(base, seconds, results))
    prober.start()
    with ThreadPoolExecutor(1) as pool:
        pages = pool.submit(wrk_pages, base, clients - searchers, seconds, paths, folder, load.niceness)
        if load.pages_only:
            time.sleep(seconds)
        else:
            with ThreadPoolExecutor(1) as clients_thread:
                clients_thread.submit(
                    search_clients, base, searchers, seconds, texts, tally, load.niceness
                ).result()
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
    phase: str,
    clients: int,
    search_in: str,
    tally: Tally,
    load_before: float,
    load_after: float,
    repeated: int,
) -> dict[str, object]:
    return {
        "phase": phase,
        "clients": clients,
        "search_in": search_in,
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


def run_app_level(
    source: Path,
    phase: str,
    worker: bool,
    clients: int,
    search_in: str,
    seconds: float,
    texts: QueryPool,
    load: Clients,
) -> dict[str, object]:
    """One level against a fresh app on a fresh copy of the corpus (with its indexing queued)."""
    with tempfile.TemporaryDirectory(prefix="bench-overload-") as scratch:
        data_dir = Path(scratch) / "data"
        shutil.copytree(source, data_dir)
        port = free_port()
        server = start_app(data_dir, port, worker, search_in)
        try:
            base = f"http://127.0.0.1:{port}"
            if worker:
                enqueue_abstracts(data_dir)
            pages = page_paths(base)
            # The clients start only once the app answers (it may be busy with the indexing just
            # queued) and the search processes, if any, have warmed up.
            wait_until_answering(base, server, 120)
            wait_until_searching(base, 120)
            warm(base, pages)
            before = os.getloadavg()[0]
            repeated = texts.repeated
            ran, waited, started = *loop_thread(server.pid), time.monotonic()
            tally = run_level(base, clients, seconds, pages, texts, Path(scratch), load)
            ran_after, waited_after = loop_thread(server.pid)
            wall = time.monotonic() - started
            row = report(
                phase, clients, search_in, tally, before, os.getloadavg()[0], texts.repeated - repeated
            )
            row["loop_thread"] = {
                "on_cpu": round((ran_after - ran) / wall, 2),
                "waiting_for_cpu": round((waited_after - waited) / wall, 2),
            }
            if worker:
                answer = httpx.get(f"{base}/api/ingest/status", timeout=60)
                status = answer.json() if answer.status_code == 200 else {}
                row["indexed_by_the_end"] = status.get("abstracts_indexed", f"status {answer.status_code}")
            return row
        finally:
            server.terminate()
            server.wait(timeout=60)


def wait_until_searching(base: str, seconds: float) -> None:
    """Until a search answers (the first one loads the indexes, or waits for the search processes)."""
    deadline = time.monotonic() + seconds
    with httpx.Client(base_url=base, timeout=seconds) as client:
        while client.get("/api/search", params={"q": "warm up the search"}).status_code != 200:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the app at {base} does not answer searches")
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--levels", default="8,32,64")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--embed", type=int, default=500, help="abstracts embedded for real when building")
    parser.add_argument(
        "--search-in",
        default="threads,processes",
        help="search paths to compare: threads, processes, processes-nice0 (not niced)",
    )
    parser.add_argument("--indexing", default="idle,running", help="phases: idle, running")
    parser.add_argument("--pages-only", action="store_true", help="no search clients")
    parser.add_argument(
        "--clients-nice",
        type=int,
        default=0,
        help="niceness of wrk and the search clients (as if on other machines; 0: the app's priority)",
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("overload.py needs wrk, the HTTP load generator (Debian: apt-get install wrk)")
    levels = [int(n) for n in args.levels.split(",")]
    paths = args.search_in.split(",")
    source = ROOT / "data" / "bench-search-20k"
    build("20k", source, args.embed)
    # Unseen queries for about 6 levels of 20 s per path; a longer run repeats some (counted).
    texts = QueryPool(queries(source, 12000))
    load = Clients(args.pages_only, args.clients_nice)
    rows = []
    phases = [(f"indexing {phase}", phase == "running") for phase in args.indexing.split(",")]
    for phase, worker in phases:
        for n, clients in enumerate(levels):
            for search_in in paths if n % 2 == 0 else paths[::-1]:
                row = run_app_level(source, phase, worker, clients, search_in, args.seconds, texts, load)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print(
        "phase             clients search in       pages p50/p99  search p50/p99  healthz p99/max"
        "  503  errors  loop cpu/wait  load avg"
    )
    for r in rows:
        p, q, h, errors, loop = r["pages_ms"], r["search_ms"], r["healthz_ms"], r["errors"], r["loop_thread"]
        assert isinstance(p, dict) and isinstance(q, dict) and isinstance(h, dict)
        assert isinstance(errors, dict) and isinstance(loop, dict)
        print(
            f"{r['phase']:<17} {r['clients']!s:>7} {r['search_in']!s:<15} {p['p50']!s:>6}/{p['p99']!s:<6}"
            f" {q['p50']!s:>7}/{q['p99']!s:<7} {h['p99']!s:>7}/{h['max']!s:<7}"
            f" {r['shed_503']!s:>4} {sum(errors.values()) + int(p.get('non_2xx', 0)):>7}"
            f"  {loop['on_cpu']:>5.0%}/{loop['waiting_for_cpu']:<5.0%}  {r['load_average']}"
        )


if __name__ == "__main__":
    main()
