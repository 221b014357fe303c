"""``python -m ingest enrich | ror | affiliations``, and the demo's institutions step."""

from __future__ import annotations

import sys
import time
from functools import partial
from pathlib import Path

import click
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from catalog import arxiv_ids as arxiv_ids_module
from catalog.enrichment import OPENALEX, SEMANTIC_SCHOLAR
from catalog.models import Institution, Paper
from coordination.pacing import pacer
from ingest import console as out
from ingest.enrich.affiliations import AffiliationMatcher, LazyMatcher
from ingest.enrich.institutions import import_ror
from ingest.enrich.openalex import OpenAlexClient
from ingest.enrich.ror import read_dump
from ingest.enrich.semanticscholar import SemanticScholarClient
from ingest.enrich.stages import AffiliationSummary, Enricher, StageSummary, match_affiliations
from ingest.importer import Summary
from settings import get_settings

ROR_DEMO_FILE = Path("enrichment") / "ror" / "ror_v2_records_from_ror-records_releases.jsonl"


def _matcher(engine: Engine) -> AffiliationMatcher | None:
    """The affiliation index of the catalogue's institutions (None when there are none yet)."""
    with Session(engine) as session:
        if not session.execute(select(func.count()).select_from(Institution)).scalar_one():
            return None
    threshold = get_settings().enrichment.affiliation_match_threshold
    with engine.connect() as conn:
        return AffiliationMatcher.from_catalogue(conn, threshold=threshold)


def _print_stage(summary: StageSummary, seconds: float) -> None:
    for error in summary.errors[: out.MAX_ERRORS_SHOWN]:
        out.console.print(f"[yellow]failed[/] {error}", highlight=False)
    out.console.print(f"[bold]{summary.label}[/]: {summary} in {seconds:.1f} s", highlight=False)


@click.command("enrich")
@out.choice("--source", ["openalex", "semanticscholar", "all"], "all", "Which source to ask.")
@out.choice(
    "--only",
    ["papers", "researchers", "all"],
    "all",
    "Papers (citations, authorships, affiliations), researchers (profiles), or both.",
)
@click.option("--limit", type=click.IntRange(min=1), help="At most this many papers / researchers per stage.")
@click.option(
    "--refresh-days",
    type=click.IntRange(min=0),
    help="Ask again about records older than this (default: WOVEPAPER_ENRICHMENT_REFRESH_DAYS; 0: all).",
)
@click.option("--arxiv-id", "arxiv_ids", multiple=True, help="Only this paper (repeatable; always asked).")
def enrich_command(
    source: str, only: str, limit: int | None, refresh_days: int | None, arxiv_ids: tuple[str, ...]
) -> None:
    """Enrich papers and researchers from OpenAlex and Semantic Scholar (incremental, idempotent).

    Papers first (citation counts, author positions, identities, affiliations), then the profiles of
    the researchers those gave ids to (h-index, citations, works total, ORCID, institutions)."""
    everything = get_settings()
    settings = everything.enrichment
    try:
        wanted = tuple(dict.fromkeys(arxiv_ids_module.canonical(i) for i in arxiv_ids))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--arxiv-id") from exc
    engine = out.catalogue()
    if wanted:
        with Session(engine) as session:
            held = set(session.execute(select(Paper.arxiv_id).where(Paper.arxiv_id.in_(wanted))).scalars())
        for missing in (i for i in wanted if i not in held):
            out.console.print(
                f"[yellow]{missing} is not in the catalogue[/]: import it first", highlight=False
            )
    sources = [OPENALEX, SEMANTIC_SCHOLAR] if source == "all" else [source]
    enricher = Enricher(
        engine,
        openalex=OpenAlexClient(settings, pacer(everything)) if OPENALEX in sources else None,
        semanticscholar=(
            SemanticScholarClient(settings, pacer(everything)) if SEMANTIC_SCHOLAR in sources else None
        ),
        matcher=LazyMatcher(partial(_matcher, engine)),
        refresh_days=settings.enrichment_refresh_days if refresh_days is None else refresh_days,
    )
    failed = 0
    stages = [("papers", s) for s in sources if only in ("papers", "all")]
    stages += [("researchers", s) for s in sources if only in ("researchers", "all")]
    for what, name in stages:
        if what == "papers":
            ids = enricher.due_papers(name, limit=limit, arxiv_ids=wanted)
        else:
            ids = enricher.due_researchers(name, limit=limit)
        started = time.perf_counter()
        with out.progress_bar(f"{what} from {name}", len(ids)) as bar:
            run = enricher.papers if what == "papers" else enricher.researchers
            summary = run(name, ids, partial(out.advance, bar))
        _print_stage(summary, time.perf_counter() - started)
        failed += summary.failed
    for client in (enricher.openalex, enricher.semanticscholar):
        if client is not None:
            client.close()
    if failed:
        out.console.print(f"[red]{failed} lookup(s) failed[/]; they are asked again on the next run")
        sys.exit(1)


def _print_affiliations(summary: AffiliationSummary, seconds: float) -> None:
    out.console.print(f"[bold]printed affiliations[/]: {summary} in {seconds:.1f} s", highlight=False)


def import_ror_file(engine: Engine, path: Path) -> Summary:
    started = time.perf_counter()
    with out.progress_bar(path.name, out.count_lines(path)) as bar:
        summary = import_ror(engine, read_dump(path), on_progress=partial(out.advance, bar))
    out.print_summary(path.name, summary, time.perf_counter() - started)
    return summary


def match_printed(engine: Engine, *, rematch: bool = False) -> AffiliationSummary | None:
    started = time.perf_counter()
    matcher = _matcher(engine)
    if matcher is None:
        out.console.print("No institutions yet: run `python -m ingest ror FILE` first.")
        return None
    summary = match_affiliations(engine, matcher, rematch=rematch)
    _print_affiliations(summary, time.perf_counter() - started)
    return summary


@click.command("ror")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--no-match", is_flag=True, help="Do not match printed affiliations afterwards.")
def ror_command(path: Path, no_match: bool) -> None:
    """Import ROR v2 records (a JSONL(.gz) dump, one record a line) as institutions, then match the
    printed affiliations still without an institution."""
    engine = out.catalogue()
    summary = import_ror_file(engine, path)
    if not no_match:
        match_printed(engine, rematch=bool(summary.added or summary.updated))
    out.exit_if_failed(summary)


@click.command("affiliations")
@click.option(
    "--rematch", is_flag=True, help="Match every printed affiliation again, not only the unmatched."
)
def affiliations_command(rematch: bool) -> None:
    """Match printed affiliations (PDF headers, Kaggle metadata) to institutions."""
    match_printed(out.catalogue(), rematch=rematch)


def demo_institutions(engine: Engine, data: Path, *, papers_changed: bool) -> Summary:
    """The demo's step: import the bundled ROR records and match the 35 papers' printed affiliations.
    The bundled file never changes, so once the catalogue holds as many ROR institutions as it has
    lines the import is skipped (a second `make run` starts in seconds); `ingest ror` refreshes."""
    path = data / ROR_DEMO_FILE
    if not path.exists():
        out.console.print(f"[yellow]no ROR records at {path}[/]: institutions skipped", highlight=False)
        return Summary()
    with Session(engine) as session:
        held = session.execute(select(func.count()).where(Institution.ror_id.is_not(None))).scalar_one()
    lines = out.count_lines(path)
    if held >= lines:
        out.console.print(f"{path.name}: {held} ROR institutions already imported", highlight=False)
        summary = Summary(unchanged=lines)
    else:
        summary = import_ror_file(engine, path)
    if papers_changed or summary.added or summary.updated:
        match_printed(engine, rematch=bool(summary.updated))
    return summary


COMMANDS = (enrich_command, ror_command, affiliations_command)
