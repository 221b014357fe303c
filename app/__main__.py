"""``python -m app serve`` (or the ``wovepaper`` script): migrate, then serve with uvicorn."""

from __future__ import annotations

import click
import uvicorn

from catalog.db import open_catalogue
from settings import UnsafeSettings, check_production, get_settings


@click.group()
def cli() -> None:
    """The wovepaper web app."""


@cli.command()
def serve() -> None:
    """Bring the catalogue schema up to date and serve the app."""
    settings = get_settings()
    try:
        check_production(settings)
    except UnsafeSettings as exc:
        click.echo(f"wovepaper: {exc}", err=True)  # the list, not a traceback
        raise SystemExit(2) from None
    open_catalogue(settings).dispose()
    click.echo(f"wovepaper is serving on {settings.public_url}", err=True)
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=settings.server.host,
        port=settings.server.port,
        workers=settings.server.workers,
        log_level="warning",
        proxy_headers=False,
    )


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
