"""Typed settings, one class per concern, all read from ``WOVEPAPER_*`` environment variables.

Every field is documented by its ``description``; ``tests/unit/test_docs.py`` fails when a field is
missing from the README's configuration table. Read settings through :func:`get_settings` (cached);
tests call ``get_settings.cache_clear()`` after changing the environment.
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


class _Section(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WOVEPAPER_", extra="ignore", frozen=True)


class CoreSettings(_Section):
    environment: Literal["development", "production", "test"] = Field(
        "development", description="`development` enables debug views; `production` refuses unsafe defaults."
    )
    data_dir: Path = Field(
        PROJECT_ROOT / "data",
        description="Where the embedded database, Chroma index, lexical index and models live.",
    )
    demo_data_dir: Path = Field(
        SHARED_DATA, description="The shared real-data folder the demo corpus is ingested from."
    )


class DatabaseSettings(_Section):
    database_url: str = Field(
        "",
        description="SQLAlchemy URL of the catalogue. Empty: SQLite at `<data_dir>/catalogue.sqlite3`. "
        "PostgreSQL: `postgresql+psycopg://user@host/db`.",
    )
    database_echo: bool = Field(False, description="Log every SQL statement (debugging).")


class ServerSettings(_Section):
    host: str = Field("127.0.0.1", description="Interface the web app listens on.")
    port: int = Field(8000, description="Port the web app listens on.")
    public_url: str = Field(
        "",
        description="Absolute base URL used in canonical links, sitemaps and feeds. Empty: `http://<host>:<port>`.",
    )
    workers: int = Field(1, ge=1, description="Web worker processes started by `python -m app serve`.")
    page_size: int = Field(24, ge=1, le=200, description="Items per page on list pages.")


class RedisSettings(_Section):
    redis_url: str = Field(
        "",
        description="Redis URL (`redis://127.0.0.1:6379/0`). Empty: in-process queue, caches and limits "
        "(single process only).",
    )


class IngestSettings(_Section):
    import_batch_size: int = Field(1000, ge=1, description="Records written per catalogue transaction.")


class Settings:
    """All sections together; each is built on first use so a bad value fails where it is read."""

    @cached_property
    def core(self) -> CoreSettings:
        return CoreSettings()

    @cached_property
    def database(self) -> DatabaseSettings:
        return DatabaseSettings()

    @cached_property
    def server(self) -> ServerSettings:
        return ServerSettings()

    @cached_property
    def redis(self) -> RedisSettings:
        return RedisSettings()

    @cached_property
    def ingest(self) -> IngestSettings:
        return IngestSettings()

    @property
    def database_url(self) -> str:
        if self.database.database_url:
            return self.database.database_url
        return f"sqlite:///{self.core.data_dir / 'catalogue.sqlite3'}"

    @property
    def public_url(self) -> str:
        return (self.server.public_url or f"http://{self.server.host}:{self.server.port}").rstrip("/")


SECTIONS: tuple[type[_Section], ...] = (
    CoreSettings,
    DatabaseSettings,
    ServerSettings,
    RedisSettings,
    IngestSettings,
)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
