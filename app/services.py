"""Long-lived clients, owned by the app's lifespan and handed to handlers by dependency injection.

Handlers never build clients: they ask for ``db`` (a request-scoped catalogue session) or
``services`` (everything long-lived).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import NamedDependency
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from catalog.db import make_engine, session_factory
from settings import Settings


@dataclass
class Services:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]

    @classmethod
    def open(cls, settings: Settings) -> Services:
        engine = make_engine(settings.database_url, echo=settings.database.database_echo)
        return cls(settings=settings, engine=engine, sessions=session_factory(engine))

    def close(self) -> None:
        self.engine.dispose()


def lifespan(settings: Settings):  # type: ignore[no-untyped-def]
    @asynccontextmanager
    async def _lifespan(app: Litestar) -> AsyncIterator[None]:
        services = Services.open(settings)
        app.state.services = services
        try:
            yield
        finally:
            services.close()

    return _lifespan


def provide_services(state: State) -> Services:
    services: Services = state.services
    return services


def provide_db(state: State) -> Iterator[Session]:
    """A read-mostly session per request, closed when the response is sent."""
    services: Services = state.services
    with services.sessions() as session:
        yield session


# What handlers declare: ``db: DB`` and ``services: AppServices``.
DB = NamedDependency[Session]
AppServices = NamedDependency[Services]
