"""What every command of ``python -m ingest`` and ``python -m indexing`` shares: the catalogue it
opens, progress bars and summaries on the terminal (rich), the exit status when records failed."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from sqlalchemy import Engine

from catalog.db import open_catalogue
from ingest.importer import Summary
from ingest.sources import open_text
from settings import get_settings

console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])
MAX_ERRORS_SHOWN = 50


def choice(flag: str, choices: Sequence[str], default: str, help: str) -> Callable[[F], F]:
    """An option that takes one of ``choices`` (shown with its default in ``--help``)."""
    return click.option(flag, type=click.Choice(list(choices)), default=default, show_default=True, help=help)


def catalogue() -> Engine:
    """The configured catalogue, migrated: what a command opens first."""
    return open_catalogue(get_settings())


@contextmanager
def progress_bar(description: str, total: int | None) -> Iterator[Progress]:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        progress.add_task(description, total=total)
        yield progress


def advance(progress: Progress, n: int) -> None:
    progress.advance(progress.task_ids[0], n)


def count_lines(path: Path) -> int:
    """A quick total for the progress bar (JSONL: one record a line)."""
    with open_text(path) as handle:
        return sum(1 for _ in handle)


def print_summary(label: str, summary: Summary, seconds: float) -> None:
    rate = summary.seen / seconds if seconds > 0 else 0.0
    for error in summary.errors[:MAX_ERRORS_SHOWN]:
        console.print(f"[yellow]skipped[/] {error}", markup=True, highlight=False)
    if len(summary.errors) > MAX_ERRORS_SHOWN:
        console.print(f"[yellow]… and {len(summary.errors) - MAX_ERRORS_SHOWN} more skipped records[/]")
    console.print(f"[bold]{label}[/]: {summary} in {seconds:.1f} s ({rate:,.0f} records/s)", highlight=False)


def exit_if_failed(summary: Summary) -> None:
    """Exit non-zero, saying how many, when any record failed (the others are imported)."""
    if summary.failed:
        console.print(f"[red]{summary.failed} record(s) failed[/]; the rest were imported")
        sys.exit(1)
