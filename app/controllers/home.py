"""The home page: search box, newest papers, categories and where to browse next."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get

from app.asgi import PAGE_OPT
from app.controllers import ingest_status
from app.rendering import AppPages, View
from app.services import DB, AppServices
from catalog.queries import catalogue_stats, newest_papers, top_categories


@get("/", sync_to_thread=True, include_in_schema=False, opt={PAGE_OPT: True})
def home(request: Request[Any, Any, Any], pages: AppPages, db: DB, services: AppServices) -> Response[bytes]:
    def build() -> View:
        return View(
            template="home",
            title=pages.site.name,
            description=pages.site.description,
            path="/",
            context={
                "newest": newest_papers(db, page=1, size=services.settings.server.page_size),
                "categories": top_categories(db, limit=30),
                "stats": catalogue_stats(db),
                "indexing": ingest_status.summary(db, services),
            },
        )

    return pages.respond(request, build)
