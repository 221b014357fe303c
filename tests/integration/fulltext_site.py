"""The served app for the full-text-on-request tests (site and browser): uvicorn with its embedded
worker, a real OpenID provider (one person signed in), the loopback embedding endpoint, and a
loopback server standing in for arXiv's PDF host (``WOVEPAPER_ARXIV_PDF_URL``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from catalog.db import make_engine
from retrieval.lexical import LexicalIndex
from settings import Settings
from tests.integration.indexing_peers import EmbeddingServer, embedding_env, embedding_server, import_papers
from tests.integration.loopback_http import Reply, Request, serve
from tests.integration.signin_peers import Browser, api_token, app_settings, free_port, oidc_mock, serve_app

REAL = "1502.03167"  # a real arXiv PDF (11 pages), served by the stand-in host
IDS = [f"2409.{n:05d}" for n in range(1, 16)]
QUOTA = 3
PENDING = {"queued", "fetching", "parsing", "indexing"}


class Arxiv:
    """Answers per path (a list given in turn, the last repeating); 404 for anything else."""

    def __init__(self) -> None:
        self.answers: dict[str, list[Reply]] = {}
        self.requests: list[Request] = []

    def __call__(self, request: Request) -> Reply:
        replies = self.answers.get(request.path)
        if not replies:
            return Reply(404, b"no such paper", {"Content-Type": "text/plain"})
        return replies.pop(0) if len(replies) > 1 else replies[0]

    def asked(self, arxiv_id: str) -> int:
        return sum(r.path == f"/pdf/{arxiv_id}" for r in self.requests)


@dataclass
class Site:
    base: str
    settings: Settings
    arxiv: Arxiv
    browser: Browser  # a person signed in through the provider
    csrf: str

    def token(self, scopes: set[str]) -> dict[str, str]:
        """The bearer header of a new person's new token (each its own daily quota)."""
        secret = api_token(self.settings.database_url, name="agent", scopes=scopes, label="fulltext tests")
        return {"Authorization": f"Bearer {secret}"}

    def get(self, path: str, **headers: str) -> httpx.Response:
        return httpx.get(self.base + path, headers=headers, timeout=30, follow_redirects=True)

    def ask(self, arxiv_id: str, headers: dict[str, str] | None = None) -> httpx.Response:
        return httpx.post(f"{self.base}/api/papers/{arxiv_id}/fulltext", headers=headers or {}, timeout=30)

    def settle(self, arxiv_id: str, timeout: float = 90) -> dict[str, Any]:
        """The state once it stops moving (what the page's script polls for)."""
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            state = self.get(f"/api/papers/{arxiv_id}/fulltext").json()
            seen.append(state["state"])
            if state["state"] not in PENDING:
                return state
            time.sleep(0.2)
        raise AssertionError(f"{arxiv_id} did not settle: {seen[-5:]}")


@contextmanager
def fulltext_site(work: Path) -> Iterator[Site]:
    arxiv = Arxiv()
    with (
        embedding_server() as peer,
        serve(arxiv) as host,
        oidc_mock() as issuer,
    ):
        arxiv.requests = host.requests
        yield from _site(work, peer, host.url, issuer, arxiv)


def _site(work: Path, peer: EmbeddingServer, host: str, issuer: str, arxiv: Arxiv) -> Iterator[Site]:
    port = free_port()
    settings = app_settings(
        work / "data",
        port,
        {
            **embedding_env(peer),
            "WOVEPAPER_OIDC_ISSUER": issuer,
            "WOVEPAPER_OIDC_NAME": "Test SSO",
            "WOVEPAPER_OIDC_CLIENT_ID": "wovepaper-test",
            "WOVEPAPER_OIDC_CLIENT_SECRET": "s3cret",
            "WOVEPAPER_WORKER_EMBEDDED": "true",
            "WOVEPAPER_WORKER_POLL_SECONDS": "0.1",
            "WOVEPAPER_WORKER_MAX_ATTEMPTS": "1",
            "WOVEPAPER_ARXIV_PDF_URL": f"{host}/pdf/",
            "WOVEPAPER_ARXIV_INTERVAL_SECONDS": "0",
            "WOVEPAPER_ARXIV_RETRIES": "0",
            "WOVEPAPER_ARXIV_TIMEOUT_SECONDS": "5",
            "WOVEPAPER_LIMIT_FULLTEXT_PER_DAY": str(QUOTA),
            "WOVEPAPER_LIMIT_API": "100000/60",
            "WOVEPAPER_PAGE_CACHE_SECONDS": "0",
        },
    )
    engine = make_engine(settings.database_url)
    try:
        import_papers(engine, [*IDS, REAL, "hep-th/9901001"])
        LexicalIndex.from_settings(settings).rebuild(engine)
    finally:
        engine.dispose()
    with serve_app(settings) as base:
        browser = Browser(base)
        assert browser.sign_in("oidc", "fulltext-reader").status_code == 303
        try:
            yield Site(base, settings, arxiv, browser, browser.csrf("/account"))
        finally:
            browser.close()


def pdf(data: bytes, delay: float = 0.0) -> Reply:
    return Reply(200, data, {"Content-Type": "application/pdf"}, delay=delay)
