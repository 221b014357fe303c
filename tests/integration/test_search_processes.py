"""Searches in processes of their own (``app.search_processes``): the same answers as in the web
process, a paper indexed after they opened is found by meaning (the embedded Chroma written and
opened by this process only, read by theirs through its relay), a failing vector read costs a search
its vectors and not its answer, a process that dies costs at most the search it had (a 503), and
none is left behind when they close. Real processes, real indexes, a small real corpus."""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from sqlalchemy import Engine

from app.main import create_app
from app.search_processes import SearchProcesses, SearchProcessLost
from app.services import open_search_process
from catalog.db import make_engine, migrate
from catalog.search_queries import SearchFilters
from indexing.contract import AbstractsJob
from indexing.pipeline import Pipeline, abstract_buckets
from indexing.wiring import make_embedder, open_store
from ingest.importer import Importer
from ingest.records import PaperRecord
from ingest.sources import listings
from retrieval.embedder import Embedder
from retrieval.lexical import LexicalIndex
from retrieval.search import SearchRequest, SearchResults, SearchService, open_search
from retrieval.store import ChunkStore, StoreError, StoreRelay
from settings import SHARED_DATA, Settings, get_settings
from tests.integration.browse_catalogue import served
from tests.integration.search_corpus import environment

PAPERS = 40


def listed(start: int, count: int) -> list[PaperRecord]:
    records = itertools.islice(
        listings.read(SHARED_DATA / "arxiv" / "listings-20k.jsonl.gz"), start, start + count
    )
    return [r for r in records if isinstance(r, PaperRecord)]


@dataclass
class Site:
    """What the web process holds: the writing store, its own search service, the catalogue."""

    settings: Settings
    engine: Engine
    embedder: Embedder
    store: ChunkStore
    local: SearchService

    def index(self, records: list[PaperRecord]) -> None:
        """Import, embed (through the writing store) and lexically index these papers."""
        Importer(self.engine, source="test").run(records)
        pipeline = Pipeline(self.settings, self.engine, self.store, self.embedder)
        try:
            for job in abstract_buckets(self.engine, self.store.name, 500):
                pipeline.index_abstracts(AbstractsJob(job.bucket, job.size, self.store.name))
        finally:
            pipeline.close()
        lexical = LexicalIndex.from_settings(self.settings)
        lexical.sync_catalogue(self.engine)
        lexical.flush()
        lexical.close()


ENV = {
    "WOVEPAPER_ENVIRONMENT": "test",
    "WOVEPAPER_WORKER_EMBEDDED": "false",
    "WOVEPAPER_LEXICAL_REFRESH_SECONDS": "0",
    "WOVEPAPER_LEXICAL_POLL_SECONDS": "0",
    "WOVEPAPER_EMBEDDING_THREADS": "1",  # the same arithmetic in every process
}


def open_site(settings: Settings) -> Site:
    engine = make_engine(settings.database_url)
    migrate(engine)
    embedder = make_embedder(settings)
    store = open_store(settings, embedder)
    return Site(settings, engine, embedder, store, open_search(settings, engine, store, embedder))


def close_site(site: Site) -> None:
    site.local.close()
    site.store.close()
    site.engine.dispose()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first papers of the listings, imported, embedded and indexed once for the module."""
    data_dir = tmp_path_factory.mktemp("search-processes") / "data"
    with environment({**ENV, "WOVEPAPER_DATA_DIR": str(data_dir)}) as settings:
        site = open_site(settings)
        site.index(listed(0, PAPERS))
        close_site(site)
    return data_dir


@pytest.fixture
def site(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """A copy of the corpus, opened as the web process opens it."""
    shutil.copytree(corpus, tmp_path / "data", dirs_exist_ok=True)
    for key, value in {**ENV, "WOVEPAPER_DATA_DIR": str(tmp_path / "data")}.items():
        monkeypatch.setenv(key, value)
    get_settings.cache_clear()
    site = open_site(get_settings())
    yield site
    close_site(site)


@pytest.fixture
def relay(site: Site) -> Iterator[StoreRelay]:
    """The writing store's reads served to the search processes, as the app serves them."""
    relay = StoreRelay(site.store)
    yield relay
    relay.close()


@pytest.fixture
def processes(site: Site, relay: StoreRelay) -> Iterator[SearchProcesses]:
    pool = SearchProcesses(
        functools.partial(open_search_process, relay=relay.address), site.settings, 2, site.local
    )
    yield pool
    pool.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def same(results: SearchResults) -> SearchResults:
    return replace(results, took_ms=0.0)


def test_search_processes_answer_exactly_as_the_web_process_does(
    site: Site, processes: SearchProcesses
) -> None:
    titles = [r.title for r in listed(0, PAPERS)]
    requests = [
        SearchRequest(q=titles[3]),
        SearchRequest(q=" ".join(titles[10].split()[:3])),
        SearchRequest(q="neural networks for language", size=5, page=2),
        SearchRequest(q=titles[7], mode="dense"),
        SearchRequest(q=titles[7], mode="bm25", sort="newest"),
        SearchRequest(q="learning", filters=SearchFilters(category="cs.LG")),
        SearchRequest(),  # no query: the newest papers
    ]
    for request in requests:
        here = site.local.search(site.local.validate(request))
        there = processes.search(processes.validate(request))
        assert there.hits or not here.hits
        assert same(there) == same(here), request


def test_a_paper_indexed_after_the_processes_opened_is_found_by_meaning(
    site: Site, processes: SearchProcesses
) -> None:
    new = listed(PAPERS, 1)[0]
    request = SearchRequest(q=new.title, mode="dense")
    assert new.arxiv_id not in [h.paper.arxiv_id for h in processes.search(request).hits]
    site.index([new])  # written by this process, as the web process's indexing worker does
    for _ in range(4):  # each of the two processes may take it; both must have caught up
        hits = processes.search(request).hits
        assert hits and hits[0].paper.arxiv_id == new.arxiv_id
        assert hits[0].dense_rank == 1


class HeldService:
    """A search process's service that holds the search for ``hold`` until it is killed, having
    written its pid where the test looks; any other query finds nothing, at once."""

    def __init__(self, settings: Settings) -> None:
        self.pid_file = settings.core.data_dir / "held.pid"

    def search(self, request: SearchRequest) -> SearchResults:
        if request.q == "hold":
            self.pid_file.write_text(str(os.getpid()))
            time.sleep(600)
        return SearchResults(request, [], 0, False, [], [], 0.0, [])


def held_service(settings: Settings, relay: object = None) -> SearchService:
    return cast(SearchService, HeldService(settings))


def held_pid(settings: Settings) -> int:
    pid_file = settings.core.data_dir / "held.pid"
    deadline = time.monotonic() + 120
    while not pid_file.is_file():
        assert time.monotonic() < deadline, "the held search never started"
        time.sleep(0.05)
    return int(pid_file.read_text())


def test_a_process_that_dies_mid_search_costs_that_search_a_503_and_is_replaced(site: Site) -> None:
    pool = SearchProcesses(held_service, site.settings, 1, site.local)
    try:
        with ThreadPoolExecutor(1) as threads:
            held = threads.submit(pool.search, SearchRequest(q="hold"))
            pid = held_pid(site.settings)
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(SearchProcessLost) as lost:
                held.result(timeout=60)
        assert lost.value.status_code == 503 and lost.value.headers == {"Retry-After": "1"}
        assert pool.search(SearchRequest(q="again")).total == 0  # answered by a new process
        assert pid not in pool.pids() and pool.pids()
    finally:
        pool.close()


def test_a_process_that_died_while_idle_is_replaced_without_failing_a_search(
    site: Site, processes: SearchProcesses
) -> None:
    assert processes.search(SearchRequest(q="attention")).hits
    pids = processes.pids()
    for pid in pids:
        with suppress(ProcessLookupError):  # the pool may have stopped it on seeing the first die
            os.kill(pid, signal.SIGKILL)
    while any(alive(p) for p in pids):  # reaped by the pool's own thread, which marks it broken
        time.sleep(0.05)
    assert processes.search(SearchRequest(q="attention")).hits


def test_closing_leaves_no_search_process_behind(site: Site, relay: StoreRelay) -> None:
    pool = SearchProcesses(
        functools.partial(open_search_process, relay=relay.address), site.settings, 2, site.local
    )
    pool.search(SearchRequest(q="attention"))
    pids = pool.pids()
    assert len(pids) == 2 and all(alive(p) for p in pids)
    pool.close()
    assert not any(alive(p) for p in pids)


def test_the_app_searches_in_its_processes_answers_503_when_one_dies_and_stops_them(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WOVEPAPER_SEARCH_PROCESSES", "true")
    monkeypatch.setenv("WOVEPAPER_SEARCH_CONCURRENCY", "1")
    get_settings.cache_clear()
    settings = get_settings()
    site.local.close()
    site.store.close()  # the app's lifespan takes the writer's lock
    monkeypatch.setattr("app.services.open_search_process", held_service)
    app = create_app(settings)
    with served(settings, app=app) as base, httpx.Client(base_url=base, timeout=120) as http:
        services: Any = app.state.services
        pool: SearchProcesses = services.search_processes
        assert http.get("/api/search", params={"q": "fine"}).status_code == 200
        pids = pool.pids()
        assert len(pids) == 1 and alive(pids[0])
        # Searches yield the CPU to the web process (its event loop serves /healthz and pages).
        own = os.getpriority(os.PRIO_PROCESS, 0)
        niced = min(19, own + settings.search.search_process_niceness)
        assert os.getpriority(os.PRIO_PROCESS, pids[0]) == niced > own
        answers: list[httpx.Response] = []
        asking = threading.Thread(
            target=lambda: answers.append(http.get("/api/search", params={"q": "hold"}))
        )
        asking.start()
        os.kill(held_pid(settings), signal.SIGKILL)
        asking.join(timeout=60)
        assert answers and answers[0].status_code == 503
        assert answers[0].headers["retry-after"] == "1"
        assert "search process stopped" in answers[0].json()["detail"]
        assert http.get("/api/search", params={"q": "fine"}).status_code == 200
        assert http.get("/search", params={"q": "fine"}).status_code == 200
        pids = pool.pids()
    assert pids and not any(alive(p) for p in pids)


ORPHANED = """
import time
from app.search_processes import SearchProcesses
from settings import get_settings
from tests.integration.test_search_processes import held_service
pool = SearchProcesses(held_service, get_settings(), 2, None)
while len(pool.pids()) < 2:
    time.sleep(0.1)
print(*pool.pids(), flush=True)
time.sleep(600)
"""


def test_search_processes_exit_when_their_web_process_is_killed() -> None:
    """SIGKILL (or the OOM killer) gives the web process no chance to stop its pool: the search
    processes notice on their own and exit, rather than live on orphaned."""
    root = Path(__file__).resolve().parents[2]
    web = subprocess.Popen([sys.executable, "-c", ORPHANED], cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        assert web.stdout is not None
        pids = [int(p) for p in web.stdout.readline().split()]
        assert len(pids) == 2 and all(alive(p) for p in pids)
        web.kill()
        web.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(alive(p) for p in pids)
    finally:
        web.kill()


def open_files(pid: int) -> list[Path]:
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with suppress(OSError):  # closed meanwhile
            found.append(Path(os.readlink(fd)))
    return found


def test_only_the_writing_process_opens_the_embedded_chroma(site: Site, processes: SearchProcesses) -> None:
    """chromadb writes an embedded directory on reads too (it applies its pending log to the HNSW
    segment and saves it): a second process that opened it only to read rewrote the writer's files
    under it, and failed queries ("Error finding id") or died of SIGSEGV in chromadb's Rust bindings
    (measured with 1.5.9, a writer writing and two readers querying: within a minute)."""
    new = listed(PAPERS, 1)[0]
    site.index([new])
    hits = processes.search(SearchRequest(q=new.title, mode="dense")).hits
    assert hits and hits[0].paper.arxiv_id == new.arxiv_id
    chroma = site.settings.chroma_path.resolve()
    assert any(f.is_relative_to(chroma) for f in open_files(os.getpid()))  # the writer: this process
    pids = processes.pids()
    assert len(pids) == 2
    for pid in pids:
        assert not [f for f in open_files(pid) if f.is_relative_to(chroma)], pid


def test_a_failing_vector_read_costs_a_search_its_vectors_not_its_answer(
    site: Site, relay: StoreRelay, processes: SearchProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error a process met under load (chromadb's ``InternalError`` from its Rust bindings), now
    raised by the writer's collection where the relay reads it: the search answers from BM25 with a
    note. Then the relay away altogether: the same."""
    from chromadb.errors import InternalError

    title = listed(0, PAPERS)[3].title
    request = SearchRequest(q=title)
    whole = processes.search(request)
    assert whole.hits and not whole.notes

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise InternalError("Error executing plan: Internal error: Error finding id")

    monkeypatch.setattr(type(site.store.collection), "query", failing)
    for _ in range(4):  # each of the two processes
        lexical = processes.search(request)
        assert lexical.hits[0].paper.arxiv_id == whole.hits[0].paper.arxiv_id
        assert all(h.dense_rank is None for h in lexical.hits)
        assert any("Error finding id" in n for n in lexical.notes), lexical.notes
    monkeypatch.undo()
    assert not processes.search(request).notes
    relay.close()
    for _ in range(4):
        away = processes.search(request)
        assert away.hits and any("relay does not answer" in n for n in away.notes), away.notes


def test_a_k_nn_that_chromadb_fails_once_is_read_again(
    site: Site, processes: SearchProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A k-NN with a filter that races a delete in the writing process sometimes gets chromadb's
    ``InternalError: ... Error finding id`` and answers when asked again: read once more, in the web
    process's own searches and in those of the search processes (read there through the relay)."""
    from chromadb.errors import InternalError

    collection = type(site.store.collection)
    real = collection.query
    failed: list[int] = []

    def once(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not failed:
            failed.append(os.getpid())
            raise InternalError("Error executing plan: Internal error: Error finding id")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(collection, "query", once)
    request = SearchRequest(q=listed(0, PAPERS)[5].title, mode="dense")
    for search in (site.local.search, processes.search, processes.search):
        failed.clear()
        results = search(request)
        assert failed == [os.getpid()]  # the writer's client, whichever process searched
        assert results.hits and results.hits[0].dense_rank == 1 and not results.notes, results.notes


def test_a_relayed_store_only_reads(site: Site, relay: StoreRelay) -> None:
    reader = ChunkStore.relayed(relay.address, name=site.store.name, dim=site.store.dim)
    try:
        assert reader.count() == site.store.count()
        some = site.store.ids()[:3]
        assert [c.id for c in reader.get(some)] == [c.id for c in site.store.get(some)]
        with pytest.raises(StoreError, match="only read"):
            reader.delete_paper(listed(0, 1)[0].arxiv_id)
        assert reader.count() == site.store.count()
    finally:
        reader.close()


def test_a_search_process_refuses_to_open_an_embedded_chroma_itself(site: Site) -> None:
    with pytest.raises(ValueError, match="relay"):
        open_search_process(site.settings)
