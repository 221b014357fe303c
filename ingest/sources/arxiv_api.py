"""The arXiv API (``export.arxiv.org/api/query``): look papers up by id or search, parse the Atom.

Each entry becomes a :class:`~ingest.records.PaperRecord`: versions from the id's ``vN`` with the
``published`` date on v1 and the ``updated`` date on the latest (dates of versions in between are not
in the feed), authors in order with their ``arxiv:affiliation`` where given, categories with the
primary first, DOI, journal reference and comments. An entry that cannot be read becomes a
:class:`~ingest.records.RecordError` (its 1-based position in the result list); a request arXiv
rejects (HTTP 400 with an Atom error entry, e.g. a malformed id) raises :class:`ArxivApiError` with
arXiv's own message. Requests are paced and retried by :mod:`ingest.http`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from catalog import arxiv_ids
from catalog.text import clean_text
from ingest.http import PoliteClient, Reply, arxiv_client
from ingest.records import BadRecord, PaperRecord, RecordError, Version, make_record
from ingest.sources import HarvestError
from settings import Settings

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
MAX_PAGE_SIZE = 2000  # arXiv refuses larger slices
_ERROR_ID = "arxiv.org/api/errors"

SortBy = Literal["relevance", "lastUpdatedDate", "submittedDate"]
SortOrder = Literal["ascending", "descending"]
Item = PaperRecord | RecordError


class ArxivApiError(HarvestError):
    """arXiv rejected a query, or answered with something that is not an Atom feed."""


@dataclass(frozen=True, slots=True)
class Feed:
    """One page of results: the records and where the page sits in the whole result list."""

    total: int
    start: int
    items: list[Item]


# -- parsing -------------------------------------------------------------------------------------


def parse_feed(body: bytes | str, *, source: str = "arXiv API") -> Feed:
    """Parse one Atom response; raise :class:`ArxivApiError` for an error feed or non-Atom input."""
    root = _feed(body, source)
    problems = _rejections(root)
    if problems:
        raise ArxivApiError(f"{source}: arXiv rejected the query: {'; '.join(problems)}")
    entries = root.findall(f"{ATOM}entry")
    start = _int(root, f"{OPENSEARCH}startIndex", 0)
    total = _int(root, f"{OPENSEARCH}totalResults", len(entries))
    items: list[Item] = []
    for position, entry in enumerate(entries, start=start + 1):
        try:
            items.append(parse_entry(entry))
        except BadRecord as exc:
            items.append(RecordError(source, position, str(exc)))
    return Feed(total=total, start=start, items=items)


def parse_entry(entry: Element) -> PaperRecord:
    """One ``<entry>``; raises :class:`BadRecord` with the reason when it cannot be used."""
    raw_id = _text(entry, f"{ATOM}id")
    if not raw_id:
        raise BadRecord("entry without <id>")
    try:
        parsed = arxiv_ids.parse(raw_id)
    except arxiv_ids.InvalidArxivId as exc:
        raise BadRecord(str(exc)) from None
    published = _timestamp(entry, f"{ATOM}published")
    updated = _timestamp(entry, f"{ATOM}updated")
    authors: list[str] = []
    affiliations: dict[str, tuple[str, ...]] = {}
    for author in entry.findall(f"{ATOM}author"):
        name = clean_text(_text(author, f"{ATOM}name"))
        if not name:
            continue
        authors.append(name)
        places = tuple(a for e in author.findall(f"{ARXIV}affiliation") if (a := clean_text(e.text or "")))
        if places:
            affiliations[name] = affiliations.get(name, ()) + places
    primary = entry.find(f"{ARXIV}primary_category")
    terms = [c.get("term", "") for c in entry.findall(f"{ATOM}category")]
    if primary is not None and primary.get("term"):
        terms.insert(0, primary.get("term", ""))
    links = entry.findall(f"{ATOM}link")
    return make_record(
        raw_id=parsed.canonical,
        title=_text(entry, f"{ATOM}title"),
        abstract=_text(entry, f"{ATOM}summary"),
        authors=authors,
        categories=terms,
        versions=_versions(parsed.version, published, updated),
        doi=_text(entry, f"{ARXIV}doi") or None,
        journal_ref=_text(entry, f"{ARXIV}journal_ref") or None,
        comments=_text(entry, f"{ARXIV}comment") or None,
        abs_url=next((x.get("href") for x in links if x.get("rel") == "alternate"), None),
        pdf_url=next((x.get("href") for x in links if x.get("title") == "pdf"), None),
        affiliations=affiliations,
    )


def _versions(
    latest: int | None, published: dt.datetime | None, updated: dt.datetime | None
) -> tuple[Version, ...]:
    """v1 carries ``published``, the latest version ``updated``; versions between have no date here."""
    if latest is None:
        return ()
    if latest == 1:
        return (Version(1, published or updated),)
    middle = tuple(Version(n) for n in range(2, latest))
    return (Version(1, published), *middle, Version(latest, updated))


def _feed(body: bytes | str, source: str) -> Element:
    try:
        root = fromstring(body)
    except (ParseError, DefusedXmlException) as exc:
        raise ArxivApiError(f"{source}: the response is not well-formed XML ({exc})") from None
    if root.tag != f"{ATOM}feed":
        raise ArxivApiError(f"{source}: expected an Atom feed, got <{_local(root.tag)}>")
    return root


def _rejections(feed: Element) -> list[str]:
    """arXiv reports a rejected query as entries whose id points into its errors page."""
    return [
        _text(e, f"{ATOM}summary") or "unknown error"
        for e in feed.findall(f"{ATOM}entry")
        if _ERROR_ID in _text(e, f"{ATOM}id")
    ]


def _text(element: Element, path: str) -> str:
    found = element.find(path)
    return (found.text or "") if found is not None else ""


def _int(element: Element, path: str, default: int) -> int:
    try:
        return int(_text(element, path))
    except ValueError:
        return default


def _timestamp(element: Element, path: str) -> dt.datetime | None:
    text = _text(element, path).strip()
    try:
        return dt.datetime.fromisoformat(text) if text else None
    except ValueError:
        raise BadRecord(f"bad timestamp {text!r:.40}") from None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


# -- the client ----------------------------------------------------------------------------------


class ArxivClient:
    """Queries the arXiv API through a client paced and retried as every arXiv request is
    (:func:`ingest.http.arxiv_client`)."""

    def __init__(
        self,
        http: PoliteClient,
        *,
        base_url: str = "https://export.arxiv.org/api/query",
        page_size: int = 100,
    ) -> None:
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be between 1 and {MAX_PAGE_SIZE}, not {page_size}")
        self.base_url = base_url
        self.page_size = page_size
        self._http = http

    @classmethod
    def from_settings(cls, settings: Settings) -> ArxivClient:
        conf = settings.arxiv
        return cls(arxiv_client(settings), base_url=conf.arxiv_api_url, page_size=conf.arxiv_page_size)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ArxivClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def query(
        self,
        *,
        search_query: str = "",
        id_list: Sequence[str] = (),
        start: int = 0,
        max_results: int | None = None,
        sort_by: SortBy = "relevance",
        sort_order: SortOrder = "descending",
    ) -> Feed:
        """One request, as the API takes it: ids and query strings are passed through unchanged."""
        max_results = self.page_size if max_results is None else max_results
        if not 0 <= max_results <= MAX_PAGE_SIZE:
            raise ValueError(f"max_results must be between 0 and {MAX_PAGE_SIZE}, not {max_results}")
        if start < 0:
            raise ValueError(f"start must not be negative, not {start}")
        params = {
            "search_query": search_query,
            "id_list": ",".join(id_list),
            "sortBy": sort_by,
            "sortOrder": sort_order,
            "start": str(start),
            "max_results": str(max_results),
        }
        label = f"arXiv API ({'search ' + repr(search_query) if search_query else 'ids'}, start {start})"
        reply = self._http.get(self.base_url, params)
        if reply.status != 200:
            raise ArxivApiError(f"{label}: HTTP {reply.status}: {_error_message(reply)}")
        return parse_feed(reply.content, source=label)

    def fetch(self, ids: Iterable[str]) -> Iterator[Feed]:
        """Look papers up by id (any spelling ``catalog.arxiv_ids`` accepts, with or without ``vN``),
        ``page_size`` ids per request. Every id is checked before the first request, so a malformed
        one raises :class:`~catalog.arxiv_ids.InvalidArxivId` and nothing is fetched. An id arXiv
        does not know comes back as a :class:`RecordError` at the end of its page."""
        wanted = list(dict.fromkeys(arxiv_ids.parse(raw).versioned for raw in ids))
        for first in range(0, len(wanted), self.page_size):
            chunk = wanted[first : first + self.page_size]
            feed = self.query(id_list=chunk)
            found = {i.arxiv_id for i in feed.items if isinstance(i, PaperRecord)}  # canonical ids
            missing = [
                RecordError("arXiv API (ids)", first + n, f"{raw}: arXiv has no such paper")
                for n, raw in enumerate(chunk, start=1)
                if arxiv_ids.parse(raw).canonical not in found
            ]
            yield Feed(total=len(wanted), start=first, items=[*feed.items, *missing])

    def search(
        self,
        search_query: str,
        *,
        max_results: int,
        start: int = 0,
        sort_by: SortBy = "relevance",
        sort_order: SortOrder = "descending",
    ) -> Iterator[Feed]:
        """Page through a search (``all:electron``, ``au:del_maestro AND ti:checkerboard`` …) until
        ``max_results`` records or the end of the results. arXiv now and then answers a page with no
        entries although more exist; such a page is asked again (up to ``retries`` times)."""
        if not search_query.strip():
            raise ValueError("an empty search query matches nothing")
        fetched = 0
        empty_tries = 0
        while fetched < max_results:
            size = min(self.page_size, max_results - fetched)
            feed = self.query(
                search_query=search_query,
                start=start + fetched,
                max_results=size,
                sort_by=sort_by,
                sort_order=sort_order,
            )
            if not feed.items:
                if start + fetched >= feed.total:
                    return
                empty_tries += 1
                if empty_tries > self._http.politeness.retries:
                    raise ArxivApiError(
                        f"arXiv API: empty page at {start + fetched} of {feed.total} results "
                        f"{empty_tries} times in a row; try again later"
                    )
                continue
            empty_tries = 0
            fetched += len(feed.items)
            yield feed
            if start + fetched >= feed.total:
                return


def _error_message(reply: Reply) -> str:
    """arXiv's own words from an error response (an Atom error entry), else the status text."""
    try:
        problems = _rejections(_feed(reply.content, ""))
    except ArxivApiError:
        problems = []
    return "; ".join(problems) or reply.reason or "unexpected response"
