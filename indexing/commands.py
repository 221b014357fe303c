"""``python -m indexing …``: full text and embeddings.

- ``pdfs PATH…`` and ``fetch ID…`` enqueue PDFs; ``abstracts`` enqueues the abstract backfill;
  ``demo`` queues the demo's PDFs and abstracts for the web app's background worker;
- ``worker`` works the queue (``--until-empty`` stops when it is drained);
- ``status [ID…]`` prints per-paper status or the overall progress;
- ``reindex-lexical`` rebuilds the BM25 index from the catalogue.

With the embedded queue, a command that enqueued work then runs the worker itself until the queue
drains, unless another process (a running web app) holds the embedded Chroma: then that process
does the work and the command only enqueues. With Redis, commands only enqueue; run ``python -m
indexing worker`` processes to do the work. Exit status is non-zero when a job failed.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from catalog import arxiv_ids
from catalog.indexing import PaperIndexStatus, failures, indexing_progress, paper_status
from indexing.contract import PdfJob
from ingest import console as out
from retrieval.lexical import CORPORA, LexicalError, LexicalIndex
from settings import Settings, get_settings

if TYPE_CHECKING:
    from indexing.enqueue import EnqueueReport
    from indexing.worker import EmbeddedWorker, WorkerStats

# The indexing machinery (Chroma, onnxruntime, the parser) is imported inside the commands, so
# ``status`` and ``--help`` start fast.


def _collection(settings: Settings) -> str:
    from indexing.wiring import index_name, make_embedder

    return index_name(settings, make_embedder(settings))


def _report(report: EnqueueReport) -> None:
    out.console.print(
        f"[bold]queued[/] {report.queued} PDF job(s); {report.already_done} already indexed, "
        f"{report.already_pending} already pending",
        highlight=False,
    )
    if report.unknown:
        shown = ", ".join(Path(u).name for u in report.unknown[:5])
        more = f" and {len(report.unknown) - 5} more" if len(report.unknown) > 5 else ""
        out.console.print(
            f"{len(report.unknown)} file(s) name no paper in the catalogue ({shown}{more}): "
            "their metadata will be read from the PDF",
            highlight=False,
        )


def drain(settings: Settings, engine: Engine) -> WorkerStats | None:
    """Work the embedded queue until it is empty; None when another process holds the store (it
    does the work). With Redis nothing runs here."""
    from indexing.pipeline import Pipeline
    from indexing.wiring import make_embedder, open_store
    from indexing.worker import EmbeddedWorker
    from retrieval.store import StoreLocked

    if settings.redis.redis_url:
        out.console.print("jobs are on the Redis queue: `python -m indexing worker` processes work them")
        return None
    embedder = make_embedder(settings)
    try:
        store = open_store(settings, embedder)
    except StoreLocked as exc:
        out.console.print(f"{exc}\n[bold]The jobs are queued[/]: that process works them.", highlight=False)
        return None
    try:
        return _run_with_bar(settings, engine, EmbeddedWorker(Pipeline(settings, engine, store, embedder)))
    finally:
        store.close()


def _run_with_bar(settings: Settings, engine: Engine, worker: EmbeddedWorker) -> WorkerStats:
    from indexing.queue import EmbeddedQueue

    total = EmbeddedQueue(engine).pending()
    started = time.perf_counter()
    with out.progress_bar("indexing", total) as bar:
        worker.on_job = lambda: out.advance(bar, 1)
        stats = worker.run(until_empty=True)
    seconds = time.perf_counter() - started
    out.console.print(
        f"[bold]indexing[/]: {stats.done} done, {stats.failed} failed, {stats.skipped} skipped, "
        f"{stats.retried} retries in {seconds:.1f} s",
        highlight=False,
    )
    for failure in stats.failures[: out.MAX_ERRORS_SHOWN]:
        out.console.print(f"[red]failed[/] {escape(failure)}", highlight=False)
    return stats


def _exit_for(stats: WorkerStats | None) -> None:
    if stats is not None and stats.failed:
        out.console.print(f"[red]{stats.failed} job(s) failed[/]; see `python -m indexing status`")
        sys.exit(1)


@click.command("pdfs")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--force", is_flag=True, help="Re-index files that are already indexed unchanged.")
@click.option("--no-wait", is_flag=True, help="Only enqueue; do not run the worker here.")
def pdfs_command(paths: tuple[Path, ...], force: bool, no_wait: bool) -> None:
    """Index PDF files (or every PDF under a directory). A file named after its arXiv id
    (``1706.03762v7.pdf``) is matched to the catalogue; otherwise the PDF's stamp names it."""
    from indexing.enqueue import enqueue_pdfs, jobs_for_files, make_queue, pdf_files

    settings = get_settings()
    engine = out.catalogue()
    files = pdf_files(paths)
    if not files:
        raise click.UsageError("no PDF files found")
    queue = make_queue(settings, engine)
    jobs, refused = jobs_for_files(files, force=force)
    for reason in refused:
        out.console.print(f"[yellow]skipped[/] {escape(reason)}", highlight=False)
    _report(enqueue_pdfs(engine, queue, jobs, collection=_collection(settings)))
    if not no_wait:
        _exit_for(drain(settings, engine))
    if refused:
        sys.exit(1)


@click.command("fetch")
@click.argument("ids", nargs=-1, required=True)
@click.option("--force", is_flag=True, help="Fetch and re-index papers that are already indexed.")
@click.option("--no-wait", is_flag=True, help="Only enqueue; do not run the worker here.")
def fetch_command(ids: tuple[str, ...], force: bool, no_wait: bool) -> None:
    """Fetch PDFs from arXiv by id (``2401.01234``, ``2401.01234v2``, ``hep-th/9901001``) and index
    them; at most one request every 3 s."""
    from indexing.enqueue import enqueue_pdfs, make_queue

    jobs = []
    for raw in ids:
        try:
            parsed = arxiv_ids.parse(raw)
        except arxiv_ids.InvalidArxivId as exc:
            raise click.BadParameter(str(exc), param_hint="ID") from exc
        jobs.append(PdfJob(parsed.canonical, version=parsed.version, force=force))
    settings = get_settings()
    engine = out.catalogue()
    queue = make_queue(settings, engine)
    _report(enqueue_pdfs(engine, queue, jobs, collection=_collection(settings)))
    if not no_wait:
        _exit_for(drain(settings, engine))


@click.command("abstracts")
@click.option("--no-wait", is_flag=True, help="Only enqueue; do not run the worker here.")
def abstracts_command(no_wait: bool) -> None:
    """Embed the title + abstract of every catalogue paper not yet in the vector index."""
    from indexing.enqueue import enqueue_abstracts, make_queue

    settings = get_settings()
    engine = out.catalogue()
    added = enqueue_abstracts(settings, engine, make_queue(settings, engine), _collection(settings))
    out.console.print(
        f"[bold]queued[/] {added} abstract job(s) of up to {settings.worker.worker_abstract_batch}"
    )
    if not no_wait:
        _exit_for(drain(settings, engine))


@click.command("worker")
@click.option("--until-empty", is_flag=True, help="Stop when no job is queued, running or waiting to retry.")
def worker_command(until_empty: bool) -> None:
    """Work the job queue: SAQ on Redis when WOVEPAPER_REDIS_URL is set, else the catalogue's
    queue (then this process must be the only one writing the embedded Chroma)."""
    from indexing.pipeline import Pipeline
    from indexing.progress import console_logging
    from indexing.wiring import make_embedder, open_store
    from indexing.worker import EmbeddedWorker, run_saq_worker
    from retrieval.store import StoreError

    settings = get_settings()
    engine = out.catalogue()
    console_logging()
    embedder = make_embedder(settings)
    try:
        store = open_store(settings, embedder)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        if settings.redis.redis_url:
            run_saq_worker(settings, engine, store, embedder, until_empty=until_empty)
            return
        worker = EmbeddedWorker(Pipeline(settings, engine, store, embedder))
        stats = _run_with_bar(settings, engine, worker) if until_empty else worker.run()
    finally:
        store.close()
    _exit_for(stats)


@click.command("status")
@click.argument("ids", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def status_command(ids: tuple[str, ...], as_json: bool) -> None:
    """Per-paper full-text status (queued / running / done / failed: reason), or the overall
    indexing progress and the latest failures when no id is given."""
    from indexing.progress import format_progress

    settings = get_settings()
    engine = out.catalogue()
    collection = _collection(settings)
    with Session(engine) as session:
        if ids:
            wanted = []
            for raw in ids:
                try:
                    wanted.append(arxiv_ids.canonical(raw))
                except arxiv_ids.InvalidArxivId as exc:
                    raise click.BadParameter(str(exc), param_hint="ID") from exc
            rows = paper_status(session, wanted, collection)
            missing = sorted(set(wanted) - {r.arxiv_id for r in rows})
            if as_json:
                click.echo(
                    json.dumps(
                        [_plain(r) for r in rows] + [{"arxiv_id": m, "status": "unknown"} for m in missing]
                    )
                )
            else:
                _table(rows)
                for m in missing:
                    out.console.print(f"{m}: not in the catalogue", highlight=False)
            if missing or any(r.status == "failed" for r in rows):
                sys.exit(1)
            return
        progress = indexing_progress(session, collection)
        failed = failures(session, limit=10)
    pending = _queue_counts(settings, engine)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "papers": progress.papers,
                    "abstracts_indexed": progress.abstracts_indexed,
                    "full_texts": progress.full_texts,
                    "eta_seconds": progress.eta_seconds,
                    "queue": pending,
                    "failures": [_plain(r) for r in failed],
                }
            )
        )
        return
    out.console.print(format_progress(progress), highlight=False)
    out.console.print(
        f"queue ({'redis' if settings.redis.redis_url else 'embedded'}): {pending}", highlight=False
    )
    if failed:
        out.console.print("[bold]latest failures[/]")
        _table(failed)
    if not settings.redis.redis_url:  # jobs that never reached a paper (an unidentifiable file …)
        from indexing.queue import EmbeddedQueue

        known = {f"pdf:{r.arxiv_id}" for r in failed}
        for key, what, error in EmbeddedQueue(engine).failures(limit=10):
            if key not in known:
                out.console.print(f"[red]failed[/] {escape(what)}: {escape(error)}", highlight=False)


def _queue_counts(settings: Settings, engine: Engine) -> dict[str, int]:
    from indexing.enqueue import make_queue

    return make_queue(settings, engine).counts()


def _plain(row: PaperIndexStatus) -> dict[str, object]:
    data = asdict(row)
    if row.updated_at is not None:
        data["updated_at"] = row.updated_at.isoformat()
    return data


def _table(rows: Sequence[PaperIndexStatus]) -> None:
    table = Table("paper", "status", "attempts", "version", "pages", "chunks", "reason", highlight=False)
    for r in rows:
        colour = {"done": "green", "failed": "red", "running": "yellow"}.get(r.status, "")
        table.add_row(
            r.arxiv_id,
            f"[{colour}]{r.status}[/]" if colour else r.status,
            str(r.attempts),
            f"v{r.version}" if r.version else "",
            str(r.pages or ""),
            str(r.chunks or ""),
            r.reason or "",
        )
    out.console.print(table)


@click.command("demo")
@click.option(
    "--started-at", type=float, default=None, help="Epoch seconds `make run` started (to time the first run)."
)
def demo_command(started_at: float | None) -> None:
    """Queue the demo's background work after ``python -m ingest demo`` imported its metadata: the
    35 PDFs first, then every catalogue abstract. Only enqueues: the web app's worker does the work
    after the server is up (a later run skips what is done)."""
    from indexing.enqueue import enqueue_abstracts, enqueue_pdfs, jobs_for_files, make_queue, pdf_files
    from indexing.progress import record_first_run_start

    settings = get_settings()
    engine = out.catalogue()
    if started_at is not None:
        record_first_run_start(settings.core.data_dir, started_at)
    collection = _collection(settings)
    queue = make_queue(settings, engine)
    pdf_dir = settings.core.demo_data_dir / "pdfs" / "arxiv"
    jobs, _refused = jobs_for_files(pdf_files([pdf_dir]))  # the demo files have plain names
    report = enqueue_pdfs(engine, queue, jobs, collection=collection)
    _report(report)
    added = enqueue_abstracts(settings, engine, queue, collection)
    out.console.print(
        f"[bold]queued[/] {added} abstract job(s) of up to {settings.worker.worker_abstract_batch} papers",
        highlight=False,
    )
    if report.queued or added:
        out.console.print(
            "The web app indexes these in the background once it is up: progress on this console "
            "and on the home page; search uses what is indexed so far."
        )


@click.command("reindex-lexical")
def reindex_lexical() -> None:
    """Re-read every paper's title, abstract and authors from the catalogue and rebuild the BM25
    index of papers and of full-text chunks now. Running web processes load the new index by
    themselves; nothing needs a restart."""
    settings = get_settings()
    engine = out.catalogue()
    started = time.perf_counter()
    try:
        index = LexicalIndex.from_settings(settings)
        summary = index.rebuild(engine)
    except LexicalError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.dispose()
    sizes = ", ".join(f"{corpus}: {index.document_count(corpus):,} documents" for corpus in CORPORA)
    out.console.print(
        f"lexical index rebuilt in {time.perf_counter() - started:.1f} s ({sizes}; "
        f"{summary.changed:,} papers changed, {summary.removed:,} removed) at {index.root}"
    )


COMMANDS = [
    pdfs_command,
    fetch_command,
    abstracts_command,
    worker_command,
    status_command,
    demo_command,
    reindex_lexical,
]
