"""The JSON API under ``/api`` (described at ``/openapi.json``): papers, researchers, institutions.

Answers are plain JSON documents built from the same read-side queries as the pages. Values that
enrichment has not provided (h-index, citations, works total) are ``null``, never 0. Errors come
from :mod:`app.errors` as ``{"status_code": …, "detail": …}``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Request, get
from litestar.exceptions import NotFoundException
from litestar.params import Parameter, PathParameter
from sqlalchemy.orm import Session

from app.params import Category, InstitutionQuery, ResearcherQuery, checked_category
from app.rendering import AppPages, markdown_path
from app.services import DB
from app.site import Site
from app.views.institutions import resolve
from app.views.prose import ATTRIBUTION_PATH
from catalog import arxiv_ids, queries
from catalog.institutions import institution_papers, institution_researchers
from catalog.queries import (
    PaperDetail,
    PaperSummary,
    ResearcherProfile,
    ResearcherSummary,
    coauthor_network,
    institution_detail,
    list_institutions,
    list_researchers,
    newest_papers,
    paper_detail,
    researcher_papers,
    researcher_profile,
)
from catalog.row_ids import parse_row_id

PageNumber = Annotated[int, Parameter(ge=1, le=100_000, description="1-based page number")]
PageSize = Annotated[int, Parameter(ge=1, le=100, description="Items per page (at most 100)")]
# Ids in the path are parsed by the handler (:mod:`catalog.row_ids`): anything that is not a
# researcher's id — a word, -1, a number beyond every row — names nothing and gets a 404, as on the
# pages. The schema documents the form an id takes.
ResearcherId = Annotated[
    str,
    PathParameter(
        description="A researcher id, as in /researchers/<id>-<name>",
        schema_extra={"pattern": "^[0-9]+$"},
    ),
]
# Documented error answers; 400 (invalid parameters) Litestar documents by itself.
NOT_FOUND = [NotFoundException]


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


@dataclass
class Paper:
    arxiv_id: str
    title: str
    abstract: str
    authors: list[PaperAuthor]
    categories: list[str]
    versions: list[Version]
    latest_version: int | None
    published_on: dt.date | None
    updated_on: dt.date | None
    announced_on: dt.date | None
    doi: str | None
    journal_ref: str | None
    comments: str | None
    license: str | None
    abs_url: str
    pdf_url: str
    citation_count: int | None
    url: str
    markdown_url: str


@dataclass
class ResearcherItem:
    id: int
    name: str
    papers: int
    h_index: int | None
    citation_count: int | None
    url: str


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
class FieldCount:
    category: str
    papers: int


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


@dataclass
class Namesake:
    """Another researcher of the same name, with what tells them apart."""

    id: int
    name: str
    papers: int
    first_year: int | None
    last_year: int | None
    categories: list[str]
    coauthors: list[Coauthor]
    institution: InstitutionRef | None
    h_index: int | None
    citation_count: int | None
    url: str


@dataclass
class InstitutionItem:
    id: int
    name: str
    ror_id: str | None
    city: str | None
    country_name: str | None
    papers: int
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
    same_name: list[Namesake]
    same_name_more: int
    attribution_url: str
    coauthors: list[Coauthor]
    institutions: list[InstitutionItem]


@dataclass
class Institution:
    id: int
    name: str
    ror_id: str | None
    aliases: list[str]
    acronyms: list[str]
    types: list[str]
    city: str | None
    country_code: str | None
    country_name: str | None
    website: str | None
    established: int | None
    papers: int
    researchers: list[ResearcherItem]
    url: str
    markdown_url: str


def utc(moment: dt.datetime | None) -> dt.datetime | None:
    """A catalogue time as JSON states it: the catalogue keeps UTC without an offset (SQLite has no
    time zones); the schema's ``date-time`` needs one."""
    return moment.replace(tzinfo=dt.UTC) if moment is not None and moment.tzinfo is None else moment


def _paper_item(site: Site, p: PaperSummary) -> PaperItem:
    authors = [Author(a.name, a.researcher_id, site.url(a.path) if a.path else None) for a in p.authors]
    return PaperItem(
        p.arxiv_id, p.title, p.abstract, authors, p.primary_category, p.activity_on,
        site.url(p.path), site.url(markdown_path(p.path)),
    )  # fmt: skip


def _researcher_item(site: Site, r: ResearcherSummary) -> ResearcherItem:
    return ResearcherItem(r.id, r.name, r.papers, r.h_index, r.citation_count, site.url(r.path))


def _namesake(site: Site, n: queries.Namesake) -> Namesake:
    i = n.institution
    return Namesake(
        id=n.id,
        name=n.name,
        papers=n.papers,
        first_year=n.first_year,
        last_year=n.last_year,
        categories=n.categories,
        coauthors=[Coauthor(c.id, c.name, c.shared, site.url(c.path)) for c in n.coauthors],
        institution=InstitutionRef(i.id, i.name, i.ror_id, i.country_name, site.url(i.path)) if i else None,
        h_index=n.h_index,
        citation_count=n.citation_count,
        url=site.url(n.path),
    )


def paper_document(site: Site, p: PaperDetail) -> Paper:
    authors = [
        PaperAuthor(
            a.name,
            a.researcher_id,
            a.role,
            site.url(a.path) if a.path else None,
            [
                Affiliation(f.raw, f.institution_id, site.url(f.path) if f.path else None)
                for f in a.affiliations
            ],
        )
        for a in p.authors
    ]
    return Paper(
        arxiv_id=p.arxiv_id,
        title=p.title,
        abstract=p.abstract,
        authors=authors,
        categories=p.categories,
        versions=[Version(v.number, utc(v.submitted_at), v.size) for v in p.versions],
        latest_version=p.latest_version,
        published_on=p.published_on,
        updated_on=p.updated_on,
        announced_on=p.announced_on,
        doi=p.doi,
        journal_ref=p.journal_ref,
        comments=p.comments,
        license=p.license,
        abs_url=p.abs_url,
        pdf_url=p.pdf_url,
        citation_count=p.citation_count,
        url=site.url(p.path),
        markdown_url=site.url(markdown_path(p.path)),
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


def _find_researcher(db: Session, raw: str) -> ResearcherProfile:
    researcher_id = parse_row_id(raw)
    if researcher_id is None:
        raise NotFoundException(detail="There is no such researcher: ids are whole numbers from 1, e.g. 42.")
    profile = researcher_profile(db, researcher_id)
    if profile is None:
        raise NotFoundException(detail=f"There is no researcher with id {researcher_id}.")
    return profile


@get("/api/papers", sync_to_thread=True, tags=["papers"], summary="Newest papers")
def api_papers(
    pages: AppPages, db: DB, category: Category = None, page: PageNumber = 1, size: PageSize = 24
) -> PaperList:
    listing = newest_papers(db, page=page, size=size, category=checked_category(category))
    items = [_paper_item(pages.site, p) for p in listing.items]
    return PaperList(items, listing.page, listing.size, listing.total, listing.pages)


@get(
    "/api/papers/{arxiv_id:str}", sync_to_thread=True, tags=["papers"], summary="One paper", raises=NOT_FOUND
)
def api_paper(
    pages: AppPages,
    db: DB,
    arxiv_id: Annotated[str, PathParameter(max_length=128, description="e.g. 1706.03762 or 1706.03762v5")],
) -> Paper:
    return paper_document(pages.site, find_paper(db, arxiv_id))


@get(
    "/api/papers/{archive:str}/{number:str}",
    sync_to_thread=True,
    tags=["papers"],
    summary="One paper by old-style id",
    raises=NOT_FOUND,
)
def api_old_style_paper(
    pages: AppPages,
    db: DB,
    archive: Annotated[str, PathParameter(max_length=64, description="e.g. hep-th or math.GT")],
    number: Annotated[str, PathParameter(max_length=64, description="e.g. 9901001")],
) -> Paper:
    return paper_document(pages.site, find_paper(db, f"{archive}/{number}"))


@get(
    "/api/researchers",
    sync_to_thread=True,
    tags=["researchers"],
    summary="Researchers",
)
def api_researchers(
    pages: AppPages, db: DB, q: ResearcherQuery = None, page: PageNumber = 1, size: PageSize = 24
) -> ResearcherList:
    listing = list_researchers(db, query=q, page=page, size=size)
    items = [_researcher_item(pages.site, r) for r in listing.items]
    return ResearcherList(items, listing.page, listing.size, listing.total, listing.pages)


def researcher_document(db: Session, site: Site, raw: str) -> Researcher:
    """The researcher ``raw`` names (an id), as the API answers it; 404 when there is none."""
    profile = _find_researcher(db, raw)
    network = coauthor_network(db, profile.id)
    p, same = profile.positions, profile.same_name
    return Researcher(
        id=profile.id,
        name=profile.name,
        url=site.url(profile.path),
        markdown_url=site.url(markdown_path(profile.path)),
        papers=profile.papers,
        h_index=profile.h_index,
        citation_count=profile.citation_count,
        works_count=profile.works_count,
        metrics_source=profile.metrics_source,
        orcid=profile.orcid,
        openalex_id=profile.openalex_id,
        semantic_scholar_id=profile.semantic_scholar_id,
        positions=Positions(
            p.first,
            p.middle,
            p.last,
            p.counted,
            p.total,
            "Counted over the papers where every author was matched to a researcher.",
        ),
        fields=[FieldCount(f.category, f.papers) for f in profile.fields],
        name_variants=profile.name_variants,
        same_name=[_namesake(site, n) for n in same.others] if same else [],
        same_name_more=same.more if same else 0,
        attribution_url=site.url(ATTRIBUTION_PATH),
        coauthors=[
            Coauthor(n.id, n.name, n.shared, site.url(n.path)) for n in (network.nodes if network else [])
        ],
        institutions=[
            InstitutionItem(i.id, i.name, i.ror_id, None, i.country_name, 0, site.url(i.path))
            for i in profile.institutions
        ],
    )


@get(
    "/api/researchers/{researcher_id:str}",
    sync_to_thread=True,
    tags=["researchers"],
    summary="One researcher",
    raises=NOT_FOUND,
)
def api_researcher(pages: AppPages, db: DB, researcher_id: ResearcherId) -> Researcher:
    return researcher_document(db, pages.site, researcher_id)


@get(
    "/api/researchers/{researcher_id:str}/papers",
    sync_to_thread=True,
    tags=["researchers"],
    summary="A researcher's papers, newest first",
    raises=NOT_FOUND,
)
def api_researcher_papers(
    pages: AppPages,
    db: DB,
    researcher_id: ResearcherId,
    category: Category = None,
    page: PageNumber = 1,
    size: PageSize = 24,
) -> PaperList:
    profile = _find_researcher(db, researcher_id)
    listing = researcher_papers(db, profile.id, page=page, size=size, category=checked_category(category))
    items = [_paper_item(pages.site, p) for p in listing.items]
    return PaperList(items, listing.page, listing.size, listing.total, listing.pages)


@get(
    "/api/institutions",
    sync_to_thread=True,
    tags=["institutions"],
    summary="Institutions",
)
def api_institutions(
    pages: AppPages, db: DB, q: InstitutionQuery = None, page: PageNumber = 1, size: PageSize = 24
) -> InstitutionList:
    listing = list_institutions(db, query=q, page=page, size=size)
    items = [
        InstitutionItem(i.id, i.name, i.ror_id, i.city, i.country_name, i.papers, pages.site.url(i.path))
        for i in listing.items
    ]
    return InstitutionList(items, listing.page, listing.size, listing.total, listing.pages)


InstitutionIdent = Annotated[
    str, PathParameter(max_length=300, description="An id, `ror:<ROR id>`, a bare ROR id, or a name")
]


def _institution_id(db: Session, ident: str) -> int:
    return resolve(db, ident).id


def institution_document(db: Session, site: Site, ident: str) -> Institution:
    """The institution ``ident`` names (id, ROR id or name), as the API answers it; 404 otherwise."""
    detail = institution_detail(db, _institution_id(db, ident))
    if detail is None:
        raise NotFoundException(detail=f"There is no institution {ident!r}.")
    return Institution(
        id=detail.id,
        name=detail.name,
        ror_id=detail.ror_id,
        aliases=detail.aliases,
        acronyms=detail.acronyms,
        types=detail.types,
        city=detail.city,
        country_code=detail.country_code,
        country_name=detail.country_name,
        website=detail.website,
        established=detail.established,
        papers=detail.papers,
        researchers=[
            ResearcherItem(r.id, r.name, r.papers, r.h_index, None, site.url(r.path))
            for r in institution_researchers(db, detail.id, limit=30)
        ],
        url=site.url(detail.path),
        markdown_url=site.url(markdown_path(detail.path)),
    )


@get(
    "/api/institutions/{ident:str}",
    sync_to_thread=True,
    tags=["institutions"],
    summary="One institution",
    raises=NOT_FOUND,
)
def api_institution(pages: AppPages, db: DB, ident: InstitutionIdent) -> Institution:
    return institution_document(db, pages.site, ident)


@get(
    "/api/institutions/{ident:str}/papers",
    sync_to_thread=True,
    tags=["institutions"],
    summary="An institution's affiliated papers, newest first",
    raises=NOT_FOUND,
)
def api_institution_papers(
    pages: AppPages, db: DB, ident: InstitutionIdent, page: PageNumber = 1, size: PageSize = 24
) -> PaperList:
    listing = institution_papers(db, _institution_id(db, ident), page=page, size=size)
    items = [_paper_item(pages.site, p) for p in listing.items]
    return PaperList(items, listing.page, listing.size, listing.total, listing.pages)


@get("/openapi.json", sync_to_thread=False, include_in_schema=False)
def openapi_json(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """The OpenAPI description of the JSON API (Litestar builds it from the handlers above)."""
    schema: dict[str, Any] = request.app.openapi_schema.to_schema()
    return schema


ROUTE_HANDLERS = [
    api_papers,
    api_paper,
    api_old_style_paper,
    api_researchers,
    api_researcher,
    api_researcher_papers,
    api_institutions,
    api_institution,
    api_institution_papers,
    openapi_json,
]
