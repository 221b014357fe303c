"""``python -m catalog upgrade`` applies migrations; ``revision -m MSG`` autogenerates one."""

from __future__ import annotations

import click
from alembic import command

from catalog.db import alembic_config, make_engine, open_catalogue
from settings import get_settings


@click.group()
def cli() -> None:
    """Catalogue schema management."""


@cli.command()
def upgrade() -> None:
    """Apply every pending migration to the configured database."""
    open_catalogue(get_settings())
    click.echo("catalogue schema is up to date")


@cli.command()
@click.option("-m", "--message", required=True)
def revision(message: str) -> None:
    """Autogenerate a migration from the models (review it before committing)."""
    engine = make_engine(get_settings().database_url)
    command.revision(alembic_config(engine), message=message, autogenerate=True)


if __name__ == "__main__":
    cli()
