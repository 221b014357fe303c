"""The first app: the home page lists the newest papers, /papers pages them, /healthz reads the catalogue."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar.testing import TestClient
from sqlalchemy import Engine

from app.main import create_app
from ingest.importer import Importer
from ingest.sources import listings
from settings import get_settings


@pytest.fixture
def client(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    rows = [
        {
            "id": f"2401.{i:05d}",
            "title": f"Paper <b>{i}</b>",
            "summary": "s",
            "authors": ["Ada Lovelace"],
            "categories": ["cs.LG"],
            "_listing_file": f"2024-01-{i:02d}",
        }
        for i in range(1, 30)
    ]
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    Importer(engine, source="listings").run(listings.read(path))
    monkeypatch.setenv("WOVEPAPER_DATABASE_URL", engine.url.render_as_string(hide_password=False))
    get_settings.cache_clear()
    with TestClient(create_app()) as client:
        yield client


def test_home_lists_newest_first(client: TestClient) -> None:
    first = client.get("/")
    assert first.status_code == 200
    assert first.headers["content-type"].startswith("text/html")
    body = first.text
    assert "29 papers" in body
    assert body.index("Paper &lt;b&gt;29&lt;/b&gt;") < body.index("Paper &lt;b&gt;28&lt;/b&gt;")
    assert "<b>29</b>" not in body  # titles are escaped
    assert 'href="/papers?page=2"' in body  # the full list continues on /papers


def test_papers_list_paginates(client: TestClient) -> None:
    second = client.get("/papers?page=2")
    assert "Paper &lt;b&gt;5&lt;/b&gt;" in second.text and "Paper &lt;b&gt;29&lt;/b&gt;" not in second.text


def test_bad_page_is_a_client_error(client: TestClient) -> None:
    assert client.get("/papers?page=0").status_code == 400
    assert client.get("/papers?page=abc").status_code == 400


def test_healthz_says_alive_without_the_catalogue(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_reports_each_dependency(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ready"
    checks = {c["name"]: c for c in body["checks"]}
    assert list(checks) == ["catalogue", "vector index", "redis", "llm"]
    assert checks["catalogue"]["ok"] and checks["catalogue"]["detail"] == "29 papers"
    assert checks["vector index"]["ok"] and checks["vector index"]["required"]
    assert checks["redis"] == {
        "name": "redis",
        "ok": True,
        "required": False,
        "detail": "not configured (queue, caches and limits are in-process)",
        "took_ms": checks["redis"]["took_ms"],
    }
    # No LLM in this test (the embedded one is off in `test`): reported, and optional.
    assert not checks["llm"]["ok"] and not checks["llm"]["required"]
    assert "the embedded one is off" in checks["llm"]["detail"]
