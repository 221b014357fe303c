"""Overload over real HTTP (uvicorn on loopback): searches run with bounded concurrency and the
excess is shed at once with 503 + ``Retry-After``; while every search slot is taken, ``/healthz``,
pages and ``/readyz`` still answer. No clocks: the searches are held by an event the test releases
(the real search service behind a fake that waits, put in through ``services.search``)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.admission import WorkGate
from app.main import create_app
from catalog.db import make_engine, migrate
from ingest.importer import Importer
from ingest.sources import listings
from retrieval.search import SearchRequest, SearchResults, SearchService
from settings import get_settings
from tests.integration.browse_catalogue import served


class HeldSearch:
    """The real search service, but every search waits until the test releases it."""

    def __init__(self, real: SearchService) -> None:
        self.real = real
        self.release = threading.Event()
        self.started = threading.Semaphore(0)

    def validate(self, request: SearchRequest) -> SearchRequest:
        return self.real.validate(request)

    def search(self, request: SearchRequest) -> SearchResults:
        self.started.release()
        assert self.release.wait(timeout=120), "the test never released the held searches"
        return self.real.search(request)

    def close(self) -> None:
        self.real.close()


@dataclass
class Site:
    base: str
    held: HeldSearch
    gate: WorkGate


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    rows = [
        {
            "id": f"2401.{i:05d}",
            "title": f"Sparse attention, part {i}",
            "summary": "Attention that is sparse.",
            "authors": ["Ada Lovelace"],
            "categories": ["cs.LG"],
            "_listing_file": f"2024-01-{i:02d}",
        }
        for i in range(1, 20)
    ]
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("WOVEPAPER_WORKER_EMBEDDED", "false")
    monkeypatch.setenv("WOVEPAPER_SEARCH_CONCURRENCY", "2")
    monkeypatch.setenv("WOVEPAPER_SEARCH_QUEUE", "1")
    monkeypatch.setenv("WOVEPAPER_PAGE_CACHE_SECONDS", "0")  # pages are built in threads too
    get_settings.cache_clear()
    settings = get_settings()
    engine = make_engine(settings.database_url)
    migrate(engine)
    Importer(engine, source="listings").run(listings.read(path))
    engine.dispose()
    app = create_app(settings)
    with served(settings, app=app) as base:
        services: Any = app.state.services
        held = HeldSearch(services.search)
        services.search = held
        yield Site(base, held, services.search_gate)
        held.release.set()


def test_searches_beyond_the_slots_and_queue_are_shed_and_the_rest_answer(site: Site) -> None:
    with httpx.Client(base_url=site.base, timeout=60) as http, ThreadPoolExecutor(8) as pool:
        running: list[Future[httpx.Response]] = [
            pool.submit(http.get, "/api/search", params={"q": "sparse attention"}) for _ in range(2)
        ]
        for _ in range(2):  # both slots are taken (the searches are inside the service)
            assert site.held.started.acquire(timeout=60)
        running.append(pool.submit(http.get, "/search", params={"q": "attention"}))  # the one queued
        while site.gate.limiter.statistics().tasks_waiting < 1:  # it has reached the gate's queue
            assert not running[-1].done(), running[-1].result().text
            time.sleep(0.01)
        shed = [http.get("/api/search", params={"q": "sparse"}) for _ in range(3)]
        assert [a.status_code for a in shed] == [503, 503, 503]
        for answer in shed:
            assert answer.headers["retry-after"] == "1"
            assert "try again in 1 s" in answer.json()["detail"]
            assert "content-security-policy" in answer.headers

        # Every search slot is held: liveness, readiness and pages still answer.
        assert http.get("/healthz").json() == {"status": "ok"}
        assert http.get("/readyz").json()["status"] == "ready"
        page = http.get("/papers")
        assert page.status_code == 200 and "Sparse attention, part 19" in page.text
        assert not any(f.done() for f in running)

        site.held.release.set()
        answers = [f.result(timeout=120) for f in running]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert answers[0].json()["query"] == "sparse attention" and "Search: attention" in answers[2].text


def test_the_gate_counts_what_it_sheds() -> None:
    import anyio

    gate = WorkGate("tasks", concurrency=1, queue=0)
    release = threading.Event()

    async def scenario() -> list[object]:
        outcomes: list[object] = []

        async def one() -> None:
            try:
                outcomes.append(await gate.run(release.wait, 60))
            except Exception as exc:  # the gate's refusal
                outcomes.append(type(exc).__name__)

        async with anyio.create_task_group() as group:
            group.start_soon(one)
            while gate.limiter.statistics().borrowed_tokens < 1:
                await anyio.sleep(0)
            group.start_soon(one)
            group.start_soon(one)
            while len(outcomes) < 2:
                await anyio.sleep(0)
            release.set()
        return outcomes

    outcomes = anyio.run(scenario)
    assert sorted(map(str, outcomes)) == ["Overloaded", "Overloaded", "True"]
    assert gate.shed == 2
