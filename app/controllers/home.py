"""The home page: search box, newest papers, categories and where to browse next."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from sqlalchemy.orm import Session

from accounts.queries import followed_papers
from app.asgi import PAGE_OPT
from app.auth.requester import requester
from app.indexing_status import summary
from app.rendering import AppPages, PageAnswer, View
from app.services import Services
from catalog.papers import catalogue_stats, newest_papers, top_categories


@get("/", include_in_schema=False, opt={PAGE_OPT: True})
async def home(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    services: Services = request.app.state.services
    actor = requester(request)

    def build(db: Session) -> View:
        followed = None
        if actor is not None and actor.via == "session":
            followed = followed_papers(db, actor.person_id, limit=pages.settings.server.page_size)
        return View(
            template="home",
            title=pages.site.name,
            description=pages.site.description,
            path="/",
            context={
                "newest": newest_papers(db, page=1, size=pages.settings.server.page_size),
                "categories": top_categories(db, limit=30),
                "stats": catalogue_stats(db),
                "indexing": summary(db, services),
                "followed": followed,  # signed in: the newest papers of the researchers they follow
            },
        )

    return await pages.serve(request, build)
