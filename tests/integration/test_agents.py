"""For agents and crawlers: llms.txt parsed by the spec's grammar, the sitemap and RSS parsed as XML
and checked against their schemas' required elements, and the markdown negotiation rules over HTTP
(q-values, wildcards, HEAD, redirects keep ``Vary``)."""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from catalog.db import make_engine
from catalog.models import Paper, PaperCategory, Researcher
from settings import SHARED_DATA
from tests.integration.browse_catalogue import Browse, browse

BASE = "https://wovepaper.test"
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
PER_FILE = 100
FEED_ITEMS = 20


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browse]:
    env = {"WOVEPAPER_SITEMAP_URLS_PER_FILE": str(PER_FILE), "WOVEPAPER_FEED_ITEMS": str(FEED_ITEMS)}
    with browse(request.param, SHARED_DATA, tmp_path_factory.mktemp(request.param), env) as b:
        yield b


def _local(url: str) -> str:
    assert url.startswith(BASE + "/"), url
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


# -- llms.txt ----------------------------------------------------------------------------------

_LINK = re.compile(r"- \[(?P<name>[^\]]+)\]\((?P<url>[^)\s]+)\)(?::\s*(?P<notes>.+))?")


@dataclass
class LlmsTxt:
    title: str
    summary: str | None
    details: list[str]
    sections: dict[str, list[tuple[str, str, str | None]]] = field(default_factory=dict)


def parse_llms_txt(text: str) -> LlmsTxt:
    """The llmstxt.org grammar, strictly: an H1 (required), an optional ``>`` summary, free markdown
    without headings, then H2 sections whose every non-blank line is ``- [name](url)`` with optional
    ``: notes``. Anything else raises AssertionError."""
    lines = text.rstrip("\n").split("\n")
    assert lines[0].startswith("# ") and not lines[0].startswith("##"), "the file starts with an H1"
    title = lines[0][2:].strip()
    assert title
    body = lines[1:]
    first_h2 = next((i for i, line in enumerate(body) if line.startswith("## ")), len(body))
    head, tail = body[:first_h2], body[first_h2:]
    content = [line for line in head if line.strip()]
    summary = None
    if content and content[0].startswith("> "):
        summary = content[0][2:]
        content = content[1:]
    for line in content:
        assert not line.startswith("#"), f"no headings before the first H2 section: {line!r}"
    result = LlmsTxt(title, summary, content)
    current: list[tuple[str, str, str | None]] | None = None
    for line in tail:
        if line.startswith("## "):
            name = line[3:].strip()
            assert name not in result.sections, f"section {name!r} twice"
            current = result.sections[name] = []
        elif line.strip():
            assert not line.startswith("#"), f"only H2 section headings: {line!r}"
            match = _LINK.fullmatch(line)
            assert match, f"a file-list line must be - [name](url): notes, got {line!r}"
            assert current is not None
            current.append((match["name"], match["url"], match["notes"]))
    return result


def test_llms_txt_follows_the_spec_and_its_links_work(site: Browse) -> None:
    response = site.client.get("/llms.txt")
    assert response.status_code == 200 and response.headers["content-type"] == "text/plain; charset=utf-8"
    parsed = parse_llms_txt(response.text)
    assert parsed.title == "wovepaper"
    assert parsed.summary and "arXiv" in parsed.summary
    assert any("Accept: text/markdown" in line for line in parsed.details)
    assert list(parsed.sections)[-1] == "Optional", "the Optional section comes last"
    assert {"Pages", "API", "Optional"} <= set(parsed.sections)
    links = [link for section in parsed.sections.values() for link in section]
    assert all(notes for _, _, notes in links), "every link says what it is"
    for _name, url, _notes in links:
        answer = site.client.get(_local(url), follow_redirects=True)
        assert answer.status_code == 200, url
    assert BASE + "/about/researchers.md" in [url for _, url, _ in parsed.sections["Optional"]]
    example = next(url for name, url, _ in parsed.sections["Pages"] if name == "Example paper")
    assert site.client.get(_local(example)).headers["content-type"] == "text/markdown; charset=utf-8"


def test_the_parser_rejects_what_the_spec_does_not_allow() -> None:
    with pytest.raises(AssertionError):
        parse_llms_txt("## No title\n")
    with pytest.raises(AssertionError):
        parse_llms_txt("# T\n\n> s\n\n### deeper heading\n")
    with pytest.raises(AssertionError):
        parse_llms_txt("# T\n\n## Docs\n\nnot a link line\n")
    assert parse_llms_txt(
        "# T\n\n> s\n\ntext\n\n## Docs\n\n- [a](https://x.example/a): notes\n"
    ).sections == {"Docs": [("a", "https://x.example/a", "notes")]}


def test_llms_full_txt_expands_it(site: Browse) -> None:
    full = site.client.get("/llms-full.txt").text
    short = site.client.get("/llms.txt").text
    assert full.startswith(short.rstrip())
    assert "## Developers guide" in full and "## Newest papers" in full
    assert full.count(f"]({BASE}/papers/") >= 100


# -- sitemap -----------------------------------------------------------------------------------


def _xml(site: Browse, path: str) -> ET.Element:
    response = site.client.get(path)
    assert response.status_code == 200, path
    assert response.headers["content-type"].startswith("application/xml")
    assert len(response.content) < 50 * 1024 * 1024
    return ET.fromstring(response.content)


def _w3c_date(value: str) -> dt.date:
    return dt.date.fromisoformat(value[:10])


def test_sitemap_index_and_children(site: Browse) -> None:
    index = _xml(site, "/sitemap.xml")
    assert index.tag == f"{SITEMAP_NS}sitemapindex"
    children = index.findall(f"{SITEMAP_NS}sitemap")
    assert children and len(children) <= 50_000
    urls: list[str] = []
    for child in children:
        assert {c.tag for c in child} <= {f"{SITEMAP_NS}loc", f"{SITEMAP_NS}lastmod"}
        locs = child.findall(f"{SITEMAP_NS}loc")
        assert len(locs) == 1 and locs[0].text
        lastmod = child.findtext(f"{SITEMAP_NS}lastmod")
        if lastmod is not None:
            assert _w3c_date(lastmod) <= dt.datetime.now(dt.UTC).date()
        urlset = _xml(site, _local(locs[0].text))
        assert urlset.tag == f"{SITEMAP_NS}urlset"
        entries = urlset.findall(f"{SITEMAP_NS}url")
        assert 1 <= len(entries) <= PER_FILE, "a child sitemap holds at most the configured number of URLs"
        for entry in entries:
            assert {c.tag for c in entry} <= {f"{SITEMAP_NS}loc", f"{SITEMAP_NS}lastmod"}
            loc = entry.findtext(f"{SITEMAP_NS}loc")
            assert loc and loc.startswith(BASE + "/") and len(loc) < 2048
            if (lastmod := entry.findtext(f"{SITEMAP_NS}lastmod")) is not None:
                _w3c_date(lastmod)
            urls.append(loc)
    assert len(urls) == len(set(urls)), "every URL once"
    engine = make_engine(site.settings.database_url)
    with Session(engine) as session:
        papers = session.execute(select(func.count()).select_from(Paper)).scalar_one()
        researchers = session.execute(select(func.count()).select_from(Researcher)).scalar_one()
    engine.dispose()
    paper_urls = [u for u in urls if u.startswith(BASE + "/papers/")]
    assert len(paper_urls) == papers and papers > PER_FILE, "all papers, over several files"
    assert len([u for u in urls if u.startswith(BASE + "/researchers/")]) == researchers
    assert [u for u in urls if u.startswith(BASE + "/institutions/")], "institutions with papers are listed"
    assert BASE + "/about/researchers" in urls, "the site's own pages are listed"
    for url in [*paper_urls[:3], *paper_urls[-3:], *[u for u in urls if "/researchers/" in u][:3]]:
        assert site.client.get(_local(url), follow_redirects=False).status_code == 200, (
            "sitemap URLs are canonical"
        )


def test_robots_txt_points_at_the_sitemap(site: Browse) -> None:
    response = site.client.get("/robots.txt")
    assert response.status_code == 200 and response.headers["content-type"] == "text/plain; charset=utf-8"
    lines = response.text.splitlines()
    assert (
        "User-agent: *" in lines
        and "Allow: /" in lines
        and not [x for x in lines if x.startswith("Disallow")]
    )
    assert f"Sitemap: {BASE}/sitemap.xml" in lines


def test_unknown_sitemaps_are_404(site: Browse) -> None:
    for path in (
        "/sitemaps/papers-0.xml",
        "/sitemaps/papers-99999.xml",
        "/sitemaps/other-1.xml",
        "/sitemaps/x",
    ):
        assert site.client.get(path).status_code == 404, path


# -- RSS ---------------------------------------------------------------------------------------


def _feed(site: Browse, path: str) -> ET.Element:
    response = site.client.get(path)
    assert response.status_code == 200, path
    assert response.headers["content-type"].startswith("application/rss+xml")
    rss = ET.fromstring(response.content)
    assert rss.tag == "rss" and rss.get("version") == "2.0"
    channels = rss.findall("channel")
    assert len(channels) == 1
    channel = channels[0]
    for required in ("title", "link", "description"):
        assert channel.findtext(required), f"channel/{required} is required"
    return channel


def test_latest_feed(site: Browse) -> None:
    channel = _feed(site, "/rss/latest.xml")
    items = channel.findall("item")
    assert len(items) == FEED_ITEMS
    dates = []
    for item in items:
        assert item.findtext("title") and item.findtext("description")
        link = item.findtext("link")
        assert link and link.startswith(BASE + "/papers/")
        assert item.findtext("guid") == link
        dates.append(parsedate_to_datetime(item.findtext("pubDate") or ""))
    assert dates == sorted(dates, reverse=True), "newest first"
    self_link = channel.find("{http://www.w3.org/2005/Atom}link")
    assert self_link is not None and self_link.get("href") == BASE + "/rss/latest.xml"


def test_category_feed_lists_only_that_category(site: Browse) -> None:
    channel = _feed(site, "/rss/stat.ML.xml")
    links = [item.findtext("link") or "" for item in channel.findall("item")]
    assert links
    engine = make_engine(site.settings.database_url)
    with Session(engine) as session:
        in_category = set(
            session.execute(
                select(Paper.arxiv_id).join(PaperCategory).where(PaperCategory.category == "stat.ML")
            ).scalars()
        )
    engine.dispose()
    for link in links:
        arxiv_id = re.match(rf"{BASE}/papers/(.+?)-[a-z0-9]", link)
        assert arxiv_id and arxiv_id.group(1) in in_category, link
    assert site.client.get("/rss/xx.YY.xml").status_code == 404  # well-formed, no papers
    assert site.client.get("/rss/<script>.xml").status_code == 404
    assert site.client.get("/rss/latest").status_code == 404


# -- negotiation over HTTP ---------------------------------------------------------------------

PAPER = "/papers/1412.6980-adam-a-method-for-stochastic-optimization"


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("text/markdown", "text/markdown"),
        ("text/html", "text/html"),
        ("*/*", "text/html"),
        (None, "text/html"),
        ("text/html;q=0.5, text/markdown;q=0.9", "text/markdown"),
        ("text/markdown;q=0.5, text/html;q=0.9", "text/html"),
        ("text/markdown, text/html", "text/markdown"),
        ("text/markdown;q=0", "text/html"),
        ("application/xhtml+xml, text/markdown;q=0.8", "text/html"),
        ("*/*, text/markdown;q=0.1", "text/markdown"),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"),
    ],
)
def test_accept_header_picks_the_representation(site: Browse, accept: str | None, expected: str) -> None:
    headers = {"accept": accept} if accept is not None else {}
    response = site.client.get(PAPER, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == f"{expected}; charset=utf-8"
    assert "Accept" in response.headers["vary"]


def test_head_answers_like_get_without_a_body(site: Browse) -> None:
    for headers in ({}, {"accept": "text/markdown"}):
        got = site.client.get(PAPER, headers=headers)
        head = site.client.head(PAPER, headers=headers)
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-type"] == got.headers["content-type"]
        assert head.headers["content-length"] == str(len(got.content))
        assert "Accept" in head.headers["vary"]
    moved = site.client.head("/papers/1412.6980", follow_redirects=False)
    assert (
        moved.status_code == 301 and moved.headers["location"] == PAPER and "Accept" in moved.headers["vary"]
    )


def test_redirects_keep_vary_and_the_requested_format(site: Browse) -> None:
    negotiated = site.client.get(
        "/papers/1412.6980", headers={"accept": "text/markdown"}, follow_redirects=False
    )
    assert negotiated.status_code == 301 and negotiated.headers["location"] == PAPER
    assert negotiated.headers["content-type"].startswith("text/markdown")
    assert "Accept" in negotiated.headers["vary"]
    suffixed = site.client.get("/papers/1412.6980.md", follow_redirects=False)
    assert suffixed.headers["location"] == PAPER + ".md" and "Accept" in suffixed.headers["vary"]
    researcher = site.client.get(
        f"/researchers/{site.facts.plain_researcher}.md?page=1", follow_redirects=False
    )
    assert researcher.headers["location"] == f"/researchers/{site.facts.plain_researcher}-jimmy-lei-ba.md"


def test_only_get_and_head_negotiate(site: Browse) -> None:
    response = site.client.post(PAPER, headers={"accept": "text/markdown"})
    assert response.status_code == 405
    assert "GET" in response.headers["allow"]
    assert "Accept" in response.headers["vary"]


def test_markdown_suffix_exists_only_for_pages(site: Browse) -> None:
    for path in ("/healthz.md", "/llms.txt.md", "/sitemap.xml.md", "/openapi.json.md"):
        assert site.client.get(path).status_code == 404, path
    assert site.client.get("/api/papers.md").status_code == 404


def test_html_announces_its_markdown_twin(site: Browse) -> None:
    response = site.client.get(PAPER)
    assert f'<link rel="alternate" type="text/markdown" href="{PAPER}.md"' in response.text
    assert response.headers["link"] == f'<{PAPER}.md>; rel="alternate"; type="text/markdown"'
    twin = site.client.get(PAPER + ".md")
    assert twin.headers["content-type"] == "text/markdown; charset=utf-8"
    assert int(twin.headers["x-markdown-tokens"]) > 100
