"""Long-lived clients, owned by the app's lifespan and handed to handlers by dependency injection.

Handlers never build clients: they ask for ``db`` (a request-scoped catalogue session) or
``services`` (everything long-lived).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import anyio.to_thread
from litestar import Litestar, Request
from litestar.datastructures import State
from litestar.di import NamedDependency
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from app.admission import WorkGate
from app.readiness import Check, Readiness
from app.search_processes import Opener, SearchProcesses
from catalog.db import make_engine, session_factory, transaction
from catalog.papers import count_papers
from chat.llm import LLM, ModelChoice, make_llm
from chat.pipeline import Chat
from chat.runtime import LocalLLM, RuntimeStatus, port_answers_at
from coordination.foreground import Foreground
from coordination.redis import sync_client
from indexing.contract import PageReader, WorkerHandle
from indexing.wiring import make_embedder, open_page_reader, open_store, queue_full_text, start_in_thread
from retrieval.embedder import Embedder
from retrieval.evidence import EvidenceSource
from retrieval.search import SearchService, open_search
from retrieval.store import ChunkStore, RelayAddress, StoreRelay
from settings import Settings


@dataclass
class Services:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    # The vector index (Chroma) and the model that embeds queries and chunks; search uses both.
    store: ChunkStore
    embedder: Embedder
    # The embedded default (no Redis): the indexing worker runs here, as a background thread, because
    # only the process that writes the embedded Chroma sees its newest vectors.
    worker: WorkerHandle | None = None
    # Hybrid search (lexical index + dense retrieval over ``store``), see retrieval.search.
    search: SearchService | None = None
    # The configured language model (None: the embedded one, when enabled, once it is ready).
    llm: LLM | None = None
    # The embedded LLM server, when no LLM base URL is configured (see chat.runtime).
    local_llm: LocalLLM | None = None
    # Pages of the indexed PDFs, drawn in the parser's sandbox (``/papers/{id}/pages/{n}``).
    page_reader: PageReader | None = None
    # The same searches in processes of their own (``WOVEPAPER_SEARCH_PROCESSES``): what the search
    # page, the API and MCP call; the chat's evidence keeps ``search``.
    search_processes: SearchProcesses | None = None
    # An embedded Chroma's reads served to those processes (only this process opens its directory).
    store_relay: StoreRelay | None = None
    # Chat turns: retrieval's evidence over ``search``, then the model, see chat.pipeline.
    chat: Chat = field(init=False)
    # Searches run through this gate: bounded concurrency, the excess shed with a 503.
    search_gate: WorkGate = field(init=False)
    # Page drawing (a sandboxed child per call) runs through this gate, like searches.
    page_gate: WorkGate = field(init=False)
    # What ``/readyz`` checks; a new dependency registers its check where its client is opened.
    readiness: Readiness = field(init=False)
    # Loads what the first chat turn needs, in the background (see ``warm_up``).
    warming: threading.Thread | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        conf = self.settings.search
        self.search_gate = WorkGate("searches", concurrency=conf.search_concurrency, queue=conf.search_queue)
        self.page_gate = WorkGate("page drawings", concurrency=2, queue=16)
        evidence = EvidenceSource(self.search) if self.search is not None else None
        models = ModelChoice(self.settings, self.llm, self.local_llm)
        self.chat = Chat(self.settings, self.engine, evidence, models, self.embedder)
        self.readiness = Readiness(
            [
                Check("catalogue", self._catalogue_ready),
                Check("vector index", self._store_ready),
                Check("redis", self._redis_ready, required=bool(self.settings.redis.redis_url)),
                # Optional: until a model answers (minutes while the embedded one builds), the chat
                # still answers with the evidence passages, so the process stays ready.
                Check("llm", self._llm_ready, required=False),
            ]
        )

    @classmethod
    def open(cls, settings: Settings) -> Services:
        """Raises ``retrieval.store.StoreLocked`` (naming the holder) when another process writes
        the embedded Chroma: serve from that process, or configure a Chroma server."""
        engine = make_engine(settings.database_url, echo=settings.database.database_echo)
        embedder = make_embedder(settings)
        try:
            store = open_store(settings)
        except Exception:
            engine.dispose()
            raise
        try:
            search = open_search(settings, engine, store, embedder)
        except Exception:
            store.close()
            engine.dispose()
            raise
        llm = make_llm(settings.llm, settings.llm.llm_base_url) if settings.llm.llm_base_url else None
        local = (
            LocalLLM(
                settings.local_llm, settings.local_llm_dir, foreground=Foreground(settings.foreground_dir)
            )
            if not settings.llm.llm_base_url and settings.local_llm_enabled
            else None
        )
        services = cls(settings, engine, session_factory(engine), store, embedder, None, search, llm, local)
        services.page_reader = open_page_reader(settings)
        if settings.search.search_processes:
            processes = services.search_gate.concurrency
            opener: Opener = open_search_process
            if not settings.chroma.chroma_host:  # embedded: the processes read through this one
                services.store_relay = StoreRelay(store)
                opener = functools.partial(open_search_process, relay=services.store_relay.address)
            services.search_processes = SearchProcesses(opener, settings, processes, search)
        if not settings.redis.redis_url and settings.worker.worker_embedded:
            services.worker = start_in_thread(settings, engine, store, embedder)
        return services

    @property
    def llm_base_url(self) -> str | None:
        """Where the chat's OpenAI client points: the configured server, else the embedded one
        (which may still be installing or starting: see :meth:`llm_status`); None when neither."""
        if self.settings.llm.llm_base_url:
            return self.settings.llm.llm_base_url
        return self.local_llm.base_url if self.local_llm is not None else None

    def llm_status(self) -> tuple[RuntimeStatus, str | None]:
        """The chat model's state and name (a configured server: whether it accepts a connection,
        which may take up to a second)."""
        if self.settings.llm.llm_base_url:
            try:
                return RuntimeStatus("ready", self._llm_ready()), None
            except RuntimeError as exc:
                return RuntimeStatus("down", str(exc)), None
        if self.local_llm is None:
            detail = (
                "no language model: WOVEPAPER_LLM_BASE_URL is empty and the embedded one is off "
                "(WOVEPAPER_LOCAL_LLM_ENABLED); the chat answers with the evidence passages"
            )
            return RuntimeStatus("disabled", detail), None
        return self.local_llm.status(), self.local_llm.model.key

    def _catalogue_ready(self) -> str:
        with self.sessions() as session:
            session.execute(text("SELECT 1"))
            return f"{count_papers(session):,} papers"

    def _store_ready(self) -> str:
        self.store.ping()
        return f"collection {self.store.name} answers"

    def _redis_ready(self) -> str:
        client = sync_client(self.settings)
        if client is None:
            return "not configured (queue, caches and limits are in-process)"
        with client:
            client.ping()
        return "answers"

    def _llm_ready(self) -> str:
        if self.settings.llm.llm_base_url:  # a connection, not a request: no tokens spent, no queueing
            parts = urlsplit(self.settings.llm.llm_base_url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
            if not port_answers_at(parts.hostname or "", port, timeout=1.0):
                raise RuntimeError(f"the configured server {parts.netloc} does not accept connections")
            return f"the configured server {parts.netloc} accepts connections"
        if self.local_llm is None:
            raise RuntimeError(self.llm_status()[0].detail)
        return self.local_llm.probe()

    async def queue_full_text(self, arxiv_id: str) -> None:
        """Queue the fetch → parse → index job of a catalogue paper's PDF (see app.fulltext)."""
        await queue_full_text(self.settings, self.engine, arxiv_id, self.store.name)

    def warm_up(self) -> None:
        """The chat's warm-up (:meth:`chat.pipeline.Chat.warm_up`) in a thread: the pages are up
        meanwhile, and the first reader's key quotes come at full speed."""
        self.warming = threading.Thread(target=self.chat.warm_up, name="chat-warm-up", daemon=True)
        self.warming.start()

    def close(self) -> None:
        if self.warming is not None:
            self.warming.join(timeout=30)  # it reads the stores closed below
        if self.worker is not None:
            self.worker.stop()
        if self.search_processes is not None:
            self.search_processes.close()
        if self.store_relay is not None:
            self.store_relay.close()
        if self.search is not None:
            self.search.close()
        if self.page_reader is not None:
            self.page_reader.close()
        self.store.close()
        self.engine.dispose()


def open_search_process(settings: Settings, relay: RelayAddress | None = None) -> SearchService:
    """A search process's own search service (see :mod:`app.search_processes`). It only reads: an
    embedded Chroma through the ``relay`` of the web process that writes it (chromadb writes the
    directory on reads too, so no second process may open it), a Chroma server directly."""
    if not settings.chroma.chroma_host and relay is None:
        raise ValueError("a search process reads an embedded Chroma through its web process's relay")
    engine = make_engine(settings.database_url, echo=settings.database.database_echo)
    embedder = make_embedder(settings)
    return open_search(settings, engine, open_store(settings, embedder, relay=relay), embedder)


def lifespan(settings: Settings):  # type: ignore[no-untyped-def]
    @asynccontextmanager
    async def _lifespan(app: Litestar) -> AsyncIterator[None]:
        services = Services.open(settings)
        app.state.services = services
        if services.local_llm is not None:
            await services.local_llm.start()  # returns at once; installs and starts in the background
        if settings.chat_warm_up:
            services.warm_up()
        try:
            yield
        finally:
            await services.chat.models.close()
            if services.local_llm is not None:
                await services.local_llm.stop()
            services.close()

    return _lifespan


def provide_services(state: State) -> Services:
    services: Services = state.services
    return services


def provide_db(state: State) -> Iterator[Session]:
    """A read-mostly session per request, closed when the response is sent."""
    services: Services = state.services
    with services.sessions() as session:
        yield session


# What handlers declare: ``db: DB`` and ``services: AppServices``.
DB = NamedDependency[Session]
AppServices = NamedDependency[Services]


T = TypeVar("T")


async def in_transaction(request: Request[Any, Any, Any], work: Callable[[Session], T]) -> T:
    engine = request.app.state.services.engine

    def run() -> T:
        with transaction(engine) as db:
            return work(db)

    return await anyio.to_thread.run_sync(run)
