"""Case 8 over HTTP: a burst from one client spread over two app processes on different ports that
share the real Redis is admitted at most ``limit`` times in total (each refusal a 429 with
``Retry-After``); a spoofed ``X-Forwarded-For`` from a peer that is not a configured proxy buys no
fresh allowance, while behind a configured proxy the header does name the client."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from coordination.redis import Redis
from tests.conftest import REDIS_TEST_URL
from tests.integration.signin_peers import app_processes, burst

pytestmark = [pytest.mark.redis, pytest.mark.slow]

LIMIT = 20


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"test-burst-{uuid.uuid4().hex[:12]}"
    yield name
    client = Redis.from_url(REDIS_TEST_URL)
    for key in client.scan_iter(match=f"{name}*"):
        client.delete(key)
    client.close()


def _env(namespace: str, **extra: str) -> dict[str, str]:
    return {
        "WOVEPAPER_REDIS_URL": REDIS_TEST_URL,
        "WOVEPAPER_WORKER_QUEUE": namespace,
        "WOVEPAPER_LIMIT_API": f"{LIMIT}/120",
        **extra,
    }


def test_a_burst_across_two_processes_is_admitted_at_most_limit_times(tmp_path: Path, namespace: str) -> None:
    with app_processes(tmp_path, 2, _env(namespace)) as urls:
        # Half the requests forge a different X-Forwarded-For each: the peer (127.0.0.1) is no proxy.
        answers = burst(
            urls,
            "/api/papers?size=1",
            120,
            lambda n: {"X-Forwarded-For": f"203.0.113.{n % 250}"} if n % 2 else {},
        )
    statuses = [a.status_code for a in answers]
    accepted = statuses.count(200)
    refused = [a for a in answers if a.status_code == 429]
    assert accepted + len(refused) == len(answers), statuses
    assert accepted <= LIMIT
    assert accepted == LIMIT  # and the limit is reached, not undercut
    assert all(int(a.headers["retry-after"]) >= 1 for a in refused)
    # Both processes took part in the burst (which one admits the allowance is a race), and between
    # them they admitted it once: alone, each would have admitted LIMIT.
    assert {a.url.port for a in answers} == {int(u.rsplit(":", 1)[1]) for u in urls}


def test_behind_a_configured_proxy_the_forwarded_address_is_the_client(
    tmp_path: Path, namespace: str
) -> None:
    env = _env(namespace, WOVEPAPER_TRUSTED_PROXIES='["127.0.0.1"]')
    with app_processes(tmp_path, 2, env) as urls:
        answers = burst(urls, "/api/papers?size=1", 90, lambda n: {"X-Forwarded-For": f"198.51.100.{n % 3}"})
    assert [a.status_code for a in answers].count(200) == 3 * LIMIT  # three clients, one allowance each
