"""OpenAlex: works (citation counts, authorships with positions, institutions with ROR ids), authors
(h-index, citations, works total, ORCID, affiliations) and institutions.

Polite use: the contact e-mail goes out as ``mailto`` (OpenAlex's polite pool) and an API key as
``api_key`` when configured; requests are paced and retried by :mod:`ingest.http`. Lists
are asked for in batches of up to 50 ids with an OR filter (``doi:a|b|…``), so enriching 20,000 papers
takes 400 requests rather than 20,000. Ids are kept short (``W2741809807``, ``A5023888391``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from catalog import arxiv_ids
from catalog.institutions import ror_id_of
from catalog.text import clean_text
from coordination.pacing import Pacer
from ingest.enrich.transport import JsonClient, politeness
from settings import EnrichmentSettings

BATCH = 50  # OpenAlex accepts up to 50 values in one OR filter
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^?#]+?)(?:v\d+)?(?:\.pdf)?$", re.I)
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$", re.I)


def short_id(value: str | None) -> str | None:
    """``https://openalex.org/W2741809807`` → ``W2741809807`` (already short ids pass through)."""
    if not value:
        return None
    return value.rstrip("/").rsplit("/", 1)[-1] or None


def bare_doi(value: str | None) -> str | None:
    """``https://doi.org/10.7717/PeerJ.4375`` → ``10.7717/peerj.4375`` (DOIs compare case-insensitively)."""
    if not value:
        return None
    value = value.strip()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if value.lower().startswith(prefix):
            value = value[len(prefix) :]
    return value.lower() or None


def bare_orcid(value: str | None) -> str | None:
    """``https://orcid.org/0000-0001-6187-6610`` → ``0000-0001-6187-6610``."""
    if not value:
        return None
    match = _ORCID.search(value.strip())
    return match.group(1).upper() if match else None


def arxiv_doi(arxiv_id: str) -> str:
    """The DataCite DOI arXiv registers for a paper (how OpenAlex knows arXiv preprints)."""
    return f"10.48550/arxiv.{arxiv_id}".lower()


@dataclass(frozen=True, slots=True)
class InstitutionRef:
    """An institution as OpenAlex names it on a work or an author."""

    openalex_id: str | None
    ror_id: str | None  # bare
    name: str
    country_code: str | None = None
    type: str | None = None


@dataclass(frozen=True, slots=True)
class Authorship:
    index: int  # 0-based order on the work
    author_position: str | None  # "first" | "middle" | "last"
    author_id: str | None
    name: str  # OpenAlex's display name of the author
    raw_name: str | None  # as printed on the work
    orcid: str | None
    institutions: tuple[InstitutionRef, ...]
    # (printed affiliation, OpenAlex ids of the institutions it names); empty in older answers
    affiliations: tuple[tuple[str, tuple[str, ...]], ...]
    raw_affiliations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Work:
    id: str
    doi: str | None
    title: str
    cited_by_count: int | None
    authorships: tuple[Authorship, ...]
    arxiv_id: str | None


@dataclass(frozen=True, slots=True)
class Author:
    id: str
    display_name: str
    orcid: str | None
    works_count: int | None
    cited_by_count: int | None
    h_index: int | None  # None when the answer has no summary_stats (older API versions)
    affiliations: tuple[tuple[InstitutionRef, tuple[int, ...]], ...]

    @property
    def is_deleted(self) -> bool:
        """OpenAlex keeps merged-away profiles as "Deleted Author" with zero everything: no figures."""
        return self.display_name == "Deleted Author" or not self.works_count


def parse_institution(obj: Mapping[str, Any]) -> InstitutionRef:
    return InstitutionRef(
        openalex_id=short_id(obj.get("id")),
        ror_id=ror_id_of(str(obj.get("ror") or "")),
        name=clean_text(str(obj.get("display_name") or "")),
        country_code=obj.get("country_code") or None,
        type=obj.get("type") or None,
    )


def parse_work(obj: Mapping[str, Any]) -> Work:
    doi = bare_doi(obj.get("doi")) or bare_doi((obj.get("ids") or {}).get("doi"))
    authorships = []
    for index, a in enumerate(obj.get("authorships") or []):
        author = a.get("author") or {}
        authorships.append(
            Authorship(
                index=index,
                author_position=a.get("author_position"),
                author_id=short_id(author.get("id")),
                name=clean_text(str(author.get("display_name") or a.get("raw_author_name") or "")),
                raw_name=clean_text(a["raw_author_name"]) if a.get("raw_author_name") else None,
                orcid=bare_orcid(author.get("orcid")),
                institutions=tuple(parse_institution(i) for i in a.get("institutions") or []),
                affiliations=tuple(
                    (
                        clean_text(str(f.get("raw_affiliation_string") or "")),
                        tuple(s for s in (short_id(i) for i in f.get("institution_ids") or []) if s),
                    )
                    for f in a.get("affiliations") or []
                    if f.get("raw_affiliation_string")
                ),
                raw_affiliations=tuple(clean_text(s) for s in a.get("raw_affiliation_strings") or [] if s),
            )
        )
    return Work(
        id=short_id(obj.get("id")) or "",
        doi=doi,
        title=clean_text(str(obj.get("display_name") or obj.get("title") or "")),
        cited_by_count=obj.get("cited_by_count"),
        authorships=tuple(authorships),
        arxiv_id=_arxiv_id_of(obj, doi),
    )


def _arxiv_id_of(obj: Mapping[str, Any], doi: str | None) -> str | None:
    candidates: list[str] = []
    if doi and (m := _ARXIV_DOI.match(doi)):
        candidates.append(m.group(1))
    for location in obj.get("locations") or []:
        url = (location or {}).get("landing_page_url") or ""
        if m := _ARXIV_URL.search(url):
            candidates.append(m.group(1))
    for candidate in candidates:
        try:
            return arxiv_ids.parse(candidate).canonical
        except ValueError:
            continue
    return None


def parse_author(obj: Mapping[str, Any]) -> Author:
    stats = obj.get("summary_stats") or {}
    affiliations = [
        (parse_institution(a["institution"]), tuple(sorted(int(y) for y in a.get("years") or [])))
        for a in obj.get("affiliations") or []
        if a.get("institution")
    ]
    if not affiliations:  # older answers: only the last known institution(s)
        last = obj.get("last_known_institutions") or (
            [obj["last_known_institution"]] if obj.get("last_known_institution") else []
        )
        affiliations = [(parse_institution(i), ()) for i in last]
    return Author(
        id=short_id(obj.get("id")) or "",
        display_name=clean_text(str(obj.get("display_name") or "")),
        orcid=bare_orcid(obj.get("orcid")),
        works_count=obj.get("works_count"),
        cited_by_count=obj.get("cited_by_count"),
        h_index=stats.get("h_index"),
        affiliations=tuple(affiliations),
    )


T = TypeVar("T")


def _batched_or(values: Iterable[str | None]) -> Iterator[str]:
    """The distinct non-empty values, ``|``-joined ``BATCH`` at a time (the values of one OR filter)."""
    wanted = list(dict.fromkeys(v for v in values if v))
    for start in range(0, len(wanted), BATCH):
        yield "|".join(wanted[start : start + BATCH])


class OpenAlexClient:
    """The OpenAlex REST API."""

    def __init__(
        self, settings: EnrichmentSettings, pacer: Pacer, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.http = JsonClient(
            "OpenAlex",
            settings.openalex_base_url,
            politeness(settings, settings.openalex_rate_limit),
            pacer,
            params={"mailto": settings.openalex_mailto, "api_key": settings.openalex_api_key},
            sleep=sleep,
        )

    def close(self) -> None:
        self.http.close()

    # -- works ---------------------------------------------------------------------------------

    def work(self, ref: str, *, select: Sequence[str] = ()) -> Work:
        """One work by OpenAlex id (``W…``) or DOI; ``NotFound`` if OpenAlex has none. ``select``
        asks for only some fields (missing ones parse as unknown)."""
        doi = bare_doi(ref) if "/" in ref else None
        path = f"/works/https://doi.org/{quote(doi, safe='/:')}" if doi else f"/works/{short_id(ref)}"
        return parse_work(self.http.get(path, {"select": ",".join(select) if select else None}))

    def works(
        self, *, filter: str, per_page: int | None = None, cursor: str | None = None
    ) -> tuple[int, list[Work], str | None]:
        """One page of a filtered list: (total count, works, next cursor or None)."""
        body = self.http.get("/works", {"filter": filter, "per-page": per_page, "cursor": cursor})
        meta = body.get("meta") or {}
        return (
            int(meta.get("count") or 0),
            [parse_work(w) for w in body.get("results") or []],
            meta.get("next_cursor"),
        )

    def iter_works(self, *, filter: str, per_page: int = 200) -> Iterator[Work]:
        """Every work of a filter, following cursors."""
        cursor: str | None = "*"
        while cursor:
            _count, page, cursor = self.works(filter=filter, per_page=per_page, cursor=cursor)
            if not page:
                return
            yield from page

    def works_by_doi(self, dois: Sequence[str]) -> dict[str, Work]:
        """The works OpenAlex has for these DOIs, keyed by bare lower-case DOI (missing ones absent)."""
        works = self._any_of("/works", "doi", (bare_doi(x) for x in dois), parse_work)
        return {work.doi: work for work in works if work.doi}

    def _any_of(
        self, path: str, field: str, values: Iterable[str | None], parse: Callable[[Any], T]
    ) -> Iterator[T]:
        """What ``path`` lists for any of ``values`` of ``field``: one OR filter a ``BATCH`` of them."""
        for ors in _batched_or(values):
            body = self.http.get(path, {"filter": f"{field}:{ors}", "per-page": BATCH})
            yield from (parse(obj) for obj in body.get("results") or [])

    # -- authors -------------------------------------------------------------------------------

    def author(self, ref: str) -> Author:
        """One author by OpenAlex id (``A…``) or ORCID; a merged id answers with its new id."""
        orcid = bare_orcid(ref)
        path = f"/authors/https://orcid.org/{orcid}" if orcid else f"/authors/{short_id(ref)}"
        return parse_author(self.http.get(path))

    def authors_by_id(self, ids: Sequence[str]) -> dict[str, Author]:
        """Authors by OpenAlex id, batched; keyed by the id OpenAlex answers with."""
        authors = self._any_of("/authors", "openalex", (short_id(i) for i in ids), parse_author)
        return {author.id: author for author in authors}

    # -- institutions --------------------------------------------------------------------------

    def institution(self, ref: str) -> InstitutionRef:
        """One institution by OpenAlex id (``I…``) or ROR id."""
        ror = ror_id_of(ref)
        path = f"/institutions/ror:{ror}" if ror else f"/institutions/{short_id(ref)}"
        return parse_institution(self.http.get(path))
