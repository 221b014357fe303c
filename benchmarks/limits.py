"""Accepted/limit of a burst spread over several app processes that share one Redis.

Starts N ``python -m app serve`` processes (own data dirs, one Redis), fires a burst of concurrent
JSON API requests from one client at them round-robin, and prints how many were admitted against
``WOVEPAPER_LIMIT_API``. Litestar's own limiter counts per process (get, then set), so N processes
would admit up to N x the limit; ours is one Lua script in Redis per request.

    .venv/bin/python benchmarks/limits.py    # 2 processes, limit 50, a burst of 200, 3 rounds
    .venv/bin/python benchmarks/limits.py --processes 3 --limit 50 --requests 300
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from coordination.redis import Redis  # noqa: E402
from tests.integration.signin_peers import app_processes, burst  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    namespace = f"bench-limits-{uuid.uuid4().hex[:8]}"
    env = {
        "WOVEPAPER_REDIS_URL": args.redis,
        "WOVEPAPER_WORKER_QUEUE": namespace,
        "WOVEPAPER_LIMIT_API": f"{args.limit}/3600",
    }
    redis = Redis.from_url(args.redis)
    try:
        with tempfile.TemporaryDirectory() as work, app_processes(Path(work), args.processes, env) as urls:
            print(f"{args.processes} processes: {', '.join(urls)}; limit {args.limit}; burst {args.requests}")
            for round_number in range(1, args.rounds + 1):
                for key in redis.scan_iter(match=f"{namespace}:limits:*"):
                    redis.delete(key)  # a fresh window for each round
                started = time.perf_counter()
                answers = burst(urls, "/api/papers?size=1", args.requests)
                took = time.perf_counter() - started
                accepted = sum(a.status_code == 200 for a in answers)
                refused = sum(a.status_code == 429 for a in answers)
                other = len(answers) - accepted - refused
                print(
                    f"round {round_number}: accepted {accepted}, 429 {refused}, other {other}; "
                    f"accepted/limit = {accepted / args.limit:.2f} ({took:.1f} s)"
                )
    finally:
        for key in redis.scan_iter(match=f"{namespace}*"):
            redis.delete(key)
        redis.close()


if __name__ == "__main__":
    main()
