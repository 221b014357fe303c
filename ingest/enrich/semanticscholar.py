"""Semantic Scholar Graph API: papers (citation counts, ordered authors with S2 ids) and authors
(h-index, citations, paper count, ORCID / DBLP ids).

Polite use: an API key goes in the ``x-api-key`` header when configured; without one the shared pool
answers 429 often, which :class:`~ingest.http.PoliteClient` backs off from. Papers and authors are fetched in
batches (``POST /paper/batch``, up to 500 ids; ``POST /author/batch``, up to 1,000); the batch answer
has one entry per id asked, ``null`` for an id S2 does not know. Lists page by ``offset``/``next``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from catalog.text import clean_text
from coordination.pacing import Pacer
from ingest.enrich.transport import JsonClient, NotFound, politeness
from settings import EnrichmentSettings

PAPER_FIELDS = ("externalIds", "title", "citationCount", "authors")
AUTHOR_FIELDS = ("name", "externalIds", "paperCount", "citationCount", "hIndex", "affiliations")
PAPER_BATCH = 500
AUTHOR_BATCH = 1000


@dataclass(frozen=True, slots=True)
class AuthorRef:
    author_id: str | None
    name: str


@dataclass(frozen=True, slots=True)
class Paper:
    paper_id: str
    title: str
    citation_count: int | None
    external_ids: dict[str, Any] = field(default_factory=dict)
    authors: tuple[AuthorRef, ...] = ()

    @property
    def arxiv_id(self) -> str | None:
        value = self.external_ids.get("ArXiv")
        return str(value) if value else None

    @property
    def doi(self) -> str | None:
        value = self.external_ids.get("DOI")
        return str(value).lower() if value else None


@dataclass(frozen=True, slots=True)
class Author:
    author_id: str
    name: str
    paper_count: int | None
    citation_count: int | None
    h_index: int | None
    external_ids: dict[str, Any] = field(default_factory=dict)
    affiliations: tuple[str, ...] = ()

    @property
    def orcid(self) -> str | None:
        value = self.external_ids.get("ORCID")
        return str(value).upper() if value else None


def parse_paper(obj: Mapping[str, Any]) -> Paper:
    return Paper(
        paper_id=str(obj.get("paperId") or ""),
        title=clean_text(str(obj.get("title") or "")),
        citation_count=obj.get("citationCount"),
        external_ids=dict(obj.get("externalIds") or {}),
        authors=tuple(
            AuthorRef(str(a["authorId"]) if a.get("authorId") else None, clean_text(str(a.get("name") or "")))
            for a in obj.get("authors") or []
        ),
    )


def parse_author(obj: Mapping[str, Any]) -> Author:
    return Author(
        author_id=str(obj.get("authorId") or ""),
        name=clean_text(str(obj.get("name") or "")),
        paper_count=obj.get("paperCount"),
        citation_count=obj.get("citationCount"),
        h_index=obj.get("hIndex"),
        external_ids=dict(obj.get("externalIds") or {}),
        affiliations=tuple(clean_text(str(a)) for a in obj.get("affiliations") or [] if a),
    )


def paper_key(arxiv_id: str | None = None, doi: str | None = None) -> str:
    """The id S2 looks a paper up by: ``arXiv:1706.03762`` or ``DOI:10.…``."""
    if arxiv_id:
        return f"arXiv:{arxiv_id}"
    if doi:
        return f"DOI:{doi}"
    raise ValueError("a paper key needs an arXiv id or a DOI")


class SemanticScholarClient:
    """The Semantic Scholar Graph API (v1)."""

    def __init__(
        self, settings: EnrichmentSettings, pacer: Pacer, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        key = settings.semantic_scholar_api_key
        self.http = JsonClient(
            "Semantic Scholar",
            settings.semantic_scholar_base_url,
            politeness(settings, settings.semantic_scholar_rate_limit),
            pacer,
            headers={"x-api-key": key} if key else None,
            sleep=sleep,
        )

    def close(self) -> None:
        self.http.close()

    # -- papers --------------------------------------------------------------------------------

    def paper(self, paper_id: str, fields: Sequence[str] = PAPER_FIELDS) -> Paper:
        """One paper by any S2 id form (``arXiv:…``, ``DOI:…``, ``CorpusId:…``, a bare DOI, a hash)."""
        return parse_paper(self.http.get(f"/paper/{paper_id}", {"fields": ",".join(fields)}))

    def papers(self, ids: Sequence[str], fields: Sequence[str] = PAPER_FIELDS) -> list[Paper | None]:
        """Papers by id, batched; one entry per id asked (None where S2 has none)."""
        result: list[Paper | None] = []
        for start in range(0, len(ids), PAPER_BATCH):
            chunk = list(ids[start : start + PAPER_BATCH])
            body = self.http.post("/paper/batch", {"ids": chunk}, {"fields": ",".join(fields)})
            result += [parse_paper(p) if p else None for p in body]
        return result

    def paper_authors(
        self, paper_id: str, fields: Sequence[str] = AUTHOR_FIELDS, *, limit: int = 100
    ) -> list[Author]:
        """All authors of a paper with their profiles (pages through ``offset``/``next``)."""
        return [parse_author(a) for a in self._pages(f"/paper/{paper_id}/authors", fields, limit)]

    def match_title(self, title: str, fields: Sequence[str] = PAPER_FIELDS) -> Paper:
        """S2's best title match; ``NotFound`` when it has none."""
        body = self.http.get("/paper/search/match", {"query": title, "fields": ",".join(fields)})
        data = body.get("data") or []
        if not data:
            raise NotFound(self.http.service, "/paper/search/match", f"no title match for {title!r}", 404)
        return parse_paper(data[0])

    # -- authors -------------------------------------------------------------------------------

    def author(self, author_id: str, fields: Sequence[str] = AUTHOR_FIELDS) -> Author:
        return parse_author(self.http.get(f"/author/{author_id}", {"fields": ",".join(fields)}))

    def authors(self, ids: Sequence[str], fields: Sequence[str] = AUTHOR_FIELDS) -> list[Author | None]:
        """Authors by S2 id, batched; one entry per id asked (None where S2 has none)."""
        result: list[Author | None] = []
        for start in range(0, len(ids), AUTHOR_BATCH):
            chunk = list(ids[start : start + AUTHOR_BATCH])
            body = self.http.post("/author/batch", {"ids": chunk}, {"fields": ",".join(fields)})
            result += [parse_author(a) if a else None for a in body]
        return result

    def author_papers(
        self, author_id: str, fields: Sequence[str] = ("title",), *, limit: int = 100
    ) -> Iterator[Paper]:
        """Every paper of an author (pages through ``offset``/``next``)."""
        for obj in self._pages(f"/author/{author_id}/papers", fields, limit):
            yield parse_paper(obj)

    def search_authors(
        self, query: str, fields: Sequence[str] = ("name",), *, limit: int = 100
    ) -> Iterator[Author]:
        for obj in self._pages("/author/search", fields, limit, query=query):
            yield parse_author(obj)

    def _pages(
        self, path: str, fields: Sequence[str], limit: int, **extra: str
    ) -> Iterator[Mapping[str, Any]]:
        offset: int | None = 0
        while offset is not None:
            body = self.http.get(
                path, {**extra, "fields": ",".join(fields), "offset": offset, "limit": limit}
            )
            yield from body.get("data") or []
            offset = body.get("next")
