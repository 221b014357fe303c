"""Alembic environment: the engine comes from ``catalog.db.alembic_config`` (or the settings)."""

from __future__ import annotations

from alembic import context

from catalog.models import Base


def _engine():  # type: ignore[no-untyped-def]
    engine = context.config.attributes.get("engine")
    if engine is None:
        from catalog.db import make_engine
        from settings import get_settings

        engine = make_engine(get_settings().database_url)
    return engine


def run_migrations_online() -> None:
    engine = _engine()
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=Base.metadata,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


run_migrations_online()
