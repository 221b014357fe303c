"""Searches in processes of their own, so that the web process's event loop keeps the GIL.

A search is CPU work in Python (query embedding, BM25, fusion, result building): run in threads of
the web process it holds the GIL against the event loop, and ``/healthz`` and cached pages wait
behind it. :class:`SearchProcesses` runs each search in one of a few spawned processes, each with
its own search service (catalogue engine, lexical index, embedder, vector store; see
``open_search_process`` in :mod:`app.services`), and the calling thread (a search gate's) only
waits for the answer. Results are the same objects the in-process service returns.

A process that dies (killed, out of memory) breaks the pool: the searches it had get a 503 with
``Retry-After`` at once and a new pool takes the next one. Closing stops every process.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from litestar.exceptions import ServiceUnavailableException

from retrieval.search import SearchRequest, SearchResults, SearchService
from settings import Settings

log = logging.getLogger(__name__)

Opener = Callable[[Settings], SearchService]

ORPHAN_POLL_SECONDS = 1.0  # how soon a search process notices its web process is gone

# In a search process: its own search service, opened by the pool's initializer.
_service: SearchService | None = None


class SearchProcessLost(ServiceUnavailableException):
    """A search process stopped while it had this search; a new one is starting."""


def _outlive_no_parent(parent: int) -> None:
    """Exit once the web process is gone: killed outright (SIGKILL, the OOM killer) it cannot stop
    its pool, and a search process would live on, orphaned, holding its memory."""
    while os.getppid() == parent:
        time.sleep(ORPHAN_POLL_SECONDS)
    os._exit(0)


def _open(opener: Opener, settings: Settings, parent: int) -> None:
    global _service
    # The parent's pid as it gave it: it may be gone before this initializer runs.
    watch = threading.Thread(target=_outlive_no_parent, args=(parent,), daemon=True, name="orphan-watch")
    watch.start()
    # Lower priority than the web process: on a machine with few cores the event loop would
    # otherwise wait for a core behind searches (it is short of CPU there, not of the GIL).
    os.nice(settings.search.search_process_niceness)
    _service = opener(settings)
    try:  # load the embedder, the lexical index and the vector index before the first reader
        _service.search(SearchRequest(q="warm up"))
    except Exception:  # a store still empty or away: the first real search says so
        log.warning("warming up a search process failed", exc_info=True)


def _search(request: SearchRequest) -> SearchResults:
    assert _service is not None, "the pool's initializer opens the service"
    return _service.search(request)


def _ready() -> None:
    """Nothing: submitted once per process at start, so that each starts (and warms up) now."""


class SearchProcesses:
    """``search`` in ``processes`` spawned processes; ``validate`` (cheap) by ``local`` in this one."""

    def __init__(self, opener: Opener, settings: Settings, processes: int, local: SearchService) -> None:
        self.opener = opener
        self.settings = settings
        self.processes = processes
        self.local = local
        self._guard = threading.Lock()
        self._pool = self._start()

    def _start(self) -> ProcessPoolExecutor:
        # Spawned, not forked: the web process has threads (the indexing worker, the gates').
        pool = ProcessPoolExecutor(
            self.processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_open,
            initargs=(self.opener, self.settings, os.getpid()),
        )
        for _ in range(self.processes):
            pool.submit(_ready)
        return pool

    def validate(self, request: SearchRequest) -> SearchRequest:
        return self.local.validate(request)

    def search(self, request: SearchRequest) -> SearchResults:
        """Blocking (the caller is a thread of the search gate); a 503 when the process dies."""
        pool = self._pool
        try:
            future = pool.submit(_search, request)
        except BrokenProcessPool:  # a process died before this search: it goes to the new ones
            log.warning("a search process had stopped; starting new ones")
            pool = self._replace(pool)
            future = pool.submit(_search, request)
        try:
            return future.result()
        except BrokenProcessPool:
            log.warning("a search process stopped while searching; starting new ones")
            self._replace(pool)
            raise SearchProcessLost(
                detail="The search process stopped while searching; try again in 1 s.",
                headers={"Retry-After": "1"},
            ) from None

    def _replace(self, broken: ProcessPoolExecutor) -> ProcessPoolExecutor:
        with self._guard:
            if self._pool is broken:  # the first of the searches it broke replaces it
                self._pool = self._start()
            current = self._pool
        broken.shutdown(wait=False, cancel_futures=True)
        return current

    def pids(self) -> list[int]:
        """The search processes' ids (for tests and the logs)."""
        return [p.pid for p in list(getattr(self._pool, "_processes", {}).values()) if p.pid]

    def close(self) -> None:
        with self._guard:
            self._pool.shutdown(wait=True, cancel_futures=True)
