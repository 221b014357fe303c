"""The paper page's "Get the full text" in a real browser (Chromium under Playwright): the click
sends the form by fetch, and the page follows the state to "indexed" without a reload, under the
site's Content-Security-Policy, with no script error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from tests.integration.fulltext_site import IDS, Site, fulltext_site, pdf
from tests.integration.indexing_peers import paper_text, text_pdf
from tests.integration.signin_peers import COOKIE

RECORD_STATES = """() => {
  const section = document.querySelector("[data-full-text]");
  window.seenStates = [section.dataset.fullTextState];
  new MutationObserver(() => {
    const state = section.dataset.fullTextState;
    if (window.seenStates.at(-1) !== state) window.seenStates.push(state);
  }).observe(section, { attributes: true, attributeFilter: ["data-full-text-state"] });
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with fulltext_site(tmp_path_factory.mktemp("fulltext-browser")) as found:
        yield found


def signed_in(chromium: Browser, site: Site) -> BrowserContext:
    """A browser context holding the signed-in person's session cookie."""
    session = site.browser.session
    assert session is not None
    context = chromium.new_context()
    context.add_cookies([{"name": COOKIE, "value": session, "url": site.base}])
    return context


def test_the_page_follows_the_full_text_from_the_button_to_indexed_without_a_reload(
    chromium: Browser, site: Site
) -> None:
    paper = IDS[12]
    pages = [paper_text(paper, 30), paper_text(paper + " part two", 30)]
    site.arxiv.answers[f"/pdf/{paper}"] = [pdf(text_pdf(pages), delay=1.5)]
    context = signed_in(chromium, site)
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    try:
        page.goto(f"{site.base}/papers/{paper}")
        section = page.locator("[data-full-text]")
        assert section.get_attribute("data-full-text-state") == "none"
        assert "Only the abstract is held here" in section.inner_text()
        page.evaluate(RECORD_STATES)
        page.get_by_role("button", name="Get the full text").click()
        # (Playwright's string predicates are eval: the page's CSP refuses them.)
        expect(section).to_have_attribute("data-full-text-state", "indexed", timeout=90_000)
        seen = page.evaluate("window.seenStates")  # gone, had the page been reloaded
        assert seen[0] == "none" and seen[-1] == "indexed" and len(seen) >= 3, seen
        assert set(seen) <= {"none", "queued", "fetching", "parsing", "indexing", "indexed"}, seen
        message = page.locator("[data-full-text-message]").inner_text()
        assert message.startswith("Full text indexed (2 pages)"), message
        assert page.locator("[data-full-text-form]").is_hidden()
        assert problems == []
    finally:
        context.close()


def test_a_chat_scoped_to_a_paper_without_full_text_offers_it(chromium: Browser, site: Site) -> None:
    paper = IDS[13]
    site.arxiv.answers[f"/pdf/{paper}"] = [pdf(text_pdf([paper_text(paper, 30)]), delay=1.0)]
    context = signed_in(chromium, site)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    try:
        page.goto(f"{site.base}/papers/{paper}")
        page.locator("a[data-chat-paper]").click()  # the dock opens, scoped to this paper
        note = page.locator("[data-chat-dock] .chat-fulltext")
        expect(note).to_contain_text("Only the abstract of", timeout=15_000)
        note.get_by_role("button", name="Get the full text").click()
        expect(note).not_to_contain_text("Only the abstract", timeout=15_000)
        expect(note).to_have_text("", timeout=90_000)  # held now: nothing left to say
        assert site.get(f"/api/papers/{paper}/fulltext").json()["state"] == "indexed"
        assert problems == []
    finally:
        context.close()
