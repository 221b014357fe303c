"""Paper-page throughput and latency with ``wrk`` on loopback, against a bare Litestar JSON endpoint
served the same way in the same run.

Both servers are uvicorn, one worker, on loopback; wrk runs 2 threads and 64 connections. The paper
page run rotates over the canonical URLs of the newest papers (a Lua script), so it measures the
page as visitors hit it (the in-process page cache warm after the first round); a second run with
the cache off (``WOVEPAPER_PAGE_CACHE_SECONDS=0``) shows the cost of the queries and rendering.

    .venv/bin/python benchmarks/pages.py                 # the demo catalogue (imported first if missing)
    .venv/bin/python benchmarks/pages.py --seconds 20 --urls 2000

Targets (issue 5): the paper page at >= 40% of the bare endpoint's requests/s, p99 < 50 ms at 64
connections. Needs ``wrk``: ``scripts/ensure-wrk.sh`` installs it (Debian package) when missing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from sqlalchemy import select  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from catalog.db import is_migrated, make_engine  # noqa: E402
from catalog.models import Paper  # noqa: E402
from catalog.urls import paper_path  # noqa: E402
from settings import get_settings  # noqa: E402

PYTHON = sys.executable
BARE_APP = """
from litestar import Litestar, get

@get("/bare")
async def bare() -> dict[str, str]:
    return {"status": "ok"}

app = Litestar([bare], openapi_config=None)
"""
TARGET_RATIO = 0.40
TARGET_P99_MS = 50.0


@dataclass
class Run:
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    non_2xx: int
    errors: int


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait(url: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status < 500:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)


def _uvicorn(target: list[str], port: int, env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    command = [PYTHON, "-m", "uvicorn", *target, "--host", "127.0.0.1", "--port", str(port)]
    command += ["--workers", "1", "--log-level", "warning", "--no-access-log"]
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL)


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=20)


def _settle(pid: int, limit: float = 180) -> None:
    """Wait until the server is idle: the app's background start-up work (e.g. building the lexical
    index) would otherwise be measured too."""
    process = psutil.Process(pid)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and process.cpu_percent(interval=2.0) > 5:
        pass


def _millis(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def _wrk(url: str, seconds: int, connections: int, script: Path | None) -> Run:
    command = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "5s"]
    if script:
        command += ["-s", str(script)]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    latency: dict[str, float] = {}
    for pct, value, unit in re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s)\s*$", out, flags=re.M):
        latency[pct] = _millis(value, unit)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    non_2xx = int(m.group(1)) if (m := re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)) else 0
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    return Run(rps, latency["50"], latency["99"], non_2xx, errors)


def _rotation_script(paths: list[str], directory: Path) -> Path:
    script = directory / "rotate.lua"
    listed = ",\n".join(f'  "{p}"' for p in paths)
    script.write_text(
        f"local paths = {{\n{listed}\n}}\nlocal i = 0\n"
        'request = function()\n  i = (i % #paths) + 1\n  return wrk.format("GET", paths[i])\nend\n'
    )
    return script


def _paper_paths(limit: int) -> list[str]:
    engine = make_engine(get_settings().database_url)
    with Session(engine) as session:
        rows = session.execute(
            select(Paper.arxiv_id, Paper.title)
            .order_by(Paper.activity_on.desc(), Paper.id.desc())
            .limit(limit)
        ).all()
    engine.dispose()
    return [paper_path(arxiv_id, title) for arxiv_id, title in rows]


def _show(name: str, run: Run) -> None:
    print(
        f"  {name:<34} {run.requests_per_second:>9,.0f} req/s   p50 {run.p50_ms:6.2f} ms   "
        f"p99 {run.p99_ms:6.2f} ms   non-2xx {run.non_2xx}   socket errors {run.errors}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=int, default=15, help="length of each wrk run")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--urls", type=int, default=1000, help="distinct paper pages to rotate over")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is missing: installing it (scripts/ensure-wrk.sh) …", flush=True)
        subprocess.run([str(PROJECT_ROOT / "scripts" / "ensure-wrk.sh")], check=True)

    settings = get_settings()
    engine = make_engine(settings.database_url)
    if not is_migrated(engine):
        print("importing the demo catalogue first (python -m ingest demo) …", flush=True)
        subprocess.run([PYTHON, "-m", "ingest", "demo"], cwd=PROJECT_ROOT, check=True)
    engine.dispose()
    paths = _paper_paths(args.urls)
    if not paths:
        sys.exit("the catalogue has no papers")

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # The pages are measured alone: no background indexing competing for the two cores, and a
        # Chroma directory of its own (a running `make run` keeps the default one locked).
        env = {
            **os.environ,
            "WOVEPAPER_WORKER_EMBEDDED": "false",
            "WOVEPAPER_CHROMA_PATH": str(work / "chroma"),
        }
        (work / "bare_app.py").write_text(BARE_APP)
        script = _rotation_script(paths, work)
        results: dict[str, Run] = {}
        plans = [
            ("bare Litestar JSON endpoint", ["bare_app:app"], {}, "/bare", None),
            ("paper page (cache on, rotating)", ["app.main:create_app", "--factory"], {}, None, script),
            ("paper page (one URL)", ["app.main:create_app", "--factory"], {}, paths[0], None),
            (
                "paper page (cache off, rotating)",
                ["app.main:create_app", "--factory"],
                {"WOVEPAPER_PAGE_CACHE_SECONDS": "0"},
                None,
                script,
            ),
        ]
        print(
            f"wrk -t2 -c{args.connections} -d{args.seconds}s on loopback; {len(paths):,} distinct paper "
            f"pages; catalogue {settings.database_url.split('://', 1)[0]}",
            flush=True,
        )
        for name, target, extra, path, lua in plans:
            port = _free_port()
            cwd = work if target[0].startswith("bare_app") else PROJECT_ROOT
            server = _uvicorn(target, port, {**env, **extra, "PYTHONPATH": f"{work}:{PROJECT_ROOT}"}, cwd)
            try:
                base = f"http://127.0.0.1:{port}"
                _wait(base + (path or paths[0]))
                _settle(server.pid)
                _wrk(base + (path or "/"), 5, args.connections, lua)  # warm-up (and fill the cache)
                results[name] = run = _wrk(base + (path or "/"), args.seconds, args.connections, lua)
                _show(name, run)
            finally:
                _stop(server)

    bare = results["bare Litestar JSON endpoint"].requests_per_second
    page = results["paper page (cache on, rotating)"]
    ratio = page.requests_per_second / bare
    print(
        f"paper page / bare endpoint: {ratio:.0%} (target >= {TARGET_RATIO:.0%}); "
        f"paper page p99 {page.p99_ms:.1f} ms (target < {TARGET_P99_MS:.0f} ms)"
    )
    cold = results["paper page (cache off, rotating)"]
    print(f"cache off: {cold.requests_per_second / bare:.0%} of the bare endpoint, p99 {cold.p99_ms:.1f} ms")
    one, five, fifteen = os.getloadavg()
    print(f"load average at the end: {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
