"""Docs as tests: the Developers page and the manual (docs/agents.md) list every public route."""

from __future__ import annotations

import re

import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute

from app.main import create_app
from app.rendering import Pages
from app.routing import ROUTES, served_routes
from app.views.prose import prose_view
from settings import PROJECT_ROOT

ROUTE_TABLE = (PROJECT_ROOT / "docs" / "agents.md").read_text()
# Not public API surface: static assets and Litestar's own schema routes (/openapi.json is ours).
NOT_DOCUMENTED = ("/static", "/schema")


@pytest.fixture(scope="module")
def app() -> Litestar:
    return create_app()


def public_routes(app: Litestar) -> set[str]:
    """Every route path of the app a visitor can call, as Litestar formats it (``/papers/{ident}``).

    A route that needs sign-in opts out with ``opt={"private": True}`` on its handlers."""
    paths = set()
    for route in app.routes:
        if route.path_format.startswith(NOT_DOCUMENTED):
            continue
        handlers = route.route_handlers if isinstance(route, HTTPRoute) else [route.route_handler]
        # Litestar adds an OPTIONS handler to every HTTP route; the route's own handlers decide.
        own = [h for h in handlers if set(getattr(h, "http_methods", ())) != {"OPTIONS"}]
        if all(handler.opt.get("private") for handler in own):
            continue
        paths.add(route.path_format)
    return paths


def _developers(app: Litestar, fmt: str) -> str:
    pages: Pages = app.state.pages
    view = prose_view(pages, "developers", served_routes(app))
    return pages.render(view, "html" if fmt == "html" else "markdown").body.decode()


def test_every_public_route_is_on_the_developers_page(app: Litestar) -> None:
    documented = {r.path for r in ROUTES}
    missing = public_routes(app) - documented
    assert not missing, f"add these routes to app/routing.py:ROUTES: {sorted(missing)}"
    html, markdown = _developers(app, "html"), _developers(app, "markdown")
    for path in public_routes(app):
        assert f"<code>{path}</code>" in html, path
        assert f"`{path}`" in markdown, path


def test_the_developers_page_documents_only_served_routes(app: Litestar) -> None:
    markdown = _developers(app, "markdown")
    listed = set(re.findall(r"^\| `(/[^`]*)` \|", markdown, flags=re.M))  # route rows, not tool rows
    assert listed == {r.path for r in served_routes(app)}
    assert listed <= public_routes(app)


def test_every_public_route_is_in_the_manual(app: Litestar) -> None:
    missing = {path for path in public_routes(app) if f"`{path}`" not in ROUTE_TABLE}
    assert not missing, f"add these routes to the route table in docs/agents.md: {sorted(missing)}"


def test_the_developers_page_covers_the_agent_conventions(app: Litestar) -> None:
    markdown = _developers(app, "markdown")
    for needle in (
        "text/markdown",
        "Vary: Accept",
        "x-markdown-tokens",
        "llms.txt",
        "openapi.json",
        "sitemap",
        "RSS",
    ):
        assert needle in markdown, needle


def test_the_manuals_agent_examples_call_served_routes(app: Litestar) -> None:
    """The curl examples in docs/agents.md name routes the app serves (a renamed route fails here)."""
    block = ROUTE_TABLE.split("```sh", 1)[1].split("```", 1)[0]
    paths = {path.split("?")[0] for path in re.findall(r"http://127\.0\.0\.1:8000(/[^\s'\"]*)", block)}
    assert len(paths) >= 4
    patterns = [
        re.compile("^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(route)) + r"(\.md)?$")
        for route in public_routes(app)
    ]
    unserved = {path for path in paths if not any(p.match(path) for p in patterns)}
    assert not unserved, f"docs/agents.md's examples call routes the app does not serve: {sorted(unserved)}"
