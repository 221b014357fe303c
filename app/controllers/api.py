"""The JSON API under ``/api`` (described at ``/openapi.json``): papers, researchers, institutions.

Answers are plain JSON documents (:mod:`app.documents`) built from the same read-side queries as
the pages. Values that enrichment has not provided (h-index, citations, works total) are ``null``,
never 0. Errors come from :mod:`app.errors` as ``{"status_code": …, "detail": …}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get
from litestar.exceptions import NotFoundException
from litestar.params import Parameter, PathParameter
from sqlalchemy.orm import Session

from app.documents import (
    Institution,
    InstitutionList,
    Paper,
    PaperList,
    Researcher,
    ResearcherList,
    find_paper,
    find_researcher,
    institution_document,
    institution_id,
    institution_list,
    paper_document,
    paper_list,
    researcher_document,
    researcher_list,
)
from app.fulltext import state_in
from app.params import Archive, ArxivId, Category, InstitutionQuery, Number, ResearcherQuery, checked_category
from app.rendering import AppPages
from app.routing import api_get
from app.services import DB
from catalog.institutions import institution_papers, list_institutions
from catalog.papers import newest_papers
from catalog.researchers import list_researchers, researcher_papers

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
papers_get = api_get("papers")
researchers_get = api_get("researchers")
institutions_get = api_get("institutions")


@papers_get("/api/papers", summary="Newest papers")
def api_papers(
    pages: AppPages, db: DB, category: Category = None, page: PageNumber = 1, size: PageSize = 24
) -> PaperList:
    return paper_list(
        pages.site, newest_papers(db, page=page, size=size, category=checked_category(category))
    )


@papers_get("/api/papers/{arxiv_id:str}", summary="One paper", raises=NOT_FOUND)
def api_paper(pages: AppPages, db: DB, arxiv_id: ArxivId) -> Paper:
    return _paper(pages, db, arxiv_id)


@papers_get("/api/papers/{archive:str}/{number:str}", summary="One paper by old-style id", raises=NOT_FOUND)
def api_old_style_paper(pages: AppPages, db: DB, archive: Archive, number: Number) -> Paper:
    return _paper(pages, db, f"{archive}/{number}")


def _paper(pages: AppPages, db: Session, raw: str) -> Paper:
    """The paper ``raw`` names, with the state of its full text; 404 when there is none."""
    detail = find_paper(db, raw)
    return paper_document(pages.site, detail, state_in(db, detail.arxiv_id))


@researchers_get("/api/researchers", summary="Researchers")
def api_researchers(
    pages: AppPages, db: DB, q: ResearcherQuery = None, page: PageNumber = 1, size: PageSize = 24
) -> ResearcherList:
    return researcher_list(pages.site, list_researchers(db, query=q, page=page, size=size))


@researchers_get("/api/researchers/{researcher_id:str}", summary="One researcher", raises=NOT_FOUND)
def api_researcher(pages: AppPages, db: DB, researcher_id: ResearcherId) -> Researcher:
    return researcher_document(db, pages.site, researcher_id)


@researchers_get(
    "/api/researchers/{researcher_id:str}/papers",
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
    profile = find_researcher(db, researcher_id)
    listing = researcher_papers(db, profile.id, page=page, size=size, category=checked_category(category))
    return paper_list(pages.site, listing)


@institutions_get("/api/institutions", summary="Institutions")
def api_institutions(
    pages: AppPages, db: DB, q: InstitutionQuery = None, page: PageNumber = 1, size: PageSize = 24
) -> InstitutionList:
    return institution_list(pages.site, list_institutions(db, query=q, page=page, size=size))


InstitutionIdent = Annotated[
    str, PathParameter(max_length=300, description="An id, `ror:<ROR id>`, a bare ROR id, or a name")
]


@institutions_get("/api/institutions/{ident:str}", summary="One institution", raises=NOT_FOUND)
def api_institution(pages: AppPages, db: DB, ident: InstitutionIdent) -> Institution:
    return institution_document(db, pages.site, ident)


@institutions_get(
    "/api/institutions/{ident:str}/papers",
    summary="An institution's affiliated papers, newest first",
    raises=NOT_FOUND,
)
def api_institution_papers(
    pages: AppPages, db: DB, ident: InstitutionIdent, page: PageNumber = 1, size: PageSize = 24
) -> PaperList:
    return paper_list(pages.site, institution_papers(db, institution_id(db, ident), page=page, size=size))


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
