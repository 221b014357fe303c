"""The JSON documents the API answers and the MCP tools return as structured content: papers,
researchers, institutions and search results, built from the same read-side queries as the pages.
Values that enrichment has not provided (h-index, citations, works total) are ``null``, never 0."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from litestar.exceptions import NotFoundException
from sqlalchemy.orm import Session

from app.ids import path_id
from app.rendering import markdown_path
from app.site import Site
from app.views.institutions import resolve
from app.views.prose import ATTRIBUTION_PATH
from catalog import arxiv_ids, researchers
from catalog.db import as_utc
from catalog.institutions import InstitutionFacts, InstitutionSummary, institution_researchers
from catalog.listing import Page
from catalog.papers import PaperDetail, PaperFacts, PaperSummary, paper_detail
from catalog.researchers import FieldCount, ResearcherProfile, coauthor_network, researcher_profile
from catalog.urls import paper_path
from retrieval.search import SearchResults


@dataclass
class Author:
    name: str
    researcher_id: int | None
    url: str | None


@dataclass
class PaperItem:
    arxiv_id: str
    title: str
    abstract: str
    authors: list[Author]
    primary_category: str | None
    activity_on: dt.date | None
    url: str
    markdown_url: str


@dataclass
class PaperList:
    items: list[PaperItem]
    page: int
    size: int
    total: int
    pages: int


@dataclass
class Affiliation:
    raw: str
    institution_id: int | None
    institution_url: str | None


@dataclass
class PaperAuthor:
    name: str
    researcher_id: int | None
    role: str
    url: str | None
    affiliations: list[Affiliation]


@dataclass
class Version:
    version: int
    submitted_at: dt.datetime | None
    size: str | None


FullTextStateName = Literal["none", "queued", "fetching", "parsing", "indexing", "indexed", "failed"]


@dataclass
class FullTextState:
    """Whether a paper's full text is held, and where getting it has got."""

    arxiv_id: str
    state: FullTextStateName
    held: bool  # the full text is indexed (search and chat use its pages)
    message: str  # one sentence for a person
    position: int | None  # while queued: 1 = next
    reason: str | None  # why it failed, or (while queued) why it is waiting to be tried again
    pages: int | None
    chunks: int | None
    can_request: bool  # asking would queue a fetch (none or failed)
    paper_url: str
    updated_at: dt.datetime | None
    requested: bool = False  # in an answer to an ask: this ask queued a new fetch


@dataclass(frozen=True)
class Paper(PaperFacts):
    authors: list[PaperAuthor]
    versions: list[Version]
    url: str
    markdown_url: str
    # Whether the full text is held, and where getting it has got (GET /api/papers/<id>/fulltext).
    full_text: FullTextState | None = None


@dataclass
class ResearcherItem:
    id: int
    name: str
    papers: int
    h_index: int | None
    citation_count: int | None
    url: str
    # What tells namesakes apart in a list (added after ``url``: older fields keep their order).
    first_year: int | None = None
    last_year: int | None = None
    categories: list[str] = field(default_factory=list)
    coauthors: list[Coauthor] = field(default_factory=list)
    institution: InstitutionRef | None = None


@dataclass
class ResearcherList:
    items: list[ResearcherItem]
    page: int
    size: int
    total: int
    pages: int


@dataclass
class Positions:
    first: int
    middle: int
    last: int
    papers_counted: int
    papers_total: int
    note: str


@dataclass
class Coauthor:
    id: int
    name: str
    shared_papers: int
    url: str


@dataclass
class InstitutionRef:
    id: int
    name: str
    ror_id: str | None
    country_name: str | None
    url: str


@dataclass(frozen=True)
class InstitutionItem(InstitutionSummary):
    url: str


@dataclass
class InstitutionList:
    items: list[InstitutionItem]
    page: int
    size: int
    total: int
    pages: int


@dataclass
class Researcher:
    id: int
    name: str
    url: str
    markdown_url: str
    papers: int
    h_index: int | None
    citation_count: int | None
    works_count: int | None
    metrics_source: str | None
    orcid: str | None
    openalex_id: str | None
    semantic_scholar_id: str | None
    positions: Positions
    fields: list[FieldCount]
    name_variants: list[str]
    same_name: list[ResearcherItem]  # others of the same name, told apart as in lists
    same_name_more: int
    attribution_url: str
    coauthors: list[Coauthor]
    institutions: list[InstitutionItem]


@dataclass(frozen=True)
class Institution(InstitutionFacts):
    researchers: list[ResearcherItem]
    url: str
    markdown_url: str


D = TypeVar("D")


def carry(document: type[D], *sources: Any, **added: Any) -> D:
    """A ``document`` holding the fields of the same name of the catalogue ``sources`` (the first
    that has one), with what the API adds or shows otherwise (URLs, linked parts) in ``added``: the
    one way a document is built, so a field both declare cannot be left behind
    (tests/unit/test_api_documents.py places the others)."""
    held = [(source, {f.name for f in dataclasses.fields(source)}) for source in sources]
    values: dict[str, Any] = {}
    for f in dataclasses.fields(document):  # type: ignore[arg-type]
        if f.name in added:
            values[f.name] = added[f.name]
            continue
        for source, names in held:
            if f.name in names:
                values[f.name] = getattr(source, f.name)
                break
    return document(**values)


def paper_item(site: Site, p: PaperSummary) -> PaperItem:
    return carry(
        PaperItem,
        p,
        authors=[carry(Author, a, url=site.url(a.path) if a.path else None) for a in p.authors],
        url=site.url(p.path),
        markdown_url=site.url(markdown_path(p.path)),
    )


def researcher_item(site: Site, r: researchers.Namesake) -> ResearcherItem:
    """A listed researcher (a search row, an institution's, another of the same name): the
    catalogue's namesake with its links."""
    i = r.institution
    return carry(
        ResearcherItem,
        r,
        coauthors=[_coauthor(site, c) for c in r.coauthors],
        institution=carry(InstitutionRef, i, url=site.url(i.path)) if i else None,
        url=site.url(r.path),
    )


def paper_list(site: Site, listing: Page[PaperSummary]) -> PaperList:
    items = [paper_item(site, p) for p in listing.items]
    return PaperList(items, listing.page, listing.size, listing.total, listing.pages)


def researcher_list(site: Site, listing: Page[researchers.Namesake]) -> ResearcherList:
    items = [researcher_item(site, r) for r in listing.items]
    return ResearcherList(items, listing.page, listing.size, listing.total, listing.pages)


def institution_list(site: Site, listing: Page[InstitutionSummary]) -> InstitutionList:
    items = [carry(InstitutionItem, i, url=site.url(i.path)) for i in listing.items]
    return InstitutionList(items, listing.page, listing.size, listing.total, listing.pages)


def _coauthor(site: Site, n: researchers.NetworkNode) -> Coauthor:
    return carry(Coauthor, n, shared_papers=n.shared, url=site.url(n.path))


def paper_document(site: Site, p: PaperDetail, full_text: FullTextState | None = None) -> Paper:
    authors = [
        carry(
            PaperAuthor,
            a,
            url=site.url(a.path) if a.path else None,
            affiliations=[
                carry(Affiliation, f, institution_url=site.url(f.path) if f.path else None)
                for f in a.affiliations
            ],
        )
        for a in p.authors
    ]
    return carry(
        Paper,
        p,
        authors=authors,
        versions=[
            carry(Version, v, version=v.number, submitted_at=as_utc(v.submitted_at)) for v in p.versions
        ],
        url=site.url(p.path),
        markdown_url=site.url(markdown_path(p.path)),
        full_text=full_text,
    )


def find_paper(db: Session, raw: str) -> PaperDetail:
    try:
        arxiv_id = arxiv_ids.parse(raw)
    except arxiv_ids.InvalidArxivId as exc:  # no such paper can exist: 404, saying why
        raise NotFoundException(detail=str(exc)) from exc
    paper = paper_detail(db, arxiv_id.canonical)
    if paper is None:
        raise NotFoundException(detail=f"arXiv:{arxiv_id.canonical} is not in this archive (yet).")
    return paper


def find_researcher(db: Session, raw: str) -> ResearcherProfile:
    researcher_id = path_id(raw, "researcher")
    profile = researcher_profile(db, researcher_id)
    if profile is None:
        raise NotFoundException(detail=f"There is no researcher with id {researcher_id}.")
    return profile


def researcher_document(db: Session, site: Site, raw: str) -> Researcher:
    """The researcher ``raw`` names (an id), as the API answers it; 404 when there is none."""
    profile = find_researcher(db, raw)
    network = coauthor_network(db, profile.id)
    p, same = profile.positions, profile.same_name
    return carry(
        Researcher,
        profile,
        url=site.url(profile.path),
        markdown_url=site.url(markdown_path(profile.path)),
        positions=carry(
            Positions,
            p,
            papers_counted=p.counted,
            papers_total=p.total,
            note="Counted over the papers where every author was matched to a researcher.",
        ),
        same_name=[researcher_item(site, n) for n in same.others] if same else [],
        same_name_more=same.more if same else 0,
        attribution_url=site.url(ATTRIBUTION_PATH),
        coauthors=[_coauthor(site, n) for n in (network.nodes if network else [])],
        institutions=[
            carry(InstitutionItem, i, city=None, papers=0, url=site.url(i.path)) for i in profile.institutions
        ],
    )


def institution_id(db: Session, ident: str) -> int:
    return resolve(db, ident).id


def institution_document(db: Session, site: Site, ident: str) -> Institution:
    """The institution ``ident`` names (id, ROR id or name), as the API answers it; 404 otherwise."""
    detail = resolve(db, ident)
    return carry(
        Institution,
        detail,
        researchers=[
            researcher_item(site, r.told)
            if r.told
            else ResearcherItem(r.id, r.name, r.papers, r.h_index, None, site.url(r.path))
            for r in institution_researchers(db, detail.id, limit=30)
        ],
        url=site.url(detail.path),
        markdown_url=site.url(markdown_path(detail.path)),
    )


# -- search ----------------------------------------------------------------------------------------


@dataclass
class SearchAuthor:
    name: str
    researcher_id: int | None
    url: str | None


@dataclass
class SearchSnippet:
    text: str
    highlights: list[list[int]]  # [start, end) character offsets of matched query words in `text`
    kind: str  # "abstract" or "body" (full text)
    page_start: int | None
    page_end: int | None
    section: str | None


@dataclass
class SearchChunkHit:
    chunk_id: str
    kind: str
    page_start: int | None
    page_end: int | None
    section: str | None
    lexical_rank: int | None
    dense_rank: int | None


@dataclass
class SearchItem:
    rank: int
    arxiv_id: str
    title: str
    authors: list[SearchAuthor]
    categories: list[str]
    primary_category: str | None
    activity_on: dt.date | None
    url: str
    markdown_url: str
    score: float | None
    fused_rank: int | None
    lexical_rank: int | None
    dense_rank: int | None
    snippet: SearchSnippet | None
    pages: list[int]
    chunks: list[SearchChunkHit]


@dataclass
class SearchFacet:
    category: str
    count: int


@dataclass
class SearchAnswer:
    query: str
    mode: str
    sort: str
    category: str | None
    date_from: dt.date | None
    date_to: dt.date | None
    researcher_id: int | None
    page: int
    size: int
    total: int
    pages: int
    capped: bool
    items: list[SearchItem]
    facets: list[SearchFacet]
    terms: list[str]
    took_ms: float
    notes: list[str]


def search_answer(results: SearchResults, site_url: Any) -> SearchAnswer:
    req = results.request
    items = []
    for hit in results.hits:
        p = hit.paper
        path = paper_path(p.arxiv_id, p.title)
        s = hit.snippet
        items.append(
            carry(
                SearchItem,
                hit,
                p,
                authors=[carry(SearchAuthor, a, url=site_url(a.path) if a.path else None) for a in p.authors],
                url=site_url(path),
                markdown_url=site_url(markdown_path(path)),
                score=round(hit.score, 6) if hit.score is not None else None,
                snippet=carry(SearchSnippet, s, highlights=[list(h) for h in s.highlights]) if s else None,
                pages=hit.pages,
                chunks=[carry(SearchChunkHit, c) for c in hit.chunks[:10]],
            )
        )
    return carry(
        SearchAnswer,
        results,
        req,
        req.filters,
        query=req.q,
        pages=results.pages,
        items=items,
        facets=[SearchFacet(c, n) for c, n in results.facets],
        took_ms=round(results.took_ms, 2),
    )
