"""Building the indexing machinery from settings: the index name, the chunk store, the embedded
worker thread, the page reader, and the queue a paper's full text is requested on. The web app's
composition root and the CLI use these; nothing else builds them, so every process agrees on which
Chroma collection is current."""

from __future__ import annotations

from sqlalchemy import Engine

from indexing.contract import PageReader, PdfJob, WorkerHandle
from indexing.enqueue import enqueue_pdfs_async, make_queue
from indexing.page_reader import SandboxPageReader
from indexing.pipeline import Pipeline
from indexing.progress import console_logging
from indexing.worker import EmbeddedWorker, ThreadHandle
from ingest.pdf import PARSER_VERSION, PdfLimits
from retrieval.embedder import Embedder, make_embedder
from retrieval.store import ChunkStore, RelayAddress, collection_name
from settings import Settings

__all__ = [
    "index_name",
    "make_embedder",
    "open_page_reader",
    "open_store",
    "queue_full_text",
    "start_in_thread",
]


def chunking_signature(settings: Settings) -> dict[str, object]:
    """The chunking settings that shape chunks (part of the collection name)."""
    chunks = settings.chunks
    return {name: getattr(chunks, name) for name in sorted(type(chunks).model_fields)}


def index_name(settings: Settings, embedder: Embedder) -> str:
    """The Chroma collection for this embedder, chunking and parser: a change to any of them builds
    a new index instead of mixing vectors."""
    return collection_name(
        embedder=embedder.name, chunking=chunking_signature(settings), parser_version=PARSER_VERSION
    )


def open_store(
    settings: Settings, embedder: Embedder | None = None, *, relay: RelayAddress | None = None
) -> ChunkStore:
    """The chunk store for the configured Chroma and the current index. Embedded Chroma: takes the
    single-writer lock, raising ``retrieval.store.StoreLocked`` (naming the holder) when another
    process has it; with the writing process's ``relay`` (a search process), reads through it
    instead and never opens the directory."""
    embedder = embedder or make_embedder(settings)
    name = index_name(settings, embedder)
    if settings.chroma.chroma_host:
        return ChunkStore.server(
            settings.chroma.chroma_host, settings.chroma.chroma_port, name=name, dim=embedder.dim
        )
    if relay is not None:
        return ChunkStore.relayed(relay, name=name, dim=embedder.dim)
    return ChunkStore.embedded(settings.chroma_path, name=name, dim=embedder.dim)


def start_in_thread(
    settings: Settings, engine: Engine, store: ChunkStore, embedder: Embedder
) -> WorkerHandle:
    """Run the embedded-queue worker as a daemon thread of the calling process (the web app in the
    embedded default), writing through the caller's already-locked ``store``."""
    console_logging()
    return ThreadHandle(EmbeddedWorker(Pipeline(settings, engine, store, embedder)))


def open_page_reader(settings: Settings) -> PageReader:
    """The page reader: pages of the indexed PDFs drawn in sandboxed parser children of its own,
    under the parser's limits (``settings.parser``)."""
    return SandboxPageReader(PdfLimits.from_settings(settings.parser))


async def queue_full_text(settings: Settings, engine: Engine, arxiv_id: str, collection: str) -> None:
    """Queue the job that fetches a catalogue paper's PDF from arXiv and indexes it (keyed: a
    paper already queued or running is not queued twice). The catalogue marks it queued first."""
    queue = make_queue(settings, engine)
    await enqueue_pdfs_async(engine, queue, [PdfJob(arxiv_id)], collection=collection)
