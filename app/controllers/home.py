"""The home page: search box, newest papers, categories and where to browse next."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from sqlalchemy.orm import Session

from app.asgi import PAGE_OPT
from app.controllers import ingest_status
from app.rendering import AppPages, PageAnswer, View
from app.services import Services
from catalog.queries import catalogue_stats, newest_papers, top_categories


@get("/", include_in_schema=False, opt={PAGE_OPT: True})
async def home(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    services: Services = request.app.state.services

    def build(db: Session) -> View:
        return View(
            template="home",
            title=pages.site.name,
            description=pages.site.description,
            path="/",
            context={
                "newest": newest_papers(db, page=1, size=pages.settings.server.page_size),
                "categories": top_categories(db, limit=30),
                "stats": catalogue_stats(db),
                "indexing": ingest_status.summary(db, services),
            },
        )

    return await pages.serve(request, build)
