"""RSS 2.0 documents of papers: the public feeds and the private feed of followed researchers (the
only module that imports feedgen)."""

from __future__ import annotations

import datetime as dt

from feedgen.feed import FeedGenerator

from app.rendering import Rendered
from app.site import Site
from catalog.papers import PaperSummary


def _midnight(day: dt.date | None) -> dt.datetime | None:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC) if day else None


def papers_feed(
    site: Site, *, title: str, page: str, self_path: str, description: str, papers: list[PaperSummary]
) -> Rendered:
    """An RSS 2.0 document listing ``papers`` (newest first)."""
    feed = FeedGenerator()
    feed.title(title)
    feed.link(href=site.url(page), rel="alternate")
    feed.link(href=site.url(self_path), rel="self")
    feed.description(description)
    feed.language("en")
    feed.generator(site.name)
    if papers and (latest := _midnight(papers[0].activity_on)):
        feed.lastBuildDate(latest)
    for paper in papers:
        entry = feed.add_entry(order="append")
        url = site.url(paper.path)
        entry.title(paper.title)
        entry.link(href=url)
        entry.guid(url, permalink=True)
        authors = ", ".join(a.name for a in paper.authors)
        entry.description(f"{authors}. {paper.abstract}" if authors else paper.abstract or paper.title)
        if published := _midnight(paper.activity_on):
            entry.pubDate(published)
        if paper.primary_category:
            entry.category(term=paper.primary_category)
    return Rendered(200, feed.rss_str(pretty=False), "application/rss+xml")
