"""``/healthz`` (liveness) and ``/readyz`` (readiness).

``/healthz`` answers from the event loop: no thread, no catalogue, no lock, so it stays fast while
every worker thread is busy (a liveness probe that waits behind searches would get a healthy but
loaded process restarted). ``/readyz`` runs the registered readiness checks (:mod:`app.readiness`):
the catalogue, the vector store, Redis, and whatever else the app depends on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from litestar import Response, get
from litestar.openapi import ResponseSpec
from litestar.status_codes import HTTP_200_OK, HTTP_503_SERVICE_UNAVAILABLE

from app.services import AppServices


@dataclass
class Health:
    status: Literal["ok"]


@dataclass
class ReadinessCheck:
    name: str
    ok: bool
    required: bool  # a failed optional check is shown but leaves the process ready
    detail: str
    took_ms: float


@dataclass
class ReadinessReport:
    status: Literal["ready", "not ready"]
    checks: list[ReadinessCheck]


@get("/healthz", tags=["meta"], summary="Liveness: the process answers")
async def healthz() -> Health:
    return Health(status="ok")


@get(
    "/readyz",
    tags=["meta"],
    summary="Readiness: the catalogue, the vector store and Redis answer",
    responses={
        HTTP_503_SERVICE_UNAVAILABLE: ResponseSpec(
            data_container=ReadinessReport, description="A required check failed; each check says why."
        )
    },
)
async def readyz(services: AppServices) -> Response[ReadinessReport]:
    results = await services.readiness.run()
    ready = all(r.ok for r in results if r.required)
    report = ReadinessReport(
        status="ready" if ready else "not ready",
        checks=[ReadinessCheck(r.name, r.ok, r.required, r.detail, r.took_ms) for r in results],
    )
    return Response(report, status_code=HTTP_200_OK if ready else HTTP_503_SERVICE_UNAVAILABLE)
