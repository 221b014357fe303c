"""The site's own pages as views: About, how papers are attributed to researchers, Contact, Privacy
and Developers; their prose is markdown templates in ``templates/content/``."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markupsafe import Markup

from app.rendering import Pages, View
from app.routing import RouteDoc

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")

# Where the researcher pages explain how their papers were attributed to them.
ATTRIBUTION_PATH = "/about/researchers"
# name (the path without its slash, and the template under content/) → title, description
_PAGES = {
    "about": ("About", "What wovepaper is and where its data comes from."),
    "about/researchers": (
        "How papers are attributed to researchers",
        "Which evidence joins an author on a paper to a researcher profile, and which keeps people "
        "of the same name apart.",
    ),
    "contact": ("Contact", "Who runs this installation and where corrections belong."),
    "privacy": ("Privacy", "What is stored about visitors: no cookies for browsing, no trackers."),
    "developers": (
        "Developers",
        "URL patterns, the JSON API, the MCP server, llms.txt, markdown negotiation, sitemap and RSS.",
    ),
}


def prose_view(pages: Pages, name: str, routes: list[RouteDoc]) -> View:
    title, description = _PAGES[name]
    text = pages.markdown.get_template(f"content/{name}.md").render(routes=routes)
    return View(
        template="prose",
        title=title,
        description=description,
        path=f"/{name}",
        context={"body": Markup(text), "body_html": Markup(_MARKDOWN.render(text))},  # noqa: S704 - html disabled
        crumbs=[*([("About", "/about")] if name.startswith("about/") else []), (title, f"/{name}")],
    )
