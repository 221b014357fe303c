"""Foreground work that background indexing yields the cores to.

On a small machine the chat model reading a prompt (or its one-time compile) and the indexing worker
embedding chunks compete for the same cores, and the reader waits for both. A process doing
foreground work holds a *claim*: a file of its own under ``<data_dir>/foreground/`` whose
modification time a thread refreshes every second. Background work calls :meth:`Foreground.wait`
between its steps and sleeps while any claim is fresh. A holder that dies leaves a file that goes
stale within ``FRESH`` seconds, so nothing waits on a crash; and no wait lasts longer than ``most``
seconds, so indexing is slowed, never starved. Every process on the machine that shares the data
dir shares the claims (the web app, its worker thread, a separate ``python -m indexing worker``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

log = logging.getLogger(__name__)

FRESH = 3.0  # seconds a claim stays fresh without a refresh
BEAT = 1.0  # seconds between refreshes
POLL = 0.25  # seconds between looks while waiting


class Foreground:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @contextlib.contextmanager
    def claim(self, what: str) -> Iterator[None]:
        """Hold a claim while the block runs (``what`` names it in the file, for whoever looks)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.{what}"
        path.touch()
        done = threading.Event()

        def beat() -> None:
            while not done.wait(BEAT):
                with contextlib.suppress(OSError):
                    path.touch()

        thread = threading.Thread(target=beat, name=f"foreground-{what}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join(timeout=BEAT + 1)
            with contextlib.suppress(OSError):
                path.unlink()

    def claimed(self) -> str | None:
        """What fresh claim there is (its name), or None; stale files of dead holders are removed."""
        now = time.time()
        try:
            entries = list(self.directory.iterdir())
        except OSError:
            return None
        for entry in entries:
            try:
                age = now - entry.stat().st_mtime
            except OSError:
                continue
            if age <= FRESH:
                return entry.suffix.lstrip(".") or "work"
            with contextlib.suppress(OSError):
                entry.unlink()
        return None

    def wait(self, should_stop: Callable[[], bool] = lambda: False, most: float = 900.0) -> float:
        """Sleep while foreground work holds a claim (at most ``most`` seconds, or until
        ``should_stop``); the seconds waited."""
        started = time.monotonic()
        what = self.claimed()
        if what is None:
            return 0.0
        log.info("background indexing pauses while %s runs", what)
        while what is not None and not should_stop() and time.monotonic() - started < most:
            time.sleep(POLL)
            what = self.claimed()
        return time.monotonic() - started
