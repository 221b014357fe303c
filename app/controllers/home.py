"""The home page: the newest papers, paginated."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.params import Parameter
from litestar.response import Template

from app.services import DB, AppServices
from catalog.queries import newest_papers


@get("/", sync_to_thread=True, include_in_schema=False)
def home(
    db: DB,
    services: AppServices,
    page: Annotated[int, Parameter(ge=1, le=100_000, description="1-based page number")] = 1,
) -> Template:
    listing = newest_papers(db, page=page, size=services.settings.server.page_size)
    return Template("home.html", context={"listing": listing})
