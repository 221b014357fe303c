"""``python -m ingest …``: every ingestion stage runs alone and exits non-zero on failure."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

import click
from sqlalchemy import Engine

from catalog.db import make_engine, migrate
from ingest import console as out
from ingest import index_commands
from ingest.importer import Importer, Summary
from ingest.records import PaperRecord, RecordError
from ingest.sources import kaggle, listings
from settings import get_settings

Reader = Callable[[Path], Iterable[PaperRecord | RecordError]]


def catalogue() -> Engine:
    settings = get_settings()
    engine = make_engine(settings.database_url, echo=settings.database.database_echo)
    migrate(engine)
    return engine


def import_files(engine: Engine, reader: Reader, paths: Iterable[Path], source: str) -> Summary:
    """Import each file with a progress bar and a printed summary; return the combined summary."""
    total = Summary()
    batch_size = get_settings().ingest.import_batch_size
    for path in paths:
        started = time.perf_counter()
        with out.progress_bar(path.name, out.count_lines(path)) as bar:
            importer = Importer(
                engine,
                source=source,
                batch_size=batch_size,
                on_progress=partial(out.advance, bar),
            )
            summary = importer.run(reader(path))
        out.print_summary(path.name, summary, time.perf_counter() - started)
        total.merge(summary)
    return total


def _exit_for(summary: Summary) -> None:
    if summary.failed:
        out.console.print(f"[red]{summary.failed} record(s) failed[/]; the rest were imported")
        sys.exit(1)


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log every skipped record and SQL batch.")
def cli(verbose: bool) -> None:
    """Harvest and import arXiv metadata into the wovepaper catalogue."""
    logging.basicConfig(level=logging.INFO if verbose else logging.ERROR, format="%(levelname)s %(message)s")


@cli.command("listings")
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
def listings_command(paths: tuple[Path, ...]) -> None:
    """Import daily-listing JSONL(.gz) files (id, title, summary, authors[], categories[] …)."""
    _exit_for(import_files(catalogue(), listings.read, paths, "listings"))


@cli.command("kaggle")
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
def kaggle_command(paths: tuple[Path, ...]) -> None:
    """Import files in the Kaggle arxiv-metadata-oai-snapshot schema."""
    _exit_for(import_files(catalogue(), kaggle.read, paths, "kaggle"))


@cli.command("demo")
@click.option(
    "--started-at", type=float, default=None, help="Epoch seconds `make run` started (to time the first run)."
)
def demo_command(started_at: float | None) -> None:
    """Import the demo corpus: the 20k listings and the 35 PDF papers' metadata (idempotent), then
    queue the 35 PDFs and every abstract for the web app's background indexing."""
    data = get_settings().core.demo_data_dir
    engine = catalogue()
    summary = import_files(engine, listings.read, [data / "arxiv" / "listings-20k.jsonl.gz"], "listings")
    summary.merge(import_files(engine, kaggle.read, [data / "pdfs" / "papers.jsonl"], "kaggle"))
    index_commands.queue_demo(engine, started_at)
    _exit_for(summary)


for _command in index_commands.COMMANDS:  # pdfs, fetch, abstracts, worker, status
    cli.add_command(_command)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
