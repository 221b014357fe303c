"""The composition root: ``create_app`` wires settings, services, controllers, templates and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Litestar, Request
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template import TemplateConfig

from app import mcp as agent_mcp
from app.asgi import Wovepaper, checked_request
from app.auth import wiring as auth_wiring
from app.controllers import (
    account,
    agents,
    api,
    chat,
    chat_pages,
    chat_status,
    follows,
    fulltext,
    health,
    home,
    ingest_status,
    institutions,
    pages,
    papers,
    reader,
    researchers,
    signin,
)
from app.controllers import search as search_controller
from app.errors import exception_to_response
from app.rendering import PageCache, Pages, environments, provide_pages
from app.security import security_headers
from app.services import lifespan, provide_db, provide_services
from app.site import Site
from settings import Settings, check_production, get_settings

HERE = Path(__file__).resolve().parent


def create_app(settings: Settings | None = None) -> Litestar:
    """The app; refuses (``UnsafeSettings``, every problem listed) to be built for production with
    unsafe settings, whichever server runs it."""
    settings = settings or get_settings()
    check_production(settings)
    site = Site.from_settings(settings)
    auth = auth_wiring.auth_parts(settings)
    html, markdown = environments(HERE / "templates", site)
    page_cache = PageCache(settings.pages.page_cache_seconds, settings.pages.page_cache_entries)
    app = Wovepaper(
        route_handlers=[
            home.home,
            papers.papers,
            papers.paper,
            *reader.ROUTE_HANDLERS,
            researchers.researchers,
            researchers.researcher,
            institutions.institutions,
            institutions.institution,
            pages.about,
            pages.about_researchers,
            pages.contact,
            pages.privacy,
            pages.developers,
            agents.llms_txt,
            agents.robots_txt,
            agents.llms_full_txt,
            agents.sitemap_index,
            agents.sitemap,
            agents.rss,
            *api.ROUTE_HANDLERS,
            chat_status.chat_status,
            *ingest_status.ROUTE_HANDLERS,
            *search_controller.ROUTE_HANDLERS,
            health.healthz,
            *signin.ROUTE_HANDLERS,
            *account.ROUTE_HANDLERS,
            *follows.ROUTE_HANDLERS,
            *chat.ROUTE_HANDLERS,
            *chat_pages.ROUTE_HANDLERS,
            *fulltext.ROUTE_HANDLERS,
            health.readyz,
            agent_mcp.mcp_endpoint,
            create_static_files_router(
                path="/static",
                directories=[HERE / "static"],
                include_in_schema=False,
                send_as_attachment=False,
            ),
        ],
        dependencies={
            "db": Provide(provide_db),
            "services": Provide(provide_services, sync_to_thread=False),
            "pages": Provide(provide_pages, sync_to_thread=False),
        },
        lifespan=[lifespan(settings), auth.lifespan, agent_mcp.lifespan],
        stores=auth.stores,
        middleware=auth.middleware,
        before_request=_before_request,
        exception_handlers={HTTPException: exception_to_response, Exception: exception_to_response},
        before_send=[security_headers(hsts=site.public_url.startswith("https://"))],
        template_config=TemplateConfig(engine=JinjaTemplateEngine.from_environment(html)),
        openapi_config=OpenAPIConfig(
            title="wovepaper",
            version="0.1.0",
            description="Papers, researchers and institutions as JSON. "
            "Every page also answers in markdown; see /llms.txt.",
            path="/schema",
            render_plugins=[JsonRenderPlugin()],
        ),
    )
    app.state.pages = Pages(site, html, markdown, page_cache, settings)
    app.state.auth = auth.state
    agent_mcp.attach(app, settings)
    search_controller.document_limits(app.openapi_schema, settings)
    chat.document_chat(app.openapi_schema, settings)
    auth_wiring.document_api_limit(app.openapi_schema)
    return app


async def _before_request(request: Request[Any, Any, Any]) -> None:
    await checked_request(request)
    await auth_wiring.before_request(request)
