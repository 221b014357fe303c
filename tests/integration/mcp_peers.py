"""The app with MCP served on loopback for the SDK's own client: the browse test catalogue plus one
real PDF (Adam, arXiv:1412.6980) indexed by the real worker, so ``read_paper_pages`` has text."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.main import create_app
from catalog.db import make_engine
from indexing.contract import PdfJob
from indexing.pipeline import Pipeline
from indexing.queue import EmbeddedQueue
from indexing.wiring import make_embedder, open_store
from indexing.worker import EmbeddedWorker
from settings import SHARED_DATA, Settings
from tests.conftest import running_chroma
from tests.integration.browse_catalogue import Facts, built, served, settings_for
from tests.integration.signin_peers import api_token

INDEXED = "1412.6980"  # Adam: 15 pages, sections, numbers to cite


@dataclass(frozen=True)
class McpSite:
    base: str  # http://127.0.0.1:<port>, also the public URL
    settings: Settings
    facts: Facts
    signin_link: str | None = None  # the one-time local sign-in link (a browser session)

    @property
    def endpoint(self) -> str:
        return f"{self.base}/mcp"

    def token(self, scopes: set[str] | None = None) -> str:
        """A new person with an API token (each caller its own, so limits do not interfere)."""
        return api_token(self.settings.database_url, name="An agent", scopes=scopes, label="mcp tests")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def index_pdf(settings: Settings, arxiv_id: str) -> None:
    """The paper's PDF through the real worker (parse in the sandbox, chunk, embed, store)."""
    engine = make_engine(settings.database_url)
    embedder = make_embedder(settings)
    store = open_store(settings, embedder)
    try:
        path = SHARED_DATA / "pdfs" / "arxiv" / f"{arxiv_id}.pdf"
        EmbeddedQueue(engine).enqueue([PdfJob(arxiv_id, path=str(path)).spec()])
        stats = EmbeddedWorker(Pipeline(settings, engine, store, embedder)).run(until_empty=True)
        assert stats.done == 1, stats
    finally:
        store.close()
        engine.dispose()


@contextmanager
def mcp_catalogue(work: Path, env: dict[str, str] | None = None) -> Iterator[tuple[Settings, Facts, int]]:
    """The test catalogue with :data:`INDEXED` indexed into a Chroma server of its own (so more
    than one app process can serve it), and settings whose public URL is a free loopback port (the
    MCP endpoint accepts only its public host); yields (settings, facts, port)."""
    port = free_port()
    (work / "chroma").mkdir()
    with running_chroma(work / "chroma") as ((host, chroma_port), _process):
        public = {
            "WOVEPAPER_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "WOVEPAPER_CHROMA_HOST": host,
            "WOVEPAPER_CHROMA_PORT": str(chroma_port),
            **(env or {}),
        }
        with built("sqlite", SHARED_DATA, work, public) as (settings, facts):
            index_pdf(settings, INDEXED)
            yield settings, facts, port


@contextmanager
def mcp_site(work: Path, env: dict[str, str] | None = None) -> Iterator[McpSite]:
    with mcp_catalogue(work, env) as (settings, facts, port):
        app = create_app(settings)
        with served(settings, port, app) as base:
            link = app.state.auth.local_link_url
            yield McpSite(base, settings, facts, link)


def with_env(settings: Settings, env: dict[str, str]) -> Settings:
    """``settings`` with a few variables changed (the same catalogue and data folder)."""
    current = {
        "WOVEPAPER_DATA_DIR": str(settings.core.data_dir),
        "WOVEPAPER_PUBLIC_URL": settings.public_url,
        "WOVEPAPER_WORKER_EMBEDDED": "false",
        "WOVEPAPER_CHROMA_HOST": settings.chroma.chroma_host,
        "WOVEPAPER_CHROMA_PORT": str(settings.chroma.chroma_port),
        "WOVEPAPER_LLM_BASE_URL": settings.llm.llm_base_url,
    }
    return settings_for(settings.database_url, {**current, **env})
