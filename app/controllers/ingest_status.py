"""``/api/ingest/status``: how far indexing has got, overall and per paper (JSON, in the OpenAPI
schema), from :mod:`app.indexing_status`; the home page shows the same summary."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.exceptions import NotFoundException
from litestar.params import Parameter

from app.indexing_status import IndexingSummary, PaperStatus, status_of, summary
from app.services import DB, AppServices

ERRORS = [NotFoundException]


@get(
    "/api/ingest/status",
    sync_to_thread=True,
    tags=["indexing"],
    summary="Indexing progress: abstracts embedded, PDFs queued / running / done / failed",
)
def ingest_status(db: DB, services: AppServices) -> IndexingSummary:
    return summary(db, services)


@get(
    "/api/ingest/status/{arxiv_id:str}",
    sync_to_thread=True,
    tags=["indexing"],
    summary="One paper's full-text status (queued / running / done / failed with the reason)",
    raises=ERRORS,
)
def paper_ingest_status(
    db: DB, services: AppServices, arxiv_id: Annotated[str, Parameter(max_length=128)]
) -> PaperStatus:
    return status_of(db, services, arxiv_id)


@get(
    "/api/ingest/status/{archive:str}/{number:str}",
    sync_to_thread=True,
    tags=["indexing"],
    summary="One paper's full-text status, by old-style id (hep-th/9901001)",
    raises=ERRORS,
)
def old_style_paper_ingest_status(
    db: DB,
    services: AppServices,
    archive: Annotated[str, Parameter(max_length=64)],
    number: Annotated[str, Parameter(max_length=64)],
) -> PaperStatus:
    return status_of(db, services, f"{archive}/{number}")


ROUTE_HANDLERS = [ingest_status, paper_ingest_status, old_style_paper_ingest_status]
