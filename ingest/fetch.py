"""Downloading PDFs from arXiv, politely and safely.

- Ids are parsed before they become URLs (``catalog.arxiv_ids``), so nothing injected in an id
  reaches a path or a query.
- Every request goes through :class:`ingest.http.PoliteClient` with the arXiv :class:`UrlPolicy`:
  only ``https`` on arXiv's own hosts, public addresses only, every redirect checked again; arXiv's
  pace across every process; retries with backoff on 429, 5xx and network errors; the parser's size
  limit, read as the body streams in.
- Only a ``200`` answer that looks like a PDF is returned.
"""

from __future__ import annotations

from catalog import arxiv_ids
from ingest.http import HttpError, PoliteClient, Transport, UrlPolicy, arxiv_client
from settings import Settings

PDF_BASE = "https://arxiv.org/pdf/"


def pdf_url(arxiv_id: str, version: int | None = None) -> str:
    """``https://arxiv.org/pdf/<canonical id>[v<n>]``; raises ``InvalidArxivId`` for anything else."""
    parsed = arxiv_ids.parse(arxiv_id)
    if version is not None:
        if version < 1:
            raise arxiv_ids.InvalidArxivId(arxiv_id, f"version {version} is not a positive number")
        parsed = parsed.with_version(version)
    return PDF_BASE + parsed.versioned


class PdfFetcher:
    """Download PDFs through a client that carries the URL policy."""

    def __init__(self, http: PoliteClient) -> None:
        if http.policy is None:
            raise ValueError("a PDF fetcher needs a client with a URL policy")
        self.http = http

    @classmethod
    def from_settings(
        cls, settings: Settings, *, policy: UrlPolicy | None = None, transport: Transport | None = None
    ) -> PdfFetcher:
        """arXiv's politeness, the production policy unless one is given, the parser's size limit."""
        return cls(
            arxiv_client(
                settings,
                policy=policy or UrlPolicy(),
                max_bytes=settings.parser.pdf_max_bytes,
                headers={"Accept": "application/pdf"},
                transport=transport,
            )
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> PdfFetcher:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def fetch_pdf(self, arxiv_id: str, version: int | None = None) -> bytes:
        return self.get(pdf_url(arxiv_id, version))

    def get(self, url: str) -> bytes:
        """The PDF at ``url``; :class:`~ingest.http.HttpError` (``retryable`` or not) otherwise."""
        reply = self.http.get(url)
        if reply.status != 200:
            raise HttpError(reply.url, f"HTTP {reply.status}", status=reply.status)
        if b"%PDF-" not in reply.content[:1024]:  # readers accept a little junk before the header
            kind = reply.headers.get("content-type", "unknown type")
            raise HttpError(reply.url, f"the response is not a PDF ({kind}, {len(reply.content):,} bytes)")
        return reply.content
