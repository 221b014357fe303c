"""``/api/ingest/status``: how far indexing has got, overall and per paper (JSON, in the OpenAPI
schema), from :mod:`app.indexing_status`; the home page shows the same summary."""

from __future__ import annotations

from litestar.exceptions import NotFoundException

from app.indexing_status import IndexingSummary, PaperStatus, status_of, summary
from app.params import Archive, ArxivId, Number
from app.routing import api_get
from app.services import DB, AppServices

ERRORS = [NotFoundException]
indexing_get = api_get("indexing")


@indexing_get(
    "/api/ingest/status",
    summary="Indexing progress: abstracts embedded, PDFs queued / running / done / failed",
)
def ingest_status(db: DB, services: AppServices) -> IndexingSummary:
    return summary(db, services)


@indexing_get(
    "/api/ingest/status/{arxiv_id:str}",
    summary="One paper's full-text status (queued / running / done / failed with the reason)",
    raises=ERRORS,
)
def paper_ingest_status(db: DB, services: AppServices, arxiv_id: ArxivId) -> PaperStatus:
    return status_of(db, services, arxiv_id)


@indexing_get(
    "/api/ingest/status/{archive:str}/{number:str}",
    summary="One paper's full-text status, by old-style id (hep-th/9901001)",
    raises=ERRORS,
)
def old_style_paper_ingest_status(
    db: DB, services: AppServices, archive: Archive, number: Number
) -> PaperStatus:
    return status_of(db, services, f"{archive}/{number}")


ROUTE_HANDLERS = [ingest_status, paper_ingest_status, old_style_paper_ingest_status]
