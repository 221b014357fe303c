"""arXiv's one-request-per-interval rule across processes, on the production path.

Two separate ``python -m ingest arxiv`` processes (the real command, settings from the environment,
the real pacer) import different papers from one loopback server that records when each request
arrives. The server holds the first request until both processes have asked something, so the two
really run at the same time; then the gap between any two consecutive arrivals must be at least the
interval: with Redis (each process has its own data dir, so only Redis can pace them) and with the
file fallback (one data dir, nothing else shared).

Also here: the Redis pacer itself, against the real Redis.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from coordination.pacing import PacingUnavailable, RedisPacer
from coordination.redis import Redis
from settings import PROJECT_ROOT
from tests.conftest import REDIS_TEST_URL
from tests.integration.loopback_http import LoopbackServer, Reply, Request, serve

INTERVAL = 1.0
# The slots are exactly one interval apart; what the server measures adds each client's wake-up
# latency (a sleeper that wakes late sends a little late) and the server's own scheduling. On this
# shared machine under a load of 30 that was up to 30 ms (gaps of 0.47-0.54 s for 0.5 s).
ALLOWANCE = 0.1
GROUPS = {  # each process imports its own papers, one per request (page size 1)
    "a": ["1707.08567", "astro-ph/0601001", "2104.12255v1"],
    "b": ["1605.08386", "quant-ph/0201082v1"],
}
GROUP_OF = {i: group for group, ids in GROUPS.items() for i in ids}


@pytest.fixture(scope="module")
def recorded(shared_data: Path) -> dict[str, bytes]:
    """arXiv's recorded answers to single-id lookups, by id."""
    found: dict[str, bytes] = {}
    for path in sorted((shared_data / "arxiv" / "api-fixtures").glob("*.json")):
        data = json.loads(path.read_text())
        ids = dict(parse_qsl(urlsplit(data["url"]).query, keep_blank_values=True)).get("id_list", "")
        if ids and "," not in ids and data["status_code"] == 200:
            found[ids] = data["body"].encode("latin-1")  # see test_arxiv_api: the bytes arXiv sent
    assert all(i in found for group in GROUPS.values() for i in group)
    return found


@pytest.fixture
def arxiv(recorded: dict[str, bytes]) -> Iterator[LoopbackServer]:
    both_asked = threading.Event()
    groups_seen: set[str] = set()
    lock = threading.Lock()

    def answer(request: Request) -> Reply:
        wanted = request.query.get("id_list", "")
        with lock:
            groups_seen.add(GROUP_OF.get(wanted, "?"))
            if set(GROUPS) <= groups_seen:
                both_asked.set()
        both_asked.wait(timeout=120)  # hold the first answer until the other process asks too
        body = recorded.get(wanted)
        if body is None:
            return Reply(404, b"no recording for this request")
        return Reply(200, body, {"Content-Type": "application/atom+xml; charset=utf-8"})

    with serve(answer) as server:
        yield server


def _import_in_two_processes(server: LoopbackServer, envs: dict[str, dict[str, str]]) -> None:
    processes = []
    for group, ids in GROUPS.items():
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("WOVEPAPER_")},
            "WOVEPAPER_ENVIRONMENT": "test",
            "WOVEPAPER_ARXIV_API_URL": server.url + "/api/query",
            "WOVEPAPER_ARXIV_INTERVAL_SECONDS": str(INTERVAL),
            "WOVEPAPER_ARXIV_PAGE_SIZE": "1",
            "WOVEPAPER_ARXIV_RETRIES": "0",  # any failure shows at once, and no request is repeated
            "WOVEPAPER_ARXIV_TIMEOUT_SECONDS": "150",  # the first request is held (see the server)
            **envs[group],
        }
        processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "ingest", "arxiv", *ids],
                cwd=PROJECT_ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    outputs = [process.communicate(timeout=300)[0] for process in processes]
    for group, process, output in zip(GROUPS, processes, outputs, strict=True):
        assert process.returncode == 0, outputs
        added = len(GROUPS[group])
        assert f"{added} added, 0 updated, 0 unchanged, 0 failed" in output, outputs


def _assert_paced(server: LoopbackServer) -> None:
    arrivals = sorted(server.requests, key=lambda r: r.arrived)
    assert len(arrivals) == len(GROUP_OF)
    groups = [GROUP_OF[r.query["id_list"]] for r in arrivals]
    assert set(groups[:2]) == set(GROUPS), groups  # both processes were running at the same time
    gaps = [b.arrived - a.arrived for a, b in itertools.pairwise(arrivals)]
    assert min(gaps) >= INTERVAL - ALLOWANCE, gaps


def test_two_processes_keep_the_interval_through_redis(arxiv: LoopbackServer, tmp_path: Path) -> None:
    envs = {
        group: {
            "WOVEPAPER_REDIS_URL": REDIS_TEST_URL,
            "WOVEPAPER_DATA_DIR": str(tmp_path / group),  # nothing shared on disk
        }
        for group in GROUPS
    }
    _import_in_two_processes(arxiv, envs)
    _assert_paced(arxiv)
    assert not any((tmp_path / group / "pacing").exists() for group in GROUPS)  # Redis did it


def test_two_processes_keep_the_interval_through_the_data_dir(arxiv: LoopbackServer, tmp_path: Path) -> None:
    envs = {
        group: {
            "WOVEPAPER_DATA_DIR": str(tmp_path / "data"),  # one deployment on one machine
            "WOVEPAPER_DATABASE_URL": f"sqlite:///{tmp_path / group}.sqlite3",
        }
        for group in GROUPS
    }
    _import_in_two_processes(arxiv, envs)
    _assert_paced(arxiv)
    assert (tmp_path / "data" / "pacing" / "arxiv").is_file()


# -- the Redis pacer ----------------------------------------------------------------------------


@pytest.fixture
def redis_pacer() -> Iterator[RedisPacer]:
    client = Redis.from_url(REDIS_TEST_URL)
    prefix = f"wovepaper-test:{uuid.uuid4().hex[:12]}:pace:"
    yield RedisPacer(client, prefix=prefix)
    for key in client.scan_iter(match=prefix + "*"):
        client.delete(key)
    client.close()


def test_redis_slots_are_one_interval_apart_and_expire(redis_pacer: RedisPacer) -> None:
    waits = [redis_pacer.reserve("arxiv", 3.0) for _ in range(4)]
    # Redis's clock moves on a little between the calls; each wait is its slot minus that.
    for n, wait in enumerate(waits):
        assert n * 3.0 - 0.5 < wait <= n * 3.0, waits
    assert redis_pacer.reserve("api.openalex.org", 0.125) == 0.0  # another key: its own slots
    client = Redis.from_url(REDIS_TEST_URL)
    ttl = client.pttl(redis_pacer.prefix + "arxiv")
    assert 11_000 < ttl <= 13_000  # gone a second after its last slot has passed
    client.close()


def test_redis_slots_are_never_shared_between_threads(redis_pacer: RedisPacer) -> None:
    slots: list[float] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(10):
            wait = redis_pacer.reserve("arxiv", 60.0)
            with lock:
                slots.append(wait)

    threads = [threading.Thread(target=take) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    slots.sort()
    # 50 distinct slots, each 60 s after the one before (less the time the calls took).
    assert all(59.0 < b - a < 61.0 for a, b in itertools.pairwise(slots)), slots


def test_an_unreachable_redis_is_a_clear_error() -> None:
    pacer = RedisPacer(Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1))
    with pytest.raises(PacingUnavailable, match="cannot reserve a request slot on Redis"):
        pacer.reserve("arxiv", 3.0)
