"""The site in a real browser: Debian's Chromium driven by Playwright, against the app served by
uvicorn on loopback over the small real browse catalogue (``tests.integration.browse_catalogue``).

What only a browser shows: the strict Content-Security-Policy as the browser enforces it (no console
errors, no ``securitypolicyviolation`` events), the search box submitted with Enter, links followed
by clicking, the co-author picture actually laid out, keyboard focus order, the page's own
``fetch()`` of its markdown alternate, and a screenshot.

The browser is a test requirement, not an option: ``make test`` installs it
(``scripts/ensure-services.sh``) and these tests fail, never skip, when it is missing.
"""

from __future__ import annotations

import re
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Playwright,
    ViewportSize,
    sync_playwright,
)

from settings import SHARED_DATA
from tests.integration.browse_catalogue import ENRICHED, Facts, built, served

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
VIEWPORT: ViewportSize = {"width": 1280, "height": 800}
ADAM = "1412.6980"  # "Adam: A Method for Stochastic Optimization", Kingma and Ba
TIMEOUT_MS = 15_000

# Each document reports its CSP violations to the test (installed before any page script runs).
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (e) => {
  const where = `${e.sourceFile}:${e.lineNumber}`;
  window.__reportCsp(`${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${where}`);
});
"""


@dataclass
class Site:
    base: str
    facts: Facts


@dataclass
class Log:
    """What the browser complained about while a test ran."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert not self.console_errors, self.console_errors
        assert not self.page_errors, self.page_errors
        assert not self.csp_violations, self.csp_violations


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with (
        built("sqlite", SHARED_DATA, tmp_path_factory.mktemp("browser")) as (settings, facts),
        served(settings) as base,
    ):
        _wait_for_search(base)
        yield Site(base, facts)


def _wait_for_search(base: str) -> None:
    """The lexical index is built in the background after start-up; wait until it answers."""
    deadline = time.monotonic() + 60
    with httpx.Client(base_url=base, timeout=10) as http:
        while True:
            answer = http.get("/api/search", params={"q": "stochastic optimization", "mode": "bm25"})
            if answer.status_code == 200 and answer.json()["total"] > 0:
                return
            assert time.monotonic() < deadline, f"search never answered: {answer.text[:300]}"
            time.sleep(0.2)


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    assert CHROMIUM.exists(), (
        f"{CHROMIUM} is missing: run scripts/ensure-services.sh (make test does), or apt-get install chromium"
    )
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
    yield browser
    browser.close()


def open_tab(browser: Browser, base: str) -> tuple[BrowserContext, Page, Log]:
    """A fresh browser context on ``base`` whose console errors, page errors and CSP violations
    are collected in the returned :class:`Log`."""
    log = Log()
    context = browser.new_context(base_url=base, viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    context.expose_function("__reportCsp", lambda violation: log.csp_violations.append(violation))
    context.add_init_script(CSP_LISTENER)
    page = context.new_page()

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            log.console_errors.append(f"{message.text} ({message.location.get('url')})")

    page.on("console", on_console)
    page.on("pageerror", lambda error: log.page_errors.append(str(error)))
    return context, page, log


@pytest.fixture
def page(browser: Browser, site: Site) -> Iterator[tuple[Page, Log]]:
    context, page, log = open_tab(browser, site.base)
    yield page, log
    context.close()


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_home_page_is_clean_under_the_csp_and_screenshots(page: tuple[Page, Log], tmp_path: Path) -> None:
    tab, log = page
    response = tab.goto("/", wait_until="load")
    assert response is not None and response.status == 200
    assert "default-src 'self'" in response.headers["content-security-policy"]
    tab.wait_for_load_state("networkidle")
    assert tab.locator("h1").first.is_visible()
    # The stylesheet loaded and applies (a CSP or MIME problem would leave the page unstyled).
    rules = tab.evaluate("[...document.styleSheets].reduce((n, s) => n + s.cssRules.length, 0)")
    assert rules > 20
    assert tab.locator(".site-header").evaluate("e => getComputedStyle(e).borderBottomStyle") == "solid"
    log.assert_clean()

    shot = tmp_path / "home.png"
    tab.screenshot(path=shot, full_page=True)
    data = shot.read_bytes()
    width, height = _png_size(data)
    assert width == VIEWPORT["width"] and height >= VIEWPORT["height"]
    assert len(data) > 20_000, "the screenshot looks blank"  # a blank page compresses to a few KB

    # The listener works and the policy is enforced: an outside image is refused and reported.
    tab.evaluate(
        """() => { const i = new Image(); i.src = "https://evil.example/x.png"; document.body.append(i); }"""
    )
    deadline = time.monotonic() + 5
    while not log.csp_violations and time.monotonic() < deadline:
        tab.wait_for_timeout(50)
    assert any("img-src blocked https://evil.example/x.png" in v for v in log.csp_violations), log


def test_search_box_enter_shows_highlighted_results(page: tuple[Page, Log]) -> None:
    tab, log = page
    tab.goto("/")
    box = tab.get_by_role("searchbox", name="Search papers")
    box.fill("stochastic optimization")
    box.press("Enter")
    tab.wait_for_url(re.compile(r"/search\?q=stochastic\+optimization$"))
    results = tab.locator("ol.results > li.paper")
    assert results.count() > 0
    assert "Adam: A Method for Stochastic Optimization" in results.all_inner_texts()[0]
    marks = tab.locator("ol.results .snippet mark")
    assert marks.count() > 0 and marks.first.is_visible()
    assert {m.lower()[:5] for m in marks.all_inner_texts()} <= {"stoch", "optim"}
    # Highlighted for the eye, not only in markup: search.css gives <mark> its own background.
    background = marks.first.evaluate("e => getComputedStyle(e).backgroundColor")
    plain = tab.locator("ol.results .snippet").first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background not in (plain, "rgba(0, 0, 0, 0)"), background
    log.assert_clean()


def test_author_link_reaches_researcher_with_visible_network(page: tuple[Page, Log], site: Site) -> None:
    tab, log = page
    tab.goto(f"/papers/{ADAM}")
    assert "Adam" in tab.locator("h1").inner_text()
    tab.locator(".author-list").get_by_role("link", name=ENRICHED).click()
    tab.wait_for_url(re.compile(rf"/researchers/{site.facts.enriched_researcher}-diederik-p-kingma$"))
    assert tab.locator("h1").inner_text().strip() == ENRICHED
    picture = tab.locator("figure.network svg")
    picture.wait_for(state="visible")
    box = picture.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 50, box
    # The drawing inside is laid out too: co-author dots with a real size on screen.
    dot = picture.locator("circle").nth(1)
    dot_box = dot.bounding_box()
    assert dot_box is not None and dot_box["width"] > 0 and dot_box["height"] > 0, dot_box
    assert picture.locator("text", has_text="Jimmy Lei Ba").is_visible()
    log.assert_clean()


def test_first_tab_focuses_a_visible_skip_link(page: tuple[Page, Log]) -> None:
    tab, log = page
    tab.goto("/papers")
    tab.keyboard.press("Tab")
    focused: dict[str, Any] = tab.evaluate(
        """() => {
        const e = document.activeElement, r = e.getBoundingClientRect();
        return {text: e.textContent.trim(), href: e.getAttribute("href"),
                x: r.x, y: r.y, w: r.width, h: r.height};
        }"""
    )
    assert focused["text"] == "Skip to content" and focused["href"] == "#main", focused
    # Visible when focused: inside the viewport, with a size, and painted over the header.
    assert 0 <= focused["x"] < VIEWPORT["width"] and 0 <= focused["y"] < VIEWPORT["height"], focused
    assert focused["w"] > 10 and focused["h"] > 5, focused
    skip = tab.get_by_role("link", name="Skip to content")
    assert skip.is_visible()
    centre = (focused["x"] + focused["w"] / 2, focused["y"] + focused["h"] / 2)
    on_top = tab.evaluate("([x, y]) => document.elementFromPoint(x, y)?.closest('a.skip') !== null", centre)
    assert on_top, "the focused skip link is covered by something else"
    tab.keyboard.press("Enter")
    tab.wait_for_url(re.compile(r"/papers#main$"))
    log.assert_clean()


def test_markdown_alternate_fetched_by_the_page(page: tuple[Page, Log]) -> None:
    tab, log = page
    tab.goto(f"/papers/{ADAM}")
    answer: dict[str, Any] = tab.evaluate(
        """async () => {
        const link = document.querySelector('link[rel="alternate"][type="text/markdown"]');
        const response = await fetch(link.href);
        return {href: link.href, status: response.status,
                type: response.headers.get("content-type"), text: await response.text()};
        }"""
    )
    assert answer["href"].endswith(".md") and answer["href"].startswith(tab.url.split("/papers/")[0])
    assert answer["status"] == 200 and answer["type"] == "text/markdown; charset=utf-8", answer
    text = answer["text"]
    assert text.startswith("# Adam: A Method for Stochastic Optimization"), text[:200]
    assert "<html" not in text.lower() and ENRICHED in text
    log.assert_clean()


# axe-core (npm, installed into tests/browser/node_modules by `make test`), evaluated in the page
# through the DevTools protocol: the page's CSP (script-src 'self') stays on and is not involved.
AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
AXE_RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
AXE_RUN = """
async (tags) => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]});
  return {
    version: axe.version,
    passes: result.passes.length,
    violations: result.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ")),
    })),
  };
}
"""


def test_every_page_type_passes_the_accessibility_audit(page: tuple[Page, Log], site: Site) -> None:
    tab, log = page
    paths = [
        "/",
        f"/papers/{ADAM}",
        f"/researchers/{site.facts.enriched_researcher}",
        f"/researchers/{site.facts.namesakes[0]}",  # the same-name table (a scrolling region)
        f"/institutions/{site.facts.toronto}",
        "/researchers",
        "/institutions",
        "/papers",
        "/search",
        "/search?q=stochastic+optimization",
        f"/papers/{ADAM}/pages/1?quote=adaptive+moments",  # the page reader without a PDF held here
        "/search?q=qxzvbnm+wplkjh",
        "/about",
        "/about/researchers",
        "/contact",
        "/privacy",
        "/developers",
        "/signin",
        "/papers/2401.99999",  # the 404 page (last: its status is the one console error expected)
    ]
    assert AXE.is_file(), f"{AXE} is missing: `make test` installs it (npm ci --prefix tests/browser)"
    source = AXE.read_text()
    for path in paths:
        tab.goto(path)
        tab.evaluate(source)
        report = tab.evaluate(AXE_RUN, AXE_RULES)
        assert report["version"].startswith("4.") and report["passes"] > 10, report
        assert report["violations"] == [], f"{path}: {report['violations']}"
    assert [e for e in log.console_errors if "404 (Not Found)" in e and paths[-1] in e]
    log.console_errors = [e for e in log.console_errors if paths[-1] not in e]
    log.assert_clean()
