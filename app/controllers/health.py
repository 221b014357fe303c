"""``/healthz``: is the process up and can it read the catalogue?"""

from __future__ import annotations

from dataclasses import dataclass

from litestar import get
from litestar.exceptions import ServiceUnavailableException
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.services import DB
from catalog.queries import count_papers


@dataclass
class Health:
    status: str
    papers: int


@get("/healthz", sync_to_thread=True, tags=["meta"], summary="Liveness and catalogue readiness")
def healthz(db: DB) -> Health:
    try:
        db.execute(text("SELECT 1"))
        papers = count_papers(db)
    except SQLAlchemyError as exc:
        raise ServiceUnavailableException(detail="the catalogue is not reachable") from exc
    return Health(status="ok", papers=papers)
