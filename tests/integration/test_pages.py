"""Every public page, in HTML and in markdown, on SQLite and on PostgreSQL, over real data.

Pages are read like a crawler reads them (elements, text, JSON-LD); markdown is checked for the same
key content as the HTML, since both render one view.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from litestar.testing import TestClient
from markdown_it import MarkdownIt

from app.main import create_app
from settings import SHARED_DATA
from tests.integration.browse_catalogue import (
    HOSTILE_AUTHOR,
    HOSTILE_ID,
    NAMESAKE,
    Browse,
    browse,
    settings_for,
)
from tests.integration.page_parsing import parse_html

MD = {"accept": "text/markdown"}
BASE = "https://wovepaper.test"


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browse]:
    with browse(request.param, SHARED_DATA, tmp_path_factory.mktemp(request.param)) as b:
        yield b


def _html(site: Browse, path: str, status: int = 200) -> str:
    response = site.client.get(path, follow_redirects=False)
    assert response.status_code == status, (path, response.status_code, response.text[:500])
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    return response.text


def _markdown(site: Browse, path: str, status: int = 200) -> str:
    response = site.client.get(path, headers=MD, follow_redirects=False)
    assert response.status_code == status, (path, response.status_code, response.text[:500])
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    assert int(response.headers["x-markdown-tokens"]) > 0
    by_suffix = site.client.get(_md_path(path), follow_redirects=False)
    assert by_suffix.status_code == status and by_suffix.text == response.text, path
    return response.text


def _md_path(path: str) -> str:
    base, sep, query = path.partition("?")
    return ("/index" if base == "/" else base) + ".md" + sep + query


def _redirect(site: Browse, path: str, headers: dict[str, str] | None = None) -> str:
    response = site.client.get(path, headers=headers or {}, follow_redirects=False)
    assert response.status_code == 301, (path, response.status_code)
    assert "Accept" in response.headers["vary"]
    return response.headers["location"]


def _canonical(html: str) -> str:
    links = parse_html(html).find("link", rel="canonical")
    assert len(links) == 1
    return links[0].attrs["href"]


def _ld_nodes(html: str, type_: str) -> list[dict[str, Any]]:
    nodes = []
    for document in parse_html(html).json_ld:
        nodes += [n for n in document["@graph"] if n.get("@type") == type_]
    return nodes


# -- home and lists ----------------------------------------------------------------------------


def test_home(site: Browse) -> None:
    html = _html(site, "/")
    page = parse_html(html)
    assert page.find("form", action="/search", method="get")
    assert "Newest papers" in page.text and "Categories" in page.text
    newest = [h for h in page.hrefs() if h.startswith("/papers/")]
    assert newest, "the home page lists papers"
    assert _canonical(html) == BASE + "/"
    assert page.find("link", rel="alternate", type="text/markdown")[0].attrs["href"] == "/index.md"
    assert {"Organization", "WebSite", "SearchAction"} <= page.types()
    website = _ld_nodes(html, "WebSite")[0]
    assert website["potentialAction"]["target"]["urlTemplate"] == BASE + "/search?q={search_term_string}"
    assert page.meta("og:url") == BASE + "/" and page.meta("twitter:card") == "summary"
    markdown = _markdown(site, "/")
    assert markdown.startswith("# wovepaper\n")
    first_paper = newest[0]
    assert f"{BASE}{first_paper}" in markdown, "markdown lists the same newest paper first"


def test_papers_list_pages_and_filters(site: Browse) -> None:
    page1 = parse_html(_html(site, "/papers"))
    first = [h for h in page1.hrefs() if re.fullmatch(r"/papers/[^?]+", h)]
    assert len(set(first)) == 24
    page2 = parse_html(_html(site, "/papers?page=2"))
    second = [h for h in page2.hrefs() if re.fullmatch(r"/papers/[^?]+", h)]
    assert not set(first) & set(second)
    filtered = _html(site, "/papers?category=stat.ML")
    assert "Notes on sparse transformers, part 26" in filtered
    assert "Notes on sparse transformers, part 25" not in filtered  # odd parts are cs.LG only
    assert "stat.ML" in _markdown(site, "/papers?category=stat.ML")
    _html(site, "/papers?page=9999", status=404)
    _html(site, "/papers?category=not+a+category", status=400)


def test_researchers_list_searches_names(site: Browse) -> None:
    html = _html(site, "/researchers?q=kingma")
    page = parse_html(html)
    assert f"/researchers/{site.facts.enriched_researcher}-diederik-p-kingma" in page.hrefs()
    assert "Jimmy Lei Ba" not in page.text
    everyone = parse_html(_html(site, "/researchers"))
    assert everyone.find("a", href=f"/researchers/{site.facts.prolific_researcher}-paz-escritora"), (
        "most papers first"
    )
    assert "Diederik P. Kingma" in _markdown(site, "/researchers?q=kingma")
    assert "No researcher matches" in _html(site, "/researchers?q=zzzzqqqq")
    assert _canonical(html) == BASE + "/researchers?q=kingma"
    assert parse_html(html).meta("robots") == "noindex, follow"  # search results are not indexed


def test_institutions_list(site: Browse) -> None:
    page = parse_html(_html(site, "/institutions?q=toronto"))
    assert f"/institutions/{site.facts.toronto}-university-of-toronto" in page.hrefs()
    assert "Stanford" not in page.text
    assert "University of Toronto" in _markdown(site, "/institutions?q=toronto")
    assert "University of Toronto" in _html(site, "/institutions")


# -- papers ------------------------------------------------------------------------------------


def test_paper_id_alone_redirects_to_the_canonical_slug(site: Browse) -> None:
    canonical = "/papers/1412.6980-adam-a-method-for-stochastic-optimization"
    assert _redirect(site, "/papers/1412.6980") == canonical
    assert _redirect(site, "/papers/1412.6980-some-stale-slug") == canonical
    assert _redirect(site, "/papers/arXiv:1412.6980") == canonical
    assert _redirect(site, "/papers/1412.6980.md") == canonical + ".md"
    assert _redirect(site, "/papers/1412.6980", MD) == canonical  # negotiated: same URL, Vary: Accept


def test_paper_page(site: Browse) -> None:
    path = "/papers/1412.6980-adam-a-method-for-stochastic-optimization"
    html = _html(site, path)
    page = parse_html(html)
    assert page.find("h1")[0] and "Adam: A Method for Stochastic Optimization" in page.text
    assert f"/researchers/{site.facts.enriched_researcher}-diederik-p-kingma" in page.hrefs()
    assert "University of Amsterdam, OpenAI" in page.text  # the affiliation as printed
    assert "We introduce Adam" in page.text
    assert (
        "https://arxiv.org/abs/1412.6980" in page.hrefs()
        and "https://arxiv.org/pdf/1412.6980" in page.hrefs()
    )
    assert "v9" in page.text and "cs.LG" in page.text
    assert _canonical(html) == BASE + path
    assert page.meta("og:type") == "article"
    assert page.meta("og:title") == "Adam: A Method for Stochastic Optimization"
    article = _ld_nodes(html, "ScholarlyArticle")[0]
    assert article["name"] == "Adam: A Method for Stochastic Optimization"
    assert [a["name"] for a in article["author"]] == ["Diederik P. Kingma", "Jimmy Lei Ba"]
    crumbs = _ld_nodes(html, "BreadcrumbList")[0]["itemListElement"]
    assert [c["name"] for c in crumbs][-1] == "Adam: A Method for Stochastic Optimization"
    markdown = _markdown(site, path)
    assert markdown.startswith("# Adam: A Method for Stochastic Optimization\n")
    assert (
        f"[Diederik P. Kingma](<{BASE}/researchers/{site.facts.enriched_researcher}-diederik-p-kingma>)"
        in markdown
    )
    assert "We introduce Adam" in markdown and "University of Amsterdam, OpenAI" in markdown


def test_paper_with_affiliation_links_to_its_institution(site: Browse) -> None:
    html = _html(site, "/papers/1412.6980-adam-a-method-for-stochastic-optimization")
    assert f"/institutions/{site.facts.toronto}-university-of-toronto" in parse_html(html).hrefs()


def test_versions(site: Browse) -> None:
    versioned = _redirect(site, "/papers/0704.0001v1")
    assert versioned.startswith("/papers/0704.0001v1-calculation-of-prompt-diphoton-production")
    slug = versioned.removeprefix("/papers/0704.0001v1-")
    html = _html(site, versioned)
    page = parse_html(html)
    assert [e for e in page.find("li", class_="current") if e.attrs.get("aria-current") == "true"]
    assert "https://arxiv.org/abs/0704.0001v1" in page.hrefs()
    assert _canonical(html) == f"{BASE}/papers/0704.0001-{slug}"  # the canonical page is unversioned
    assert _redirect(site, f"/papers/0704.0001v1-{slug}-extra") == versioned
    missing = _html(site, f"/papers/0704.0001v7-{slug}")
    assert "Version v7 is not in this archive" in missing
    assert "Version v7 is not in this archive" in _markdown(site, f"/papers/0704.0001v7-{slug}")


def test_old_style_ids(site: Browse) -> None:
    canonical = _redirect(site, "/papers/astro-ph/0601001")
    assert canonical.startswith("/papers/astro-ph/0601001-frequency-of-hot-jupiters")
    assert _redirect(site, "/papers/astro-ph.EP/0601001") == canonical  # subject class is not identity
    assert "Hot Jupiters" in _html(site, canonical)
    assert "Hot Jupiters" in _markdown(site, canonical)
    quantum = _redirect(site, "/papers/quant-ph/0201082v1")
    assert quantum.startswith("/papers/quant-ph/0201082v1-quantum-computers")
    missing = _html(site, "/papers/math.GT/0309136", status=404)
    assert "arXiv:math/0309136 is not in this archive yet" in missing


def test_unknown_and_malformed_paper_ids(site: Browse) -> None:
    unknown = _html(site, "/papers/2401.99999", status=404)
    text = parse_html(unknown).text
    assert "This page isn’t here" in text and "not in this archive yet" in text and "harvested" in text
    assert parse_html(unknown).meta("robots") == "noindex, follow"
    assert "not in this archive yet" in _markdown(site, "/papers/2401.99999", status=404)
    bad = parse_html(_html(site, "/papers/2401.0123", status=404)).text
    assert "five digits" in bad  # the reason, in words
    assert "hep-th/9901001" in parse_html(_html(site, "/papers/not-an-id", status=404)).text
    _html(site, "/papers/9999.99999", status=404)


# -- researchers -------------------------------------------------------------------------------


def test_researcher_redirects_and_bad_ids(site: Browse) -> None:
    rid = site.facts.enriched_researcher
    assert _redirect(site, f"/researchers/{rid}") == f"/researchers/{rid}-diederik-p-kingma"
    assert _redirect(site, f"/researchers/{rid}-wrong-name?category=cs.LG") == (
        f"/researchers/{rid}-diederik-p-kingma?category=cs.LG"
    )
    assert "numeric id" in _html(site, "/researchers/diederik-kingma", status=404)
    assert "no researcher with id 999999999" in _html(site, "/researchers/999999999", status=404)


def test_enriched_researcher_shows_metrics_and_identity(site: Browse) -> None:
    facts = site.facts
    path = f"/researchers/{facts.enriched_researcher}-diederik-p-kingma"
    html = _html(site, path)
    page = parse_html(html)
    assert f"h-index {facts.h_index}" in page.text
    assert f"{facts.citations:,} citations" in page.text
    assert f"{facts.works:,} works total" in page.text
    assert "identity via OpenAlex / ORCID" in page.text
    assert f"https://orcid.org/{facts.orcid}" in page.hrefs()
    assert "University of Amsterdam" in page.text  # known affiliation (OpenAlex)
    person = _ld_nodes(html, "Person")[0]
    assert person["name"] == "Diederik P. Kingma" and f"https://orcid.org/{facts.orcid}" in person["sameAs"]
    assert page.meta("og:type") == "profile"
    markdown = _markdown(site, path)
    assert f"h-index {facts.h_index}" in markdown and f"{facts.works:,} works total" in markdown


def test_unenriched_researcher_shows_no_metrics_not_zero(site: Browse) -> None:
    html = _html(site, f"/researchers/{site.facts.plain_researcher}-jimmy-lei-ba")
    text = parse_html(html).text
    assert "h-index" not in text and "citation" not in text and "works total" not in text
    assert "identity via" not in text
    markdown = _markdown(site, f"/researchers/{site.facts.plain_researcher}-jimmy-lei-ba")
    assert "h-index" not in markdown and "citation" not in markdown


def test_author_positions_fields_and_category_filter(site: Browse) -> None:
    rid = site.facts.prolific_researcher
    path = f"/researchers/{rid}-paz-escritora"
    html = _html(site, path)
    page = parse_html(html)
    assert (
        "first author" in page.text
        and "Across the 26 of 26 papers where every author was matched" in page.text
    )
    fields = {e.attrs["href"] for e in page.find("a") if "category=" in e.attrs.get("href", "")}
    assert {f"{path}?category=cs.LG", f"{path}?category=stat.ML"} <= fields
    listed = [h for h in page.hrefs() if h.startswith("/papers/2402.")]
    assert len(listed) == 24, "24 papers per page"
    assert listed[0].startswith("/papers/2402.00026-") and listed[-1].startswith("/papers/2402.00003-"), (
        "newest first"
    )
    second = [h for h in parse_html(_html(site, path + "?page=2")).hrefs() if h.startswith("/papers/2402.")]
    assert [h.split("-", 1)[0] for h in second] == ["/papers/2402.00002", "/papers/2402.00001"]
    filtered = parse_html(_html(site, path + "?category=stat.ML"))
    only = [h for h in filtered.hrefs() if h.startswith("/papers/2402.")]
    assert len(only) == 13 and all(int(h.split(".")[1][:5]) % 2 == 0 for h in only)
    assert "Show all" in filtered.text
    assert filtered.meta("robots") == "noindex, follow"
    assert _canonical(_html(site, path + "?category=stat.ML")) == BASE + path
    markdown = _markdown(site, path + "?category=stat.ML")
    assert "Showing 13 papers in stat.ML" in markdown
    assert "Across the 26 of 26 papers" in _markdown(site, path)


def test_positions_count_only_fully_matched_papers(site: Browse) -> None:
    # Two papers: first author beside "The HALO Collaboration" (no person, so not counted), and last
    # author of a paper whose authors were all matched.
    path = f"/researchers/{site.facts.collaborator}-rosa-colaboradora"
    text = parse_html(_html(site, path)).text
    assert "Across the 1 of 2 papers where every author was matched" in text
    assert "last author" in text and "first author" not in text
    markdown = _markdown(site, path)
    assert "- last author: 1" in markdown and "first author" not in markdown


def _table(html: str, css_class: str) -> list[list[str]]:
    """The text of each body row's cells in the table of ``css_class``."""
    table = re.search(rf'<table class="[^"]*\b{css_class}\b[^"]*"[^>]*>(.*?)</table>', html, re.S)
    assert table, f"no table.{css_class}"
    body = re.split(r"<tbody[^>]*>", table[1], maxsplit=1)[1]
    return [
        [
            " ".join(re.sub(r"<[^>]+>", " ", cell).split())
            for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
        ]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def _markdown_table(markdown: str, header: str) -> list[list[str]]:
    """The cells of each row of the markdown table whose header line starts with ``header``."""
    lines = markdown.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def test_same_name_list_compares_the_people(site: Browse) -> None:
    first, second = site.facts.namesakes
    slug = "quentin-zyxwvut"
    html = _html(site, f"/researchers/{first}-{slug}")
    page = parse_html(html)
    assert f"/researchers/{second}-{slug}" in page.hrefs()
    assert page.find("a", href="#same-name"), "the side column points at the comparison"
    assert page.find("div", class_="table-scroll", role="region", tabindex="0"), (
        "scrolls sideways if wide (it reflows on a phone)"
    )
    assert page.find("caption", id="same-name-caption"), "the table and its scrolling region are named"
    # This person first, then the other; each row: name, papers, years, fields, co-authors,
    # institution, h-index.
    this, other = _table(html, "namesakes")
    assert this[:5] == [f"{NAMESAKE} (this page)", "2", "2024", "cs.CL cs.LG", "Alma Castellanos"]
    assert other[:6] == [NAMESAKE, "2", "2019–2024", "q-bio.GN", "Bertil Oskarsson", "Yale University"]
    assert "/about/researchers" in page.hrefs() and "missing or misattributed" in page.text

    from_the_other = _table(_html(site, f"/researchers/{second}-{slug}"), "namesakes")
    assert [row[0] for row in from_the_other] == [f"{NAMESAKE} (this page)", NAMESAKE]
    assert from_the_other[1][3:5] == ["cs.CL cs.LG", "Alma Castellanos"]

    markdown = _markdown(site, f"/researchers/{first}-{slug}")
    assert "## Others with this name" in markdown
    rows = _markdown_table(markdown, "| Researcher |")
    assert rows[0][:4] == [f"{NAMESAKE} (this page)", "2", "2024", "cs.CL, cs.LG"]
    assert rows[1][:4] == [
        f"[{NAMESAKE}](<{BASE}/researchers/{second}-{slug}>)",
        "2",
        "2019–2024",
        "q-bio.GN",
    ]
    assert "Bertil Oskarsson" in rows[1][4] and "Yale University" in rows[1][5]
    assert f"(<{BASE}/about/researchers>)" in markdown


def test_name_variants_are_listed(site: Browse) -> None:
    path = f"/researchers/{site.facts.spelled}-zoe-astrand"
    html = _html(site, path)
    page = parse_html(html)
    assert "<h1>Zoë Ästrand</h1>" in html, "shown under the fuller spelling"
    assert page.find("p", class_="aka") and "Also written as Zoe Astrand" in page.text
    assert _ld_nodes(html, "Person")[0]["alternateName"] == ["Zoe Astrand"]
    assert "3 papers here" in page.text, "both spellings are one person"
    assert not page.find("section", **{"aria-labelledby": "same-name"}), "nobody else has this name"
    assert "Also written as Zoe Astrand." in _markdown(site, path)


def test_attribution_page(site: Browse) -> None:
    path = "/about/researchers"
    html = _html(site, path)
    page = parse_html(html)
    assert "How papers are attributed to researchers" in page.text
    for needle in ("Co-authors", "People with the same name", "ORCID", "redirect"):
        assert needle in page.text, needle
    assert "Reporting a mistake" not in page.text, "no contact address is configured here"
    assert _canonical(html) == BASE + path
    markdown = _markdown(site, path)
    assert markdown.startswith("# How papers are attributed to researchers") and "ORCID" in markdown
    assert BASE + path in parse_html(_html(site, "/about")).hrefs()


def test_coauthor_network_picture(site: Browse) -> None:
    rid = site.facts.prolific_researcher
    html = _html(site, f"/researchers/{rid}-paz-escritora")
    page = parse_html(html)
    # An inline SVG picture whose co-authors are links: a named group (an "img" may not hold links).
    svg = page.find("svg", role="group")
    assert svg and svg[0].attrs.get("aria-labelledby") == "net-title net-desc"
    nodes = page.find("circle", class_="node")
    assert len(nodes) == 3  # Ines Ortega, Jonas Berg, Kai Lindqvist
    # Under the picture, each co-author in words, with what tells them apart: years, main fields
    # and (when known) institution. 26 papers, shared in turn: 9, 9, 8.
    listed = page.find("ul", class_="plain coauthors")
    assert listed and listed[0].attrs.get("aria-labelledby") == "coauthors-label"
    assert 'Ines Ortega</a> <span class="soft">— 8 shared papers · 2024 · cs.LG, stat.ML</span></li>' in html
    markdown = _markdown(site, f"/researchers/{rid}-paz-escritora")
    assert "## Co-authors" in markdown
    assert "-ines-ortega>): 8 shared papers · 2024 · cs.LG, stat.ML\n" in markdown
    # A co-author with a known institution: Kingma's co-author Ba, printed at Toronto.
    kingma = f"/researchers/{site.facts.enriched_researcher}-diederik-p-kingma"
    toronto = f"/institutions/{site.facts.toronto}-university-of-toronto"
    assert (
        '— 1 shared paper · 2017 · cs.LG</span> <span class="soft">·</span> '
        f'<a href="{toronto}">University of Toronto</a></li>' in _html(site, kingma)
    )
    assert (
        f"-jimmy-lei-ba>): 1 shared paper · 2017 · cs.LG · [University of Toronto](<{BASE}{toronto}>)\n"
        in _markdown(site, kingma)
    )


# -- institutions ------------------------------------------------------------------------------


def test_institution_resolution(site: Browse) -> None:
    iid, ror = site.facts.toronto, site.facts.toronto_ror
    canonical = f"/institutions/{iid}-university-of-toronto"
    assert _redirect(site, f"/institutions/{iid}") == canonical
    assert _redirect(site, f"/institutions/ror:{ror}") == canonical
    assert _redirect(site, f"/institutions/{ror}") == canonical
    assert _redirect(site, f"/institutions/{quote('University of Toronto')}") == canonical
    assert _redirect(site, "/institutions/university-of-toronto") == canonical
    assert _redirect(site, f"/institutions/{quote('Université de Toronto')}") == canonical  # a ROR label
    assert "ROR id 0abcdef12" in _html(site, "/institutions/ror:0abcdef12", status=404)
    assert "No institution is called" in _html(site, "/institutions/nowhere-at-all", status=404)


def test_institution_page(site: Browse) -> None:
    iid = site.facts.toronto
    path = f"/institutions/{iid}-university-of-toronto"
    html = _html(site, path)
    page = parse_html(html)
    assert "University of Toronto" in page.text and "Toronto, Canada" in page.text
    assert f"https://ror.org/{site.facts.toronto_ror}" in page.hrefs()
    assert "/papers/1412.6980-adam-a-method-for-stochastic-optimization" in page.hrefs()
    assert f"/researchers/{site.facts.plain_researcher}-jimmy-lei-ba" in page.hrefs()
    # Each researcher listed carries their years and fields, to tell namesakes apart.
    assert (
        'Jimmy Lei Ba</a> <span class="soft">— 1 paper with this affiliation</span>'
        ' <span class="soft">· 2017</span> <span class="soft">· cs.LG</span>' in html
    )
    organization = [n for n in _ld_nodes(html, "Organization") if n.get("name") == "University of Toronto"]
    assert organization and f"https://ror.org/{site.facts.toronto_ror}" in organization[0]["sameAs"]
    markdown = _markdown(site, path)
    assert (
        markdown.startswith("# University of Toronto\n")
        and "Adam: A Method for Stochastic Optimization" in markdown
    )
    assert "-jimmy-lei-ba>): 1 paper with this affiliation · 2017 · cs.LG\n" in markdown


# -- site pages and errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("/about", "Where the data comes from"),
        ("/contact", "has not published a contact address"),
        ("/privacy", "sets no cookies"),
        ("/developers", "Markdown for agents"),
    ],
)
def test_site_pages(site: Browse, path: str, needle: str) -> None:
    html = _html(site, path)
    assert needle in parse_html(html).text
    assert needle in _markdown(site, path)
    assert _canonical(html) == BASE + path


def test_unknown_route_is_the_404_page(site: Browse) -> None:
    html = _html(site, "/no/such/page", status=404)
    page = parse_html(html)
    assert "This page isn’t here" in page.text and page.find("form", action="/search")
    assert "Where to look next" in page.text
    markdown = _markdown(site, "/no/such/page", status=404)
    assert markdown.startswith("# 404: This page isn’t here")


def test_bad_query_values_are_clear_client_errors(site: Browse) -> None:
    html = _html(site, "/papers?page=0", status=400)
    assert "page" in parse_html(html).text
    _html(site, "/papers?page=abc", status=400)
    _html(site, "/researchers?q=" + "x" * 500, status=400)


# -- escaping ----------------------------------------------------------------------------------


def test_hostile_title_and_name_are_escaped_everywhere(site: Browse) -> None:
    location = _redirect(site, f"/papers/{HOSTILE_ID}")
    html = _html(site, location)
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>more</b>" not in html
    assert "javascript:" not in " ".join(parse_html(html).hrefs())
    assert "&lt;script&gt;alert" in html and HOSTILE_AUTHOR.replace("<", "&lt;").replace(">", "&gt;") in html
    for document in parse_html(html).json_ld:  # JSON-LD cannot close its <script> element early
        assert HOSTILE_AUTHOR in json.dumps(document, ensure_ascii=False)
    page = parse_html(html)
    assert (page.meta("og:title") or "").startswith('<script>alert("title")')  # escaped in the attribute
    markdown = _markdown(site, location)
    rendered = MarkdownIt("commonmark").render(markdown)  # raw HTML allowed: the worst case
    for tag in ("<script", "<img", "<iframe", "<b>"):
        assert tag not in rendered, tag
    assert 'href="javascript:' not in rendered
    researcher_md = _markdown(site, _redirect(site, f"/researchers/{site.facts.hostile_researcher}"))
    assert "<img" not in MarkdownIt("commonmark").render(researcher_md)
    listing = _html(site, "/papers?category=cs.CR")
    assert "<script>alert" not in listing and "&lt;script&gt;" in listing


# -- headers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/", "/papers/1412.6980", "/no/such/page", "/api/papers", "/static/style.css"]
)
def test_security_headers_on_every_answer(site: Browse, path: str) -> None:
    response = site.client.get(path, follow_redirects=False)
    csp = response.headers["content-security-policy"]
    assert "img-src 'self'" in csp and "frame-ancestors 'none'" in csp and "default-src 'self'" in csp
    assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "strict-origin-when-cross-origin"
    assert "Accept" in response.headers["vary"]
    assert response.headers["strict-transport-security"].startswith("max-age=")  # public URL is https


# -- an unreachable catalogue ------------------------------------------------------------------


def test_unreachable_catalogue_is_a_clear_503(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A catalogue that cannot be reached answers 503 in the format asked for, naming no internals."""
    work = tmp_path_factory.mktemp("down")
    missing = "postgresql+psycopg://postgres@127.0.0.1:5432/wovepaper_test_does_not_exist"
    settings = settings_for(
        missing,
        {
            "WOVEPAPER_DATA_DIR": str(work / "data"),
            "WOVEPAPER_WORKER_EMBEDDED": "false",
        },
    )
    with TestClient(create_app(settings)) as client:
        page = client.get("/papers/1412.6980")
        assert page.status_code == 503 and page.headers["content-type"] == "text/html; charset=utf-8"
        assert "The catalogue is unavailable" in page.text and "psycopg" not in page.text
        markdown = client.get("/papers/1412.6980", headers=MD)
        assert markdown.status_code == 503 and markdown.text.startswith("# 503: The catalogue is unavailable")
        api = client.get("/api/papers")
        assert api.status_code == 503
        assert api.json() == {
            "status_code": 503,
            "detail": "The catalogue cannot be reached right now; try again shortly.",
        }


def test_researcher_search_tells_namesakes_apart(site: Browse) -> None:
    first, second = site.facts.namesakes
    html = _html(site, f"/researchers?q={quote(NAMESAKE)}")
    page = parse_html(html)
    assert page.find("div", class_="table-scroll", role="region", tabindex="0"), (
        "scrolls sideways if wide (it reflows on a phone)"
    )
    # Name, papers, years, fields, institution or top co-author; neither has enrichment, so the
    # h-index and citation columns are left out rather than shown empty.
    assert _table(html, "namesakes") == [
        [NAMESAKE, "2", "2024", "cs.CL cs.LG", "with Alma Castellanos"],
        [NAMESAKE, "2", "2019–2024", "q-bio.GN", "Yale University"],
    ]
    assert "h-index" not in html and "Citations" not in html
    # On a phone the rows stack into labelled lines; the roles keep it a table for screen readers.
    assert page.find("table", class_="people namesakes reflow", role="table")
    labels = [e.attrs.get("data-label") for e in page.find("td", role="cell")]
    row = ["Papers here", "Years", "Main fields"]
    assert labels == [*row, "Co-author", *row, "Institution"]
    assert [f"/researchers/{rid}-quentin-zyxwvut" in page.hrefs() for rid in (first, second)] == [True, True]
    # With an enriched researcher among the rows, the metric columns are there.
    assert "h-index" in _html(site, "/researchers?q=kingma")

    markdown = _markdown(site, f"/researchers?q={quote(NAMESAKE)}")
    assert "2 papers, 2024, cs.CL, cs.LG, with [Alma Castellanos]" in markdown
    assert "2 papers, 2019–2024, q-bio.GN, [Yale University]" in markdown
