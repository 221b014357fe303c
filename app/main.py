"""The composition root: ``create_app`` wires settings, services, controllers, templates and errors."""

from __future__ import annotations

from pathlib import Path

from litestar import Litestar
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.static_files import create_static_files_router
from litestar.template import TemplateConfig

from app.controllers import health, home, ingest_status
from app.services import lifespan, provide_db, provide_services
from settings import Settings, get_settings

HERE = Path(__file__).resolve().parent


def create_app(settings: Settings | None = None) -> Litestar:
    settings = settings or get_settings()
    return Litestar(
        route_handlers=[
            home.home,
            health.healthz,
            *ingest_status.ROUTE_HANDLERS,
            create_static_files_router(
                path="/static", directories=[HERE / "static"], include_in_schema=False
            ),
        ],
        dependencies={"db": Provide(provide_db), "services": Provide(provide_services, sync_to_thread=False)},
        lifespan=[lifespan(settings)],
        template_config=TemplateConfig(directory=HERE / "templates", engine=JinjaTemplateEngine),
        openapi_config=OpenAPIConfig(title="wovepaper", version="0.1.0", path="/schema"),
    )
