"""A reader's whole journey in a real browser (Debian Chromium, Playwright), one server for it all:
``python -m app serve`` on the chat corpus (three PDFs ingested by the product's pipeline), signing
in through a real OpenID provider (oidc-provider-mock) and answering through the scripted
OpenAI-compatible model server behind ``WOVEPAPER_LLM_BASE_URL``.

Search, open a paper, follow the redirect from an id-only URL to the canonical one, sign in at the
provider, ask in the dock and watch the evidence and then the answer stream in, click a citation,
follow a researcher and find their paper in the home feed; every page visited is then fetched again
with ``Accept: text/markdown`` and must come back as markdown. Each step leaves a screenshot in
``test-artifacts/journey/`` (git-ignored; CI keeps the folder as artifacts)."""

from __future__ import annotations

import itertools
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect

from settings import PROJECT_ROOT
from tests.browser.test_browser import Log, open_tab
from tests.browser.test_chat_browser import ANSWER, PAPER, QUESTION, TITLE, TRACE
from tests.integration.chat_corpus import build
from tests.integration.scripted_llm import ScriptedLLM
from tests.integration.signin_peers import app_processes, oidc_mock

pytestmark = pytest.mark.slow

SHOTS = PROJECT_ROOT / "test-artifacts" / "journey"
PROVIDER = "Test SSO"
READER = "alice"


@dataclass
class Journey:
    base: str
    context: BrowserContext
    page: Page
    log: Log
    model: ScriptedLLM
    shots: list[Path] = field(default_factory=list)

    def shot(self, step: str) -> None:
        """A full-page screenshot of this step, numbered in the order taken."""
        path = SHOTS / f"{len(self.shots) + 1:02d}-{step}.png"
        self.page.screenshot(path=path, full_page=True)
        assert path.stat().st_size > 10_000, f"{path} looks blank"
        self.shots.append(path)


def _no_outside_stylesheet(route: Route) -> None:
    # The mock provider's form links Pico CSS from a CDN; offline, an empty sheet stands in for it.
    route.fulfill(status=200, content_type="text/css", body="")


@pytest.fixture(scope="module")
def journey(chromium: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Journey]:
    work = tmp_path_factory.mktemp("journey")
    corpus = build(work / "corpus")
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    model = ScriptedLLM(delta_delay=0.15).start()
    try:
        with oidc_mock() as issuer:
            env = {
                **corpus.env,
                "WOVEPAPER_LLM_BASE_URL": model.base_url,
                "WOVEPAPER_LLM_FIRST_TOKEN_TIMEOUT_SECONDS": "5",
                "WOVEPAPER_OIDC_ISSUER": issuer,
                "WOVEPAPER_OIDC_NAME": PROVIDER,
                "WOVEPAPER_OIDC_CLIENT_ID": "wovepaper-journey",
                "WOVEPAPER_OIDC_CLIENT_SECRET": "s3cret",
            }
            with app_processes(work, 1, env) as (base,):
                context, page, log = open_tab(chromium, base)
                context.route("https://cdn.jsdelivr.net/**", _no_outside_stylesheet)
                try:
                    yield Journey(base, context, page, log, model)
                finally:
                    context.close()
    finally:
        model.stop()


def test_a_readers_journey_with_a_screenshot_of_each_step(
    journey: Journey, capsys: pytest.CaptureFixture[str]
) -> None:
    page, base = journey.page, journey.base
    visited: list[str] = []  # paths to fetch again as markdown

    # Search from the home page.
    page.goto("/")
    journey.shot("home")
    visited.append("/")
    box = page.get_by_role("searchbox", name="Search papers")
    box.fill("multi-head attention")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/search\?q=multi-head\+attention"))
    hit = page.locator("ol.results > li.paper").filter(has_text=TITLE).first
    expect(hit).to_be_visible()
    journey.shot("search")
    visited.append(page.url.removeprefix(base))

    # Open the paper from the results: its canonical address is the id and a slug of the title.
    hit.get_by_role("link", name=TITLE).first.click()
    page.wait_for_url(re.compile(rf"/papers/{re.escape(PAPER)}-attention"))
    canonical = page.url.removeprefix(base)
    expect(page.get_by_role("heading", level=1)).to_have_text(TITLE)
    journey.shot("paper")
    visited.append(canonical)

    # An id-only URL is redirected there.
    response = page.goto(f"/papers/{PAPER}")
    assert response is not None and response.status == 200
    redirected = response.request.redirected_from
    assert redirected is not None and redirected.url == f"{base}/papers/{PAPER}"
    assert (redirect := redirected.response()) is not None and redirect.status in (301, 308)
    assert page.url == f"{base}{canonical}"
    journey.shot("id-only-redirected")

    # Sign in through the OpenID provider and come back to the paper.
    page.get_by_role("link", name="Sign in").click()
    page.get_by_role("button", name=f"Continue with {PROVIDER}").click()
    page.wait_for_url(re.compile(r"^http://localhost:\d+/"))  # at the provider
    page.get_by_placeholder("sub").fill(READER)
    journey.shot("provider")
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{base}{canonical}")
    expect(page.locator(".account-link")).to_have_text(READER)
    journey.shot("signed-in")

    # Ask in the dock: the evidence shows first, then the answer streams in token by token.
    journey.model.script(ANSWER)
    page.get_by_text("Ask the papers").click()
    expect(page.locator("[data-chat-dock] [data-chat-status]")).to_have_text("Language model ready.")
    page.get_by_label("Your question").fill(QUESTION)
    page.locator("[data-chat-dock] [data-chat-log]").evaluate(TRACE)
    page.keyboard.press("Enter")
    evidence = page.locator("[data-chat-dock] .evidence-list li")
    expect(evidence.first).to_contain_text(TITLE)
    journey.shot("evidence")
    answer = page.locator("[data-chat-dock] .answer")
    expect(answer).to_contain_text("The Transformer")
    answer.scroll_into_view_if_needed()  # the dock's log scrolls: show the answer in the picture
    journey.shot("answer-streaming")
    references = page.locator("[data-chat-dock] ol.references")
    references.wait_for()
    references.scroll_into_view_if_needed()
    journey.shot("answer")
    trace = page.evaluate("window.__trace")
    shown = [t for t in trace if t["answer"]]
    assert shown and all(t["evidence"] > 0 for t in shown), "an answer token was shown before the evidence"
    steps = list(dict.fromkeys(t["answer"] for t in shown))
    assert len(steps) >= 3, f"the answer did not arrive token by token: {steps}"
    assert all(later.startswith(earlier[:10]) for earlier, later in itertools.pairwise(steps))
    assert answer.inner_text().startswith("The Transformer relies entirely on multi-head attention [1]")

    # Click the citation: it opens our page reader on the cited page of the paper, whose heading
    # leads to the paper's own page.
    cite = answer.get_by_role("link", name="[1]")
    href = cite.get_attribute("href") or ""
    assert href.startswith(f"/papers/{PAPER}/pages/"), href
    cite.click()
    page.wait_for_url(re.compile(rf"/papers/{re.escape(PAPER)}/pages/\d+"))
    expect(page.get_by_role("heading", level=1)).to_contain_text(TITLE)
    journey.shot("citation")
    page.get_by_role("heading", level=1).get_by_role("link").click()
    page.wait_for_url(re.compile(rf"/papers/{re.escape(PAPER)}-"))
    expect(page.get_by_role("heading", level=1)).to_have_text(TITLE)
    assert len(journey.model.requests) == 1

    # Follow one of its authors; the home page's feed then lists the paper.
    page.locator(".author-list").get_by_role("link").first.click()
    page.wait_for_url(re.compile(r"/researchers/\d+-"))
    researcher = page.url.removeprefix(base)
    page.get_by_role("button", name="Follow").click()
    expect(page.get_by_role("button", name="Following")).to_be_visible()
    assert page.url == f"{base}{researcher}"  # flipped in place, no reload
    journey.shot("following")
    visited.append(researcher)
    page.goto("/")
    expect(page.get_by_text(TITLE).first).to_be_visible()
    journey.shot("feed")
    journey.log.assert_clean()

    # The same pages, asked for as markdown (signed in, as the reader is), are markdown.
    for path in [*visited, f"/papers/{PAPER}"]:
        got = journey.context.request.get(path, headers={"Accept": "text/markdown"})
        assert got.status == 200, f"{path}: {got.status}"
        assert got.headers["content-type"] == "text/markdown; charset=utf-8", (path, got.headers)
        text = got.text()
        assert text.startswith("# ") and "<html" not in text.lower(), f"{path}: {text[:200]}"
        assert got.headers["vary"].lower().find("accept") >= 0, (path, got.headers)
    paper_md = journey.context.request.get(canonical, headers={"Accept": "text/markdown"}).text()
    assert paper_md.startswith(f"# {TITLE}")

    with capsys.disabled():
        print(f"\njourney screenshots ({len(journey.shots)}): {SHOTS}")
    assert [p.name for p in sorted(SHOTS.glob("*.png"))] == [p.name for p in journey.shots]
