"""The embedded default end to end: the web app's lifespan runs the worker as a background thread;
the CLI, while the app holds the embedded Chroma, only enqueues; progress shows at
``/api/ingest/status`` and on the home page."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from app.main import create_app
from catalog.db import make_engine, migrate
from indexing.enqueue import enqueue_abstracts, enqueue_pdfs, jobs_for_files, make_queue
from indexing.wiring import index_name, make_embedder
from settings import PROJECT_ROOT, get_settings
from tests.integration.indexing_peers import (
    EmbeddingServer,
    embedding_env,
    embedding_server,
    import_papers,
    paper_text,
    text_pdf,
    write_pdfs,
)


@pytest.fixture
def peer() -> Iterator[EmbeddingServer]:
    with embedding_server() as server:
        yield server


def wait_for(check: Callable[[], Any], timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s")


def test_the_app_indexes_in_the_background_and_reports_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, peer: EmbeddingServer
) -> None:
    values = {
        **embedding_env(peer),
        "WOVEPAPER_WORKER_POLL_SECONDS": "0.1",
        "WOVEPAPER_PAGE_CACHE_SECONDS": "0",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    settings = get_settings()
    engine = make_engine(settings.database_url)
    migrate(engine)
    ids = [f"2406.{n:05d}" for n in range(1, 7)]
    import_papers(engine, ids)
    pdfs = write_pdfs(tmp_path / "pdfs", {f"{i}.pdf": text_pdf([paper_text(i, 16)]) for i in ids[:2]})
    queue = make_queue(settings, engine)
    collection = index_name(settings, make_embedder(settings))
    jobs, _ = jobs_for_files(pdfs[:1])
    enqueue_pdfs(engine, queue, jobs, collection=collection)
    enqueue_abstracts(settings, engine, queue, collection)

    with TestClient(create_app(settings)) as client:
        status = wait_for(lambda: (r := client.get("/api/ingest/status").json())["complete"] and r)
        assert status["papers"] == 6 and status["abstracts_indexed"] == 6
        assert status["full_texts"] == {"queued": 0, "running": 0, "done": 1, "failed": 0}
        assert status["queue"] == "embedded" and status["worker_in_app"] is True
        assert status["collection"] == collection

        # The CLI sees the app holding the embedded Chroma: it enqueues and leaves the work to it.
        env = {**os.environ, **values, "WOVEPAPER_DATA_DIR": str(settings.core.data_dir)}
        cli = subprocess.run(
            [sys.executable, "-m", "indexing", "pdfs", str(pdfs[1])],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert cli.returncode == 0, cli.stderr
        assert "queued 1 PDF job" in cli.stderr and f"process {os.getpid()}" in cli.stderr
        paper = wait_for(
            lambda: (r := client.get(f"/api/ingest/status/{ids[1]}").json())["status"] == "done" and r
        )
        assert paper["chunks"] >= 2 and paper["pages"] == 1 and paper["abstract_indexed"] is True

        # Search (same process) sees the new vectors at once: the reason the worker lives here.
        services = client.app.state.services
        hits = services.store.query(services.embedder.embed([paper_text(ids[1], 2)])[0], k=3)
        assert hits[0].metadata["arxiv_id"] == ids[1]

        assert client.get("/api/ingest/status/2406.99999").status_code == 404
        assert client.get("/api/ingest/status/not-an-id").status_code == 404
        schema = client.get("/openapi.json").json()
        assert {"/api/ingest/status", "/api/ingest/status/{arxiv_id}"} <= set(schema["paths"])

        # The home page shows the progress block while work is pending, and not when all is done.
        assert "Indexing in the background" not in client.get("/").text
        services.worker.stop()  # hold the work back, so the page is seen mid-way
        assert not services.worker.alive
        import_papers(engine, ["2406.00100"])
        enqueue_abstracts(settings, engine, queue, collection)
        home = client.get("/").text
        assert "Indexing in the background" in home and '<progress max="7" value="6">' in home
        markdown = client.get("/", headers={"Accept": "text/markdown"}).text
        assert "abstracts of 6 of 7 papers embedded" in markdown
        # A search that finds nothing says the index is still filling up.
        nothing = client.get("/search", params={"q": "qxzvbnm wplkjh"}).text
        assert "Indexing is still running: 6 of 7 papers searchable so far" in nothing
        nothing_md = client.get(
            "/search", params={"q": "qxzvbnm wplkjh"}, headers={"Accept": "text/markdown"}
        )
        assert "Indexing is still running: 6 of 7 papers" in nothing_md.text
        pending = client.get("/api/ingest/status").json()
        assert (pending["complete"], pending["abstracts_pending"], pending["worker_in_app"]) == (
            False,
            1,
            False,
        )
    engine.dispose()
