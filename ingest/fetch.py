"""Downloading PDFs from arXiv, politely and safely.

- Ids are parsed before they become URLs (``catalog.arxiv_ids``), so nothing injected in an id
  reaches a path or a query. The base URL is a setting (``WOVEPAPER_ARXIV_PDF_URL``; tests point it
  at a loopback server standing in for arXiv's PDF host).
- Every request goes through :class:`ingest.http.PoliteClient` with a :class:`UrlPolicy`: only
  ``https`` on arXiv's own hosts (and the configured base's host), public addresses only, every
  redirect checked again; a loopback base is allowed exactly its own scheme, host and port. arXiv's
  pace across every process; retries with backoff on 429, 5xx and network errors (``Retry-After``
  honoured); the parser's size limit, read as the body streams in.
- Only a ``200`` answer that starts like a PDF (``%PDF-``) is returned; :class:`NotPdf` otherwise.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from catalog import arxiv_ids
from ingest.http import ARXIV_HOSTS, HttpError, PoliteClient, Transport, UrlPolicy, arxiv_client
from settings import Settings, is_loopback

PDF_BASE = "https://arxiv.org/pdf/"


class NotPdf(HttpError):
    """The answer was a 200 but its body is not a PDF (an HTML page, an error text)."""


def pdf_url(arxiv_id: str, version: int | None = None, base: str = PDF_BASE) -> str:
    """``<base>/<canonical id>[v<n>]``; raises ``InvalidArxivId`` for anything else."""
    parsed = arxiv_ids.parse(arxiv_id)
    if version is not None:
        if version < 1:
            raise arxiv_ids.InvalidArxivId(arxiv_id, f"version {version} is not a positive number")
        parsed = parsed.with_version(version)
    return base.rstrip("/") + "/" + parsed.versioned


def pdf_policy(base: str) -> UrlPolicy:
    """The URL policy for PDFs under ``base``: arXiv's hosts plus the base's host (https, port 443,
    public addresses). A loopback base (a local mirror, the tests' stand-in) is allowed exactly its
    own scheme, host and port, and nothing else."""
    parts = urlsplit(base)
    host = (parts.hostname or "").lower()
    if host and is_loopback(host):
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return UrlPolicy(
            hosts=frozenset({host}),
            schemes=frozenset({parts.scheme}),
            ports=frozenset({port}),
            allow_private=True,
        )
    return UrlPolicy(hosts=ARXIV_HOSTS | ({host} if host else set()))


class PdfFetcher:
    """Download PDFs through a client that carries the URL policy."""

    def __init__(self, http: PoliteClient, base: str = PDF_BASE) -> None:
        if http.policy is None:
            raise ValueError("a PDF fetcher needs a client with a URL policy")
        self.http = http
        self.base = base

    @classmethod
    def from_settings(
        cls, settings: Settings, *, policy: UrlPolicy | None = None, transport: Transport | None = None
    ) -> PdfFetcher:
        """arXiv's politeness, the policy for the configured base unless one is given, the parser's
        size limit."""
        base = settings.arxiv.arxiv_pdf_url
        return cls(
            arxiv_client(
                settings,
                policy=policy or pdf_policy(base),
                max_bytes=settings.parser.pdf_max_bytes,
                headers={"Accept": "application/pdf"},
                transport=transport,
            ),
            base,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> PdfFetcher:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def url(self, arxiv_id: str, version: int | None = None) -> str:
        return pdf_url(arxiv_id, version, self.base)

    def fetch_pdf(self, arxiv_id: str, version: int | None = None) -> bytes:
        return self.get(self.url(arxiv_id, version))

    def get(self, url: str) -> bytes:
        """The PDF at ``url``; :class:`~ingest.http.HttpError` (``retryable`` or not, ``status``
        set for an answer that is not 200, :class:`~ingest.http.TooLarge` over the size limit) or
        :class:`NotPdf` otherwise."""
        reply = self.http.get(url)
        if reply.status != 200:
            raise HttpError(reply.url, f"HTTP {reply.status}", status=reply.status)
        if b"%PDF-" not in reply.content[:1024]:  # readers accept a little junk before the header
            kind = reply.headers.get("content-type", "unknown type")
            raise NotPdf(
                reply.url,
                f"the response is not a PDF ({kind}, {len(reply.content):,} bytes)",
                status=200,
            )
        return reply.content
