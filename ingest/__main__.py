"""``python -m ingest …``: every ingestion stage runs alone and exits non-zero on failure."""

from __future__ import annotations

import datetime as dt
import logging
import sys
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import NoReturn

import click
from sqlalchemy import Engine

from catalog import arxiv_ids
from ingest import console as out
from ingest.enrich import commands as enrich_commands
from ingest.http import HttpError
from ingest.importer import Importer, Summary
from ingest.records import PaperRecord, RecordError
from ingest.sources import HarvestError, generic, kaggle, listings
from ingest.sources.arxiv_api import ArxivClient, SortBy
from ingest.sources.oai_pmh import Harvest, HarvestState, OaiPmhClient
from settings import get_settings

Reader = Callable[[Path], Iterable[PaperRecord | RecordError]]


def import_records(
    engine: Engine,
    items: Iterable[PaperRecord | RecordError],
    *,
    label: str,
    source: str,
    total: int | None = None,
    batch_size: int | None = None,
) -> Summary:
    """Import records from any source with a progress bar and a printed summary. When the source
    fails part-way, the summary of what was imported is printed before the error propagates."""
    importer = Importer(
        engine, source=source, batch_size=batch_size or get_settings().ingest.import_batch_size
    )
    started = time.perf_counter()
    try:
        with out.progress_bar(label, total) as bar:
            importer.on_progress = partial(out.advance, bar)
            importer.run(items)
    finally:
        out.print_summary(label, importer.summary, time.perf_counter() - started)
    return importer.summary


def import_files(engine: Engine, reader: Reader, paths: Iterable[Path], source: str) -> Summary:
    """Import each file with a progress bar and a printed summary; return the combined summary."""
    total = Summary()
    for path in paths:
        total.merge(
            import_records(engine, reader(path), label=path.name, source=source, total=out.count_lines(path))
        )
    return total


def _harvest_failed(exc: HarvestError | HttpError) -> NoReturn:
    out.console.print(f"[red]harvest stopped:[/] {exc}", highlight=False)
    out.console.print("Records imported before the error are kept; run the command again to continue.")
    sys.exit(1)


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log every skipped record and SQL batch.")
def cli(verbose: bool) -> None:
    """Harvest and import arXiv metadata into the wovepaper catalogue."""
    logging.basicConfig(level=logging.INFO if verbose else logging.ERROR, format="%(levelname)s %(message)s")


def _files_command(name: str, reader: Reader, source: str, help: str) -> None:
    """``python -m ingest <name> PATH…``: import the files ``reader`` reads, as ``source``."""

    @cli.command(name, help=help)
    @click.argument(
        "paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
    )
    def command(paths: tuple[Path, ...]) -> None:
        out.exit_if_failed(import_files(out.catalogue(), reader, paths, source))


# The commands that import files: name, reader, source recorded on the papers, help.
FILE_COMMANDS: tuple[tuple[str, Reader, str, str], ...] = (
    (
        "listings",
        listings.read,
        "listings",
        "Import daily-listing JSONL(.gz) files (id, title, summary, authors[], categories[] …).",
    ),
    ("kaggle", kaggle.read, "kaggle", "Import files in the Kaggle arxiv-metadata-oai-snapshot schema."),
    (
        "papers",
        generic.read,
        "generic",
        "Import papers from anywhere (paper_id, title, year, venue_or_categories, abstract, authors[]).",
    ),
)
for _name, _reader, _source, _help in FILE_COMMANDS:
    _files_command(_name, _reader, _source, _help)


@cli.command("arxiv")
@click.argument("ids", nargs=-1)
@click.option("--query", "-q", "search_query", help="An arXiv API search, e.g. 'cat:cs.CL AND ti:retrieval'.")
@click.option(
    "--max",
    "max_results",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Most records a --query imports.",
)
@out.choice(
    "--sort-by", ["relevance", "lastUpdatedDate", "submittedDate"], "relevance", "Order of --query results."
)
def arxiv_command(ids: tuple[str, ...], search_query: str | None, max_results: int, sort_by: SortBy) -> None:
    """Import papers from the arXiv API by id (1706.03762, hep-th/9901001v2 …) or by --query.

    At most one request to arXiv every WOVEPAPER_ARXIV_INTERVAL_SECONDS (3 s, as arXiv asks), shared
    by every process."""
    if bool(ids) == bool(search_query):
        raise click.UsageError("give arXiv ids or --query (one of them)")
    for raw in ids:
        try:
            arxiv_ids.parse(raw)
        except arxiv_ids.InvalidArxivId as exc:
            raise click.BadParameter(str(exc), param_hint="IDS") from None
    engine = out.catalogue()
    with ArxivClient.from_settings(get_settings()) as client:
        if ids:
            feeds = client.fetch(ids)
            label, total = "arXiv API ids", len(set(ids))
        else:
            assert search_query is not None
            feeds = client.search(search_query, max_results=max_results, sort_by=sort_by)
            label, total = f"arXiv API search {search_query!r}", max_results
        try:
            summary = import_records(
                engine,
                (item for feed in feeds for item in feed.items),
                label=label,
                source="arxiv-api",
                total=total,
                batch_size=client.page_size,
            )
        except (HarvestError, HttpError) as exc:
            _harvest_failed(exc)
    out.exit_if_failed(summary)


@cli.command("oai")
@click.option(
    "--from",
    "from_",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="First datestamp to harvest (default: where the last harvest of this endpoint and set "
    "ended; the first harvest without it takes everything).",
)
@click.option("--until", type=click.DateTime(formats=["%Y-%m-%d"]), help="Last datestamp to harvest.")
@click.option("--set", "set_spec", help="An OAI set, e.g. cs, math or physics:hep-th (default: all).")
def oai_command(from_: dt.datetime | None, until: dt.datetime | None, set_spec: str | None) -> None:
    """Harvest arXiv's OAI-PMH interface (metadataPrefix=arXiv), continuing the last harvest."""
    settings = get_settings()
    engine = out.catalogue()
    state = HarvestState(settings.core.data_dir / "harvest-state.json")
    with OaiPmhClient.from_settings(settings) as client:
        harvest = Harvest(
            client,
            state,
            set_spec=set_spec,
            from_=from_.date() if from_ else None,
            until=until.date() if until else None,
        )
        out.console.print(
            f"OAI-PMH {client.base_url} set {set_spec or '(all)'} from {harvest.from_ or 'the beginning'}"
            + (f" until {harvest.until}" if harvest.until else ""),
            highlight=False,
        )
        try:
            summary = import_records(engine, harvest.records(), label="OAI-PMH", source="oai-pmh")
            next_from = harvest.remember()
        except (HarvestError, HttpError) as exc:
            _harvest_failed(exc)
    if harvest.deleted:
        shown = ", ".join(d.arxiv_id for d in harvest.deleted[:10])
        more = f" and {len(harvest.deleted) - 10} more" if len(harvest.deleted) > 10 else ""
        out.console.print(
            f"{len(harvest.deleted)} record(s) deleted upstream, left in the catalogue: {shown}{more}",
            highlight=False,
        )
    out.console.print(f"The next `python -m ingest oai` continues from {next_from}.", highlight=False)
    out.exit_if_failed(summary)


@cli.command("demo")
def demo_command() -> None:
    """Import the demo corpus: the 20k listings and the 35 PDF papers' metadata and the ROR
    institutions (idempotent). ``python -m indexing demo`` then queues its PDFs and abstracts."""
    data = get_settings().core.demo_data_dir
    engine = out.catalogue()
    summary = import_files(engine, listings.read, [data / "arxiv" / "listings-20k.jsonl.gz"], "listings")
    summary.merge(import_files(engine, kaggle.read, [data / "pdfs" / "papers.jsonl"], "kaggle"))
    papers_changed = bool(summary.added or summary.updated)
    summary.merge(enrich_commands.demo_institutions(engine, data, papers_changed=papers_changed))
    out.exit_if_failed(summary)


for _command in enrich_commands.COMMANDS:  # enrich, ror, affiliations
    cli.add_command(_command)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
