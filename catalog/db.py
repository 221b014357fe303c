"""Engines, sessions and migrations for the catalogue (SQLite by default, PostgreSQL when configured)."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, overload

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from settings import Settings

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def make_engine(url: str, *, echo: bool = False) -> Engine:
    """An engine tuned for its backend; SQLite gets WAL and a busy timeout so readers never see
    "database is locked" while the worker writes."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, echo=echo, connect_args={"timeout": 30, "check_same_thread": False}, pool_size=20
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    return create_engine(url, echo=echo, pool_pre_ping=True, pool_size=10, max_overflow=20)


def _sqlite_pragmas(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
    # We emit BEGIN ourselves (below), so pysqlite's own implicit transactions are switched off.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA cache_size=-65536")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    """``BEGIN DEFERRED`` by default; writers that read-then-write (id allocation, queue claims) ask
    for ``execution_options(sqlite_begin="IMMEDIATE")`` to take the write lock up front, which
    avoids SQLITE_BUSY_SNAPSHOT when another writer commits in between."""
    mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
    conn.exec_driver_sql(f"BEGIN {mode}")


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(engine: Engine) -> Iterator[Session]:
    """A short write transaction: commit on success, roll back on any error.

    On SQLite it takes the write lock up front (``BEGIN IMMEDIATE``): a deferred transaction that
    reads and then writes fails at once with "database is locked" (SQLITE_BUSY_SNAPSHOT, which no
    busy timeout waits out) when another process commits in between."""
    bind = engine.execution_options(sqlite_begin="IMMEDIATE")
    with Session(bind, expire_on_commit=False) as session, session.begin():
        yield session


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration (idempotent; cheap when already there)."""
    command.upgrade(alembic_config(engine), "head")


def open_catalogue(settings: Settings) -> Engine:
    """The configured catalogue, migrated: what every command-line stage opens first."""
    engine = make_engine(settings.database_url, echo=settings.database.database_echo)
    migrate(engine)
    return engine


def is_migrated(engine: Engine) -> bool:
    return inspect(engine).has_table("papers")


@contextmanager
def recorded_statements(engine: Engine) -> Iterator[list[str]]:
    """The SQL statements ``engine`` runs inside the block, in order (for cost checks and benchmarks)."""
    seen: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def as_date(value: dt.datetime | dt.date | str | None) -> dt.date | None:
    """A date read back from either backend: SQLite returns ``max()`` of a datetime column as text."""
    if value is None:
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    return value.date() if isinstance(value, dt.datetime) else value


@overload
def as_utc(value: dt.datetime) -> dt.datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """A time read back from either backend, with its zone: SQLite returns the UTC the catalogue
    wrote without one."""
    return value.replace(tzinfo=dt.UTC) if value is not None and value.tzinfo is None else value
