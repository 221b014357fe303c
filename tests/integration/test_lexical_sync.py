"""The lexical index follows the catalogue from exactly one process: the indexing worker's sync,
elected by a lock, never the web processes (N replicas must not mean N writers)."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient
from sqlalchemy import Engine

from app.main import create_app
from ingest.importer import Importer
from ingest.records import PaperRecord, Version
from retrieval.lexical import CatalogueSync, LexicalIndex
from settings import get_settings
from tests.integration.indexing_peers import EmbeddingServer, embedding_env, embedding_server


def record(arxiv_id: str, title: str) -> PaperRecord:
    return PaperRecord(
        arxiv_id=arxiv_id,
        title=title,
        abstract="An abstract.",
        authors=("Ada Lovelace",),
        categories=("cs.DS",),
        versions=(Version(1),),
    )


def wait_for(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s")


def test_one_sync_leads_and_another_takes_over(engine: Engine, tmp_path: Path) -> None:
    Importer(engine, source="test").run([record("2402.00001", "Suffix arrays in practice")])
    first = CatalogueSync(LexicalIndex(tmp_path / "lexical"), engine, interval=0.1).start()
    wait_for(lambda: first.last is not None)
    second = CatalogueSync(
        LexicalIndex(tmp_path / "lexical", refresh_seconds=0), engine, interval=0.1
    ).start()
    try:
        time.sleep(0.5)  # several of its rounds: it must stay a follower while the first leads
        assert first.leading and not second.leading and second.last is None

        first.stop()  # the leader goes away (a worker stopping or dying): the lock is released
        Importer(engine, source="test").run([record("2402.00002", "Wavelet trees")])
        wait_for(lambda: second.leading and second.last is not None and second.last.changed)
        assert [h.arxiv_id for h in second.index.search("papers", "wavelet", k=3)] == ["2402.00002"]
    finally:
        first.stop()
        second.stop()


@pytest.fixture
def peer() -> Any:
    with embedding_server() as server:
        yield server


def _lock_is_free(root: Path) -> bool:
    """Whether another process could take the sync role now (the lock file a syncer holds)."""
    fd = os.open(root / "catalogue-sync.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # releases the probe's own lock, if it got one


def test_the_web_app_syncs_only_through_its_embedded_worker(
    monkeypatch: pytest.MonkeyPatch, peer: EmbeddingServer
) -> None:
    """With the embedded worker off (scaled out: workers run elsewhere) the web process holds no
    sync role; with it on (the embedded default) its worker thread is the one syncing process."""
    for name, value in {**embedding_env(peer), "WOVEPAPER_WORKER_EMBEDDED": "false"}.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    settings = get_settings()
    root = settings.core.data_dir / "lexical"
    with TestClient(create_app(settings)):
        time.sleep(0.5)
        assert _lock_is_free(root)

    monkeypatch.setenv("WOVEPAPER_WORKER_EMBEDDED", "true")
    get_settings.cache_clear()
    settings = get_settings()
    with TestClient(create_app(settings)):
        wait_for(lambda: not _lock_is_free(root))
    assert _lock_is_free(root)  # the app stopped: its worker let go
