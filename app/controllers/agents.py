"""For agents and crawlers: ``/llms.txt``, ``/llms-full.txt``, the sitemap index and its children,
and RSS 2.0 feeds of the newest papers (overall and per category)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from xml.sax.saxutils import escape

from litestar import Request, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from markupsafe import Markup
from sqlalchemy.orm import Session

from app.feeds import papers_feed
from app.rendering import AppPages, PageAnswer, Pages, Rendered, md_escape
from app.routing import served_routes
from app.views.prose import prose_view
from catalog.papers import CATEGORY, category_exists, newest_papers
from catalog.researchers import list_researchers
from catalog.sitemap import sitemap_chunks, sitemap_entries

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XML = "application/xml"
TEXT = "text/plain"
_CHILD = re.compile(r"(?P<kind>papers|researchers|institutions)-(?P<number>[1-9]\d{0,8})\.xml", re.ASCII)
STATIC_PAGES = (
    "/",
    "/papers",
    "/researchers",
    "/institutions",
    "/about",
    "/about/researchers",
    "/contact",
    "/privacy",
    "/developers",
)


def _llms_text(pages: Pages, request: Request[Any, Any, Any], db: Session) -> str:
    newest = newest_papers(db, page=1, size=1).items
    top = list_researchers(db, query=None, page=1, size=1).items
    site = pages.site

    def llms_link(name: str, path: str) -> Markup:
        # llmstxt.org links are plain ``[name](url)``: no angle brackets around the URL.
        return Markup(f"[{md_escape(name)}]({site.url(path)})")  # noqa: S704 - name escaped, url ours

    return pages.markdown.get_template("llms.txt").render(
        llms_link=llms_link,
        example_paper=newest[0] if newest else None,
        example_researcher=top[0] if top else None,
        search="/search" in {route.path_format for route in request.app.routes},
    )


@get("/llms.txt", include_in_schema=False)
async def llms_txt(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    return await pages.document(
        request, lambda db: Rendered(200, _llms_text(pages, request, db).encode(), TEXT)
    )


@get("/llms-full.txt", include_in_schema=False)
async def llms_full_txt(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    def build(db: Session) -> Rendered:
        guide = prose_view(pages, "developers", served_routes(request.app)).context["body"]
        newest = newest_papers(db, page=1, size=100).items
        lines = [
            _llms_text(pages, request, db).rstrip(),
            "",
            str(guide).replace("# Developers", "## Developers guide", 1),
        ]
        lines += ["", "## Newest papers", ""]
        lines += [
            f"- [{md_escape(p.title)}]({pages.site.url(p.path)}): arXiv:{p.arxiv_id}"
            + (f", {p.primary_category}" if p.primary_category else "")
            + (f", {p.activity_on.isoformat()}" if p.activity_on else "")
            for p in newest
        ]
        return Rendered(200, ("\n".join(lines) + "\n").encode(), TEXT)

    return await pages.document(request, build)


@get("/robots.txt", include_in_schema=False)
async def robots_txt(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    """Everything may be read by people and programs alike; where the sitemap is."""
    text = f"User-agent: *\nAllow: /\n\nSitemap: {pages.site.url('/sitemap.xml')}\n"
    return await pages.document(request, lambda _db: Rendered(200, text.encode(), TEXT))


def _urlset(entries: list[tuple[str, dt.date | None]]) -> bytes:
    parts = ['<?xml version="1.0" encoding="UTF-8"?>', f'<urlset xmlns="{SITEMAP_NS}">']
    for loc, lastmod in entries:
        parts.append(
            f"<url><loc>{escape(loc)}</loc>"
            + (f"<lastmod>{lastmod.isoformat()}</lastmod>" if lastmod else "")
            + "</url>"
        )
    parts.append("</urlset>")
    return "\n".join(parts).encode()


@get("/sitemap.xml", include_in_schema=False)
async def sitemap_index(request: Request[Any, Any, Any], pages: AppPages) -> PageAnswer:
    def build(db: Session) -> Rendered:
        size = pages.settings.pages.sitemap_urls_per_file
        site = pages.site
        parts = ['<?xml version="1.0" encoding="UTF-8"?>', f'<sitemapindex xmlns="{SITEMAP_NS}">']
        parts.append(f"<sitemap><loc>{escape(site.url('/sitemaps/pages.xml'))}</loc></sitemap>")
        for chunk in sitemap_chunks(db, size):
            loc = escape(site.url(f"/sitemaps/{chunk.kind}-{chunk.number}.xml"))
            lastmod = f"<lastmod>{chunk.lastmod.isoformat()}</lastmod>" if chunk.lastmod else ""
            parts.append(f"<sitemap><loc>{loc}</loc>{lastmod}</sitemap>")
        parts.append("</sitemapindex>")
        return Rendered(200, "\n".join(parts).encode(), XML)

    return await pages.document(request, build)


@get("/sitemaps/{name:str}", include_in_schema=False)
async def sitemap(request: Request[Any, Any, Any], pages: AppPages, name: FromPath[str]) -> PageAnswer:
    def build(db: Session) -> Rendered:
        site = pages.site
        if name == "pages.xml":
            return Rendered(200, _urlset([(site.url(p), None) for p in STATIC_PAGES]), XML)
        match = _CHILD.fullmatch(name)
        if match is None:
            raise NotFoundException(detail="Sitemaps are /sitemaps/pages.xml and /sitemaps/<kind>-<n>.xml.")
        size = pages.settings.pages.sitemap_urls_per_file
        entries = sitemap_entries(db, match["kind"], int(match["number"]), size)
        if not entries:
            raise NotFoundException(detail=f"There is no sitemap {name}; /sitemap.xml lists them all.")
        return Rendered(200, _urlset([(site.url(e.path), e.lastmod) for e in entries]), XML)

    return await pages.document(request, build)


@get("/rss/{name:str}", include_in_schema=False)
async def rss(request: Request[Any, Any, Any], pages: AppPages, name: FromPath[str]) -> PageAnswer:
    def build(db: Session) -> Rendered:
        if not name.endswith(".xml"):
            raise NotFoundException(detail="Feeds are /rss/latest.xml and /rss/<category>.xml.")
        stem = name.removesuffix(".xml")
        category = None if stem == "latest" else stem
        if category is not None and not (CATEGORY.fullmatch(category) and category_exists(db, category)):
            raise NotFoundException(detail=f"No paper here is listed in {category!r}; try /rss/latest.xml.")
        site = pages.site
        listing = newest_papers(db, page=1, size=pages.settings.pages.feed_items, category=category)
        listed = f" listed in {category}" if category else ""
        return papers_feed(
            site,
            title=f"{site.name}: newest papers" + (f" in {category}" if category else ""),
            page=f"/papers?category={category}" if category else "/papers",
            self_path=f"/rss/{name}",
            description=f"The newest arXiv papers{listed} in {site.name}. {site.tagline}",
            papers=listing.items,
        )

    return await pages.document(request, build)
