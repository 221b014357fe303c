"""The chat dock and the /chat page in a real browser (Debian Chromium, Playwright), signed in with
the local link printed by ``python -m app serve``: the dock opens and closes with the keyboard,
"Chat with this paper" scopes it, everything passes the axe audit at desktop and phone width, and
hostile model output (``<script>``, ``javascript:`` links, outside images, raw HTML) renders inert
under the strict CSP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.browser.test_browser import AXE, AXE_RULES, AXE_RUN, CHROMIUM, LAUNCH_ARGS, Log, open_tab
from tests.integration.signin_peers import app_processes
from tests.integration.test_chat_pages import PAPER, TITLE, catalogue, printed_link

pytestmark = pytest.mark.slow

PHONE = {"width": 390, "height": 844}


@dataclass
class Tab:
    context: BrowserContext
    page: Page
    log: Log


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: run scripts/ensure-services.sh (make test does)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def signed_in(chromium: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tab]:
    """One signed-in tab for the module (the local link works once)."""
    work = tmp_path_factory.mktemp("chat-browser")
    row = {"id": PAPER, "title": TITLE, "summary": "s", "authors": ["Ada Lovelace"], "categories": ["cs.CL"]}
    catalogue(work / "app-0", [{**row, "_listing_file": "2024-01-02"}])
    with app_processes(work, 1, {}) as (base,):
        link = printed_link(work / "app-0" / "server.log")
        context, page, log = open_tab(chromium, base)
        page.goto(link)
        assert page.locator(".account-link").inner_text() == "Local reader"
        yield Tab(context, page, log)
        context.close()


def audit(page: Page) -> None:
    page.evaluate(AXE.read_text())
    report = page.evaluate(AXE_RUN, AXE_RULES)
    assert report["passes"] > 10, report
    assert report["violations"] == [], f"{page.url}: {report['violations']}"


def test_the_dock_opens_and_closes_with_the_keyboard(signed_in: Tab) -> None:
    page = signed_in.page
    page.goto("/papers")
    summary = page.locator("[data-chat-dock] > summary")
    question = page.get_by_label("Your question")
    assert summary.is_visible() and not question.is_visible()  # collapsed by default
    summary.focus()
    page.keyboard.press("Enter")
    question.wait_for(state="visible")
    page.wait_for_function("document.activeElement?.id === 'dock-question'")  # focus moves in
    audit(page)  # open, on an ordinary page
    page.keyboard.press("Escape")
    question.wait_for(state="hidden")
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"
    signed_in.log.assert_clean()


def test_chat_with_this_paper_opens_the_dock_scoped_to_it(signed_in: Tab) -> None:
    page = signed_in.page
    page.goto(f"/papers/{PAPER}")
    page.get_by_role("link", name="Chat with this paper").click()
    chips = page.get_by_role("list", name="Papers in scope")
    assert chips.get_by_role("listitem").count() == 1 and TITLE in chips.inner_text()
    assert page.get_by_text("Scope: this paper").first.is_visible()
    page.wait_for_function("document.activeElement?.id === 'dock-question'")
    assert f"/papers/{PAPER}" in page.url  # the dock opened in place: no navigation to /chat
    page.get_by_role("button", name=f"Remove {TITLE} from the scope").click()
    assert page.get_by_text("Scope: the whole archive").first.is_visible()
    signed_in.log.assert_clean()


def test_the_chat_page_passes_the_audit_at_desktop_and_phone_width(signed_in: Tab) -> None:
    page = signed_in.page
    page.goto(f"/chat?paper={PAPER}")
    assert page.get_by_role("heading", name="Chat with the papers").is_visible()
    assert page.locator("[data-chat-dock]").count() == 0
    assert page.get_by_text("Scope: this paper").is_visible()
    audit(page)
    page.set_viewport_size(PHONE)
    try:
        for path in ("/chat", "/papers"):
            page.goto(path)
            if path == "/papers":
                page.locator("[data-chat-dock] > summary").click()
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at phone width"
            box = page.get_by_label("Your question").bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
            audit(page)
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})
    signed_in.log.assert_clean()


HOSTILE = (
    "Adam keeps moment estimates [1]; see [2].\n\n"
    "<script>window.__pwned = 'script'</script>\n\n"
    '<img src="https://example.com/x.png" onerror="window.__pwned = \'img\'">\n\n'
    "![tracker](https://example.com/pixel.png) and ![local](/static/icon.svg)\n\n"
    "[click me](javascript:window.__pwned='link') [data](data:text/html,<b>x</b>) "
    "[protocol-relative](//example.com/x) [fine](https://arxiv.org/abs/1412.6980)\n\n"
    "<a href=\"javascript:window.__pwned='raw'\">raw link</a>"
)


def test_hostile_model_output_renders_inert(signed_in: Tab) -> None:
    """The page's own renderer (what a streamed answer goes through) on hostile markdown."""
    page = signed_in.page
    page.goto("/chat")
    refs = [{"n": 1, "paper_url": f"/papers/{PAPER}", "title": TITLE, "pages": [3], "arxiv_id": PAPER}]
    result = page.evaluate(
        """async ([text, refs]) => {
          const { renderAnswer } = await import("/static/chat.js");
          const box = document.createElement("div");
          box.innerHTML = renderAnswer(text, refs);
          document.querySelector("main").append(box);
          await new Promise((r) => setTimeout(r, 300));
          return {
            scripts: box.querySelectorAll("script").length,
            images: box.querySelectorAll("img").length,
            hrefs: [...box.querySelectorAll("a")].map((a) => a.getAttribute("href")),
            handlers: [...box.querySelectorAll("*")].flatMap((e) => e.getAttributeNames()).filter((n) => n.startsWith("on")),
            cite: box.querySelector("a.cite")?.textContent,
            text: box.textContent,
            pwned: window.__pwned ?? null,
          };
        }""",
        [HOSTILE, refs],
    )
    assert result["scripts"] == 0 and result["images"] == 0 and result["handlers"] == []
    assert result["hrefs"] == [f"/papers/{PAPER}", "https://arxiv.org/abs/1412.6980"], result["hrefs"]
    assert result["cite"] == "[1]" and "[2]" in result["text"]  # an unknown number stays text
    assert "<script>" in result["text"] and "[image: tracker]" in result["text"]  # shown, not run
    for link in page.locator("main a").all():
        assert not (link.get_attribute("href") or "").lower().startswith(("javascript:", "data:"))
    page.locator("main a", has_text="[1]").click()
    assert f"/papers/{PAPER}" in page.url
    assert result["pwned"] is None and page.evaluate("window.__pwned ?? null") is None
    signed_in.log.assert_clean()  # no CSP violation: nothing even tried to load from outside


def test_events_are_read_from_a_fetch_stream(signed_in: Tab) -> None:
    """The SSE reader on a stream cut at awkward places: mid-line, mid-character, CRLF, pings."""
    page = signed_in.page
    page.goto("/chat")
    chunks = [
        ": ping\n\nevent: evidence\ndata: {\"passages\": [], \"conversation_id\": 7}\n",
        "\nevent: tok",
        'en\r\ndata: {"text": "caf\u00e9',
        ' \\u2014 [1]"}\r\n\r\ndata: {"type": "done", "conversation_id": 7}\n\n',
    ]
    events = page.evaluate(
        """async (chunks) => {
          const { readEvents } = await import("/static/chat.js");
          const bytes = chunks.map((c) => new TextEncoder().encode(c));
          // split a multi-byte character across two chunks too
          const joined = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
          let at = 0; for (const b of bytes) { joined.set(b, at); at += b.length; }
          const cut = joined.indexOf(0xc3) + 1;  // between the two bytes of "é"
          const parts = [joined.slice(0, cut), joined.slice(cut)];
          const body = new ReadableStream({ start(c) { parts.forEach((p) => c.enqueue(p)); c.close(); } });
          const out = [];
          for await (const e of readEvents(new Response(body))) out.push(e);
          return out;
        }""",
        chunks,
    )
    assert json.loads(json.dumps(events)) == [
        {"name": "evidence", "data": {"passages": [], "conversation_id": 7}},
        {"name": "token", "data": {"text": "café — [1]"}},
        {"name": "done", "data": {"type": "done", "conversation_id": 7}},
    ]


def test_the_dock_is_not_offered_to_anonymous_readers_as_a_panel(chromium: Browser, signed_in: Tab) -> None:
    base = signed_in.page.url.split("/", 3)[:3]
    context, page, log = open_tab(chromium, "/".join(base))
    try:
        page.goto("/papers")
        page.locator("[data-chat-dock] > summary").click()
        offer = page.get_by_role("link", name="Sign in to chat")
        assert offer.is_visible() and offer.get_attribute("href") == "/signin?next=/papers"
        audit(page)
        log.assert_clean()
    finally:
        context.close()

