"""The site's own pages: About, how papers are attributed to researchers, Contact, Privacy and Developers.

Their prose is written once, as markdown templates in ``templates/content/``; the markdown answer
is that text and the HTML page is the same text rendered by markdown-it (raw HTML disabled). The
Developers page's route table comes from :data:`app.routing.ROUTES`, filtered to the routes this app
serves, and a docs test checks that every public route of the app is in it.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get

from app.asgi import PAGE_OPT
from app.rendering import AppPages, PageAnswer, Pages
from app.routing import served_routes
from app.views.prose import ATTRIBUTION_PATH, prose_view


async def _prose(request: Request[Any, Any, Any], pages: Pages, name: str) -> PageAnswer:
    return await pages.serve(request, lambda _db: prose_view(pages, name, served_routes(request.app)))


@get("/about", include_in_schema=False, opt={PAGE_OPT: True})
async def about(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "about")


@get(ATTRIBUTION_PATH, include_in_schema=False, opt={PAGE_OPT: True})
async def about_researchers(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "about/researchers")


@get("/contact", include_in_schema=False, opt={PAGE_OPT: True})
async def contact(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "contact")


@get("/privacy", include_in_schema=False, opt={PAGE_OPT: True})
async def privacy(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "privacy")


@get("/developers", include_in_schema=False, opt={PAGE_OPT: True})
async def developers(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await _prose(request, pages, "developers")
