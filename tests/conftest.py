"""Shared fixtures. Servers that run on this machine are used for real: PostgreSQL and Redis must be
reachable (``make test`` starts them); a test that needs one fails, never skips, when it is not."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text

from catalog.db import make_engine, migrate
from settings import SHARED_DATA, get_settings

POSTGRES_ADMIN_URL = os.environ.get(
    "WOVEPAPER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
REDIS_TEST_URL = os.environ.get("WOVEPAPER_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
# Searches run in threads of the app under test unless a test asks for processes: spawning and
# warming a pool of search processes for every app a test starts costs minutes of the suite. The
# processes (the default) have their own tests, and the cluster behind nginx and the signed-in
# fuzz run them.
SEARCH_PROCESSES_IN_TESTS = "false"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    assert SHARED_DATA.is_dir(), f"the shared data folder is missing: {SHARED_DATA}"
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test gets its own data dir and fresh settings; nothing leaks into ./data."""
    for name in [k for k in os.environ if k.startswith("WOVEPAPER_") and not k.startswith("WOVEPAPER_TEST_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("WOVEPAPER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WOVEPAPER_ENVIRONMENT", "test")
    monkeypatch.setenv("WOVEPAPER_SEARCH_PROCESSES", SEARCH_PROCESSES_IN_TESTS)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database on the machine's server, dropped afterwards."""
    name = f"wovepaper_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A migrated, empty catalogue on each backend: the same tests run on SQLite and PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'catalogue.sqlite3'}"
    else:
        url = request.getfixturevalue("postgres_url")
    engine = make_engine(url)
    migrate(engine)
    try:
        yield engine
    finally:
        engine.dispose()


async def drop_saq_queue(name: str) -> None:
    """Delete one test's SAQ keys (its own queue name), never anything else on the shared Redis."""
    from redis.asyncio import Redis

    redis = Redis.from_url(REDIS_TEST_URL)
    try:
        keys = [key async for key in redis.scan_iter(match=f"saq:*{name}*")]
        if keys:
            await redis.delete(*keys)
    finally:
        await redis.aclose()


@contextmanager
def running_chroma(folder: Path) -> Iterator[tuple[tuple[str, int], subprocess.Popen[bytes]]]:
    """A real ``chroma run`` server on a free loopback port: ((host, port), its process). It ships
    in the chromadb wheel; a server that does not come up fails the tests using it."""
    from retrieval.store import wait_for_server

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    chroma = Path(sys.executable).with_name("chroma")
    log = (folder / "server.log").open("wb")
    process = subprocess.Popen(
        [str(chroma), "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_server("127.0.0.1", port, timeout=60)
        yield ("127.0.0.1", port), process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """One ``chroma run`` server for the whole session: (host, port)."""
    with running_chroma(tmp_path_factory.mktemp("chroma-server")) as (address, _process):
        yield address
