"""Indexing progress on the console: counts, rate and ETA while the worker is busy, a summary when
the queue drains, and how long the first ``make run`` took to index everything."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from catalog.indexing import IndexingProgress, indexing_progress
from settings import log_to_console

log = logging.getLogger(__name__)

FIRST_RUN_FILE = "first-run.json"


class ProgressReporter:
    """Log lines with counts, rate and ETA while the worker is busy, and a summary when the queue
    drains (including, once, how long the first ``make run`` took to index everything)."""

    def __init__(self, engine: Engine, collection: str, data_dir: Path, *, every: float = 15.0) -> None:
        self.engine = engine
        self.collection = collection
        self.data_dir = data_dir
        self.every = every
        self._last = 0.0
        self._busy_since: float | None = None
        self._jobs = 0

    def progress(self) -> IndexingProgress:
        with Session(self.engine) as session:
            return indexing_progress(session, self.collection)

    def job_done(self) -> None:
        if self._busy_since is None:
            self._busy_since = time.monotonic()
        self._jobs += 1
        if time.monotonic() - self._last >= self.every:
            self._last = time.monotonic()
            log.info(format_progress(self.progress()))

    def drained(self) -> None:
        if self._busy_since is None:
            return
        took = time.monotonic() - self._busy_since
        log.info(
            "queue drained: %d jobs in %s — %s", self._jobs, _duration(took), format_progress(self.progress())
        )
        first = finish_first_run(self.data_dir)
        if first is not None:
            log.info("first run: everything indexed %s after `make run` started", _duration(first))
        self._busy_since = None
        self._jobs = 0


def format_progress(p: IndexingProgress) -> str:
    ft = p.full_texts
    total_pdfs = sum(ft.values())
    eta = p.eta_seconds
    parts = [
        f"PDFs {ft.get('done', 0)}/{total_pdfs} done "
        f"({ft.get('failed', 0)} failed, {p.pdfs_pending} pending)",
        f"abstracts {p.abstracts_indexed:,}/{p.papers:,} ({p.abstracts_per_minute:,.0f}/min)",
    ]
    if eta is not None:
        parts.append(f"{'PDFs' if p.phase == 'pdfs' else 'abstracts'} done in about {_duration(eta)}")
    return "indexing: " + ", ".join(parts)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def record_first_run_start(data_dir: Path, started: float) -> bool:
    """Remember when the first ``make run`` started (only once: later runs are not "first")."""
    path = data_dir / FIRST_RUN_FILE
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"started": started, "finished": None}))
    return True


def finish_first_run(data_dir: Path) -> float | None:
    """Seconds from the first run's start to now, the first time the queue drains; else None."""
    path = data_dir / FIRST_RUN_FILE
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if info.get("finished") is not None or not isinstance(info.get("started"), int | float):
        return None
    info["finished"] = time.time()
    path.write_text(json.dumps(info))
    return float(info["finished"] - info["started"])


def console_logging() -> None:
    """Make the worker's progress lines visible when nothing else configured logging."""
    log_to_console(logging.getLogger("indexing"))
