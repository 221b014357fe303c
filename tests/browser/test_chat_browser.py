"""The chat in a real browser (Debian Chromium, Playwright) against ``python -m app serve`` on the
chat test corpus (three PDFs ingested by the product's pipeline), its model the scripted
OpenAI-compatible server reached through ``WOVEPAPER_LLM_BASE_URL`` and the real ``openai`` client —
the seam the real LLM uses. Signed in with the printed local link, a reader asks in the dock and
sees the evidence, then the answer token by token, then a citation link that opens the paper; the
/chat page lists, reopens, renames, exports and deletes the conversation; the dock opens and closes
with the keyboard; everything passes the axe audit at desktop and phone width; and hostile model
output (``<script>``, ``javascript:`` links, outside images, raw HTML) renders inert under the CSP."""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs, quote_plus, urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from ingest.pdf.extract import quote_rects
from settings import SHARED_DATA
from tests.browser.test_browser import AXE, AXE_RULES, AXE_RUN, VIEWPORT, Log, open_tab
from tests.integration.chat_corpus import FULL_TEXT, build
from tests.integration.scripted_llm import ScriptedLLM
from tests.integration.signin_peers import app_processes, printed_link

pytestmark = pytest.mark.slow

PHONE: ViewportSize = {"width": 390, "height": 844}
PAPER = FULL_TEXT[0]  # 1706.03762
TITLE = "Attention Is All You Need"
QUESTION = "How does the Transformer use multi-head attention instead of recurrence?"
# A key split over two deltas, as a model may send it; the reader sees "[1]".
ANSWER = ["The Transformer", " relies entirely", " on multi-head attention [S", "1]", " and drops it."]


@dataclass
class Tab:
    base: str
    context: BrowserContext
    page: Page
    log: Log
    model: ScriptedLLM


@pytest.fixture(scope="module")
def signed_in(chromium: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tab]:
    """The app on the chat corpus with the scripted model, and one signed-in tab (the link works once)."""
    work = tmp_path_factory.mktemp("chat-browser")
    corpus = build(work / "corpus")
    model = ScriptedLLM(delta_delay=0.15).start()
    env = {
        **corpus.env,
        "WOVEPAPER_LLM_BASE_URL": model.base_url,
        "WOVEPAPER_LLM_FIRST_TOKEN_TIMEOUT_SECONDS": "5",
    }
    try:
        with app_processes(work, 1, env) as (base,):
            link = printed_link(work / "app-0" / "server.log")
            context, page, log = open_tab(chromium, base)
            page.goto(link)
            assert page.locator(".account-link").inner_text() == "Local reader"
            yield Tab(base, context, page, log, model)
            context.close()
    finally:
        model.stop()


@pytest.fixture(autouse=True)
def fresh_log(request: pytest.FixtureRequest) -> None:
    """Each test answers for what the browser logged while it ran (the tab is shared)."""
    if "signed_in" in request.fixturenames:
        tab: Tab = request.getfixturevalue("signed_in")
        tab.log.console_errors.clear()
        tab.log.page_errors.clear()
        tab.log.csp_violations.clear()


def audit(page: Page) -> None:
    page.evaluate(AXE.read_text())
    report = page.evaluate(AXE_RUN, AXE_RULES)
    assert report["passes"] > 10, report
    assert report["violations"] == [], f"{page.url}: {report['violations']}"


HOSTILE = (
    "Adam keeps moment estimates [1]; see [2].\n\n"
    "<script>window.__pwned = 'script'</script>\n\n"
    '<img src="https://example.com/x.png" onerror="window.__pwned = \'img\'">\n\n'
    "![tracker](https://example.com/pixel.png) and ![local](/static/icon.svg)\n\n"
    "[click me](javascript:window.__pwned='link') [data](data:text/html,<b>x</b>) "
    "[protocol-relative](//example.com/x) [fine](https://arxiv.org/abs/1412.6980)\n\n"
    "<a href=\"javascript:window.__pwned='raw'\">raw link</a>"
)

# Records, on every change of the dock's log, how many evidence passages and how much answer text
# the reader sees (from the browser's side: what was on screen, in order).
TRACE = """
(root) => {
  window.__trace = [];
  new MutationObserver(() => {
    const answer = root.querySelector(".turn:last-child .answer");
    window.__trace.push({
      evidence: root.querySelectorAll(".turn:last-child .evidence-list li").length,
      answer: answer ? answer.textContent : "",
    });
  }).observe(root, { childList: true, subtree: true, characterData: true });
}
"""


def test_asking_in_the_dock_shows_evidence_then_streamed_tokens_then_a_working_citation(
    signed_in: Tab,
) -> None:
    page, model = signed_in.page, signed_in.model
    model.script(ANSWER)
    page.goto("/")
    page.get_by_text("Ask the papers").click()
    expect(page.locator("[data-chat-dock] [data-chat-status]")).to_have_text("Language model ready.")
    page.get_by_label("Your question").fill(QUESTION)
    page.locator("[data-chat-dock] [data-chat-log]").evaluate(TRACE)
    page.keyboard.press("Enter")

    references = page.locator("[data-chat-dock] ol.references")
    references.wait_for()
    trace = page.evaluate("window.__trace")
    shown = [t for t in trace if t["answer"]]
    assert shown and all(t["evidence"] > 0 for t in shown), "an answer token was shown before the evidence"
    steps = list(dict.fromkeys(t["answer"] for t in shown))
    assert len(steps) >= 3, f"the answer did not arrive token by token: {steps}"
    assert all(later.startswith(earlier[:10]) for earlier, later in itertools.pairwise(steps))
    answer = page.locator("[data-chat-dock] .answer")
    assert answer.inner_text().startswith("The Transformer relies entirely on multi-head attention [1]")
    assert "S1" not in answer.inner_text()

    evidence = page.locator("[data-chat-dock] .evidence-list li").first
    assert TITLE in evidence.inner_text()
    # The page opens our reader (at the passage's key quote); arXiv's PDF is the second link.
    reader = evidence.locator("a.pdf-page").get_attribute("href") or ""
    assert re.fullmatch(rf"/papers/{PAPER}/pages/\d+(\?quote=.+)?", reader), reader
    assert (evidence.locator("a.arxiv-pdf").get_attribute("href") or "").split("#page=")[1].isdigit()
    assert references.locator("li").first.locator("a").first.inner_text() == TITLE
    assert "#page=" in (references.locator("a.arxiv-pdf").first.get_attribute("href") or "")

    cite = answer.get_by_role("link", name="[1]")
    href = cite.get_attribute("href") or ""
    assert href.startswith(f"/papers/{PAPER}/pages/"), href
    cite.click()
    page.wait_for_url(re.compile(rf"/papers/{re.escape(PAPER)}/pages/\d+"))
    assert page.get_by_role("heading", level=1).inner_text().startswith(TITLE)
    # The reader at the cited key quote, highlighted where PyMuPDF finds it on that page.
    opened = urlsplit(page.url)
    quote = parse_qs(opened.query)["quote"][0]
    number = int(opened.path.rsplit("/", 1)[1])
    pdf = (SHARED_DATA / "pdfs" / "arxiv" / f"{PAPER}.pdf").read_bytes()
    found = quote_rects(pdf, number, quote, max_pages=500)
    assert found, f"the key quote is not on page {number}: {quote!r}"
    expect(page.locator("rect.reader-mark")).to_have_count(len(found))
    assert len(model.requests) == 1

    # The conversation follows the reader: on the paper page the dock shows it and a follow-up joins it.
    page.get_by_text("Ask the papers").click()
    expect(page.locator("[data-chat-dock] .turn .question")).to_contain_text(QUESTION)
    model.script(["How many heads does the Transformer use?"], ["It runs 8 heads in parallel [S1]."])
    page.get_by_label("Your question").fill("How many heads?")
    with page.expect_request(lambda r: r.url.endswith("/api/chat")) as sent:
        page.keyboard.press("Enter")
    conversation = json.loads(sent.value.post_data or "{}")["conversation_id"]
    assert isinstance(conversation, int) and conversation > 0
    # (a follow-up is condensed with the conversation first: one short model call, then the answer)
    expect(page.locator("[data-chat-dock] .turn")).to_have_count(2)
    page.locator("[data-chat-dock] .turn").nth(1).locator("ol.references").wait_for()
    assert page.locator("[data-chat-full]").get_attribute("href") == f"/chat?c={conversation}"
    signed_in.log.assert_clean()


def ask_on_the_chat_page(page: Page, question: str = QUESTION) -> None:
    page.goto("/chat")
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Ask").click()


def test_the_chat_page_lists_reopens_renames_exports_and_deletes(signed_in: Tab) -> None:
    page, model = signed_in.page, signed_in.model
    model.script(ANSWER)
    ask_on_the_chat_page(page)
    page.locator("[data-chat-log] ol.references").wait_for()
    given = page.locator("[data-chat-log] ol.references li").count()  # a passage stating it too is cited
    assert "/chat?c=" in page.url
    page.get_by_role("button", name="New conversation").click()
    assert page.locator("[data-chat-log] .turn").count() == 0 and page.url.endswith("/chat")
    history = page.get_by_role("region", name="Your conversations")
    first = history.locator("li").first  # newest first
    first.locator(".conversation-title").wait_for()
    assert QUESTION[:30] in first.inner_text() and "2 messages" in first.inner_text()
    first.locator(".conversation-title").click()  # reopen: the answer as it was given
    log = page.locator("[data-chat-log]")
    log.locator(".answer").wait_for()
    assert "[1]" in log.locator(".answer a.cite").first.inner_text()
    assert log.locator(".evidence-list li").count() > 0
    assert log.locator("ol.references li").count() == given >= 1
    assert "?c=" in page.url
    audit(page)  # with a conversation shown

    title = first.locator(".conversation-title").inner_text()
    first.get_by_role("button", name=f"Rename {title}").click()
    page.get_by_label("New title").fill("Attention, renamed")
    page.get_by_role("button", name="Save").click()
    history.get_by_role("link", name="Attention, renamed", exact=True).wait_for()

    export = history.get_by_role("link", name="Export Attention, renamed as markdown")
    exported = page.context.request.get(export.get_attribute("href") or "")
    assert exported.ok and exported.text().startswith("# Attention, renamed")
    with page.expect_download() as download:
        export.click()
    assert download.value.suggested_filename.endswith(".md")

    page.once("dialog", lambda dialog: dialog.accept())
    history.get_by_role("button", name="Delete Attention, renamed").click()
    history.get_by_role("link", name="Attention, renamed", exact=True).wait_for(state="detached")
    assert page.locator("[data-chat-log] .turn").count() == 0 and page.url.endswith("/chat")
    signed_in.log.assert_clean()


def test_an_unsupported_answer_and_a_failed_check_are_marked(signed_in: Tab) -> None:
    page, model = signed_in.page, signed_in.model
    model.script(['Bananas are yellow. The paper says "attention is a kind of fruit" on 42 pages.'])
    ask_on_the_chat_page(page)
    mark = page.get_by_role("note").filter(has_text="Unsupported")
    mark.wait_for()
    flags = page.get_by_role("list", name="Checks that failed")
    assert "Quotation not found in the cited passage" in flags.inner_text()
    assert page.locator("[data-chat-log] ol.references").count() == 0
    signed_in.log.assert_clean()


def test_when_the_model_fails_the_evidence_comes_with_a_notice(signed_in: Tab) -> None:
    page, model = signed_in.page, signed_in.model
    model.status = 500
    try:
        ask_on_the_chat_page(page)
        page.get_by_role("note").filter(has_text="The language model is unavailable").wait_for()
    finally:
        model.status = 200
    assert page.locator("[data-chat-log] .evidence-list li").count() > 0
    assert page.locator("[data-chat-log] .answer").is_hidden()  # no empty answer box
    signed_in.log.assert_clean()


def test_stop_closes_the_stream_and_the_model_stops(signed_in: Tab) -> None:
    page, model = signed_in.page, signed_in.model
    model.script(["word "] * 200)
    ask_on_the_chat_page(page)
    answer = page.locator("[data-chat-log] .answer")
    expect(answer).to_contain_text("word word")
    page.get_by_role("button", name="Stop").click()
    page.get_by_role("note").filter(has_text="Stopped.").wait_for()
    expect(page.get_by_role("button", name="Ask")).to_be_enabled()
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    deadline = time.monotonic() + 3
    while model.requests[-1].disconnected_at is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert model.requests[-1].disconnected_at is not None, "the model kept generating after Stop"
    assert model.requests[-1].sent < 200
    signed_in.log.assert_clean()


def test_hostile_model_output_in_a_stream_renders_inert(signed_in: Tab) -> None:
    page, model = signed_in.page, signed_in.model
    model.script([HOSTILE[i : i + 40] for i in range(0, len(HOSTILE), 40)])
    page.goto("/chat")
    page.get_by_label("Your question").fill(QUESTION)
    page.get_by_role("button", name="Ask").click()
    page.locator("[data-chat-log] .after").first.wait_for(state="attached")
    page.get_by_role("button", name="Ask").wait_for()
    # the turn ends after the checks of the whole answer: slower than a stream on a busy machine
    expect(page.locator("[data-chat]")).to_have_attribute("aria-busy", "false", timeout=30_000)
    answer = page.locator("[data-chat-log] .answer")
    assert answer.locator("script, img, iframe, object").count() == 0
    hrefs = [a.get_attribute("href") or "" for a in answer.locator("a").all()]
    assert hrefs and all(h.startswith(("/", "https://")) and not h.startswith("//") for h in hrefs), hrefs
    assert "<script>" in answer.inner_text()  # shown as text
    assert page.evaluate("window.__pwned ?? null") is None
    signed_in.log.assert_clean()


def test_the_dock_opens_and_closes_with_the_keyboard(signed_in: Tab) -> None:
    page = signed_in.page
    page.goto("/papers")
    summary = page.locator("[data-chat-dock] > summary")
    question = page.get_by_label("Your question")
    assert summary.is_visible() and not question.is_visible()  # collapsed by default
    summary.focus()
    page.keyboard.press("Enter")
    question.wait_for(state="visible")
    expect(question).to_be_focused()  # focus moves in
    audit(page)  # open, on an ordinary page
    page.keyboard.press("Escape")
    question.wait_for(state="hidden")
    expect(summary).to_be_focused()
    signed_in.log.assert_clean()


def test_chat_with_this_paper_opens_the_dock_scoped_to_it(signed_in: Tab) -> None:
    page = signed_in.page
    page.goto(f"/papers/{PAPER}")
    page.get_by_role("link", name="Chat with this paper").click()
    chips = page.get_by_role("list", name="Papers in scope")
    assert chips.get_by_role("listitem").count() == 1 and TITLE in chips.inner_text()
    assert page.get_by_text("Scope: this paper").first.is_visible()
    expect(page.locator("#dock-question")).to_be_focused()
    assert f"/papers/{PAPER}" in page.url  # the dock opened in place: no navigation to /chat
    page.get_by_role("button", name=f"Remove {TITLE} from the scope").click()
    assert page.get_by_text("Scope: the whole archive").first.is_visible()
    signed_in.log.assert_clean()


def test_an_at_mention_adds_a_paper_to_the_scope_from_the_keyboard(signed_in: Tab) -> None:
    page, model = signed_in.page, signed_in.model
    page.goto("/chat")
    question = page.get_by_label("Your question")
    question.press_sequentially("How does @attention")
    options = page.get_by_role("list", name="Matching papers")
    options.get_by_role("button").first.wait_for()  # from /api/search, as the reader types
    assert TITLE in options.inner_text()
    question.press("ArrowDown")
    first = options.get_by_role("button").first
    expect(first).to_be_focused()
    chosen = (first.get_attribute("data-id") or "", first.inner_text())
    page.keyboard.press("Enter")
    expect(question).to_be_focused()
    assert question.input_value() == "How does "  # the mention became the scope
    assert page.get_by_text("Scope: this paper").is_visible() and options.is_hidden()
    assert chosen[0] and TITLE in chosen[1]
    question.press_sequentially("multi-head attention replace recurrence?")
    model.script(["It attends to all positions at once [S1]."])
    with page.expect_request(lambda r: r.url.endswith("/api/chat")) as sent:
        question.press("Enter")
    body = json.loads(sent.value.post_data or "{}")
    assert body["papers"] == [chosen[0]] and body["conversation_id"] is None
    assert body["question"] == "How does multi-head attention replace recurrence?"
    assert sent.value.headers["x-csrf-token"]
    page.locator("[data-chat-log] ol.references").wait_for()
    sources = page.locator("[data-chat-log] .evidence-source a").all()
    assert sources and all(PAPER in (a.get_attribute("href") or "") for a in sources)  # only that paper
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
            handlers: [...box.querySelectorAll("*")]
              .flatMap((e) => e.getAttributeNames()).filter((n) => n.startsWith("on")),
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
        ': ping\n\nevent: evidence\ndata: {"passages": [], "conversation_id": 7}\n',
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
    context, page, log = open_tab(chromium, signed_in.base)
    try:
        page.goto("/papers")
        page.locator("[data-chat-dock] > summary").click()
        offer = page.get_by_role("link", name="Sign in to chat")
        assert offer.is_visible() and offer.get_attribute("href") == "/signin?next=/papers"
        audit(page)
        log.assert_clean()
    finally:
        context.close()


HEADS_QUESTION = "How many parallel attention heads does the Transformer base model employ?"


def test_key_quotes_come_first_and_a_wrong_number_is_marked(signed_in: Tab) -> None:
    """ "From the papers" shows the sentence that answers, highlighted in its passage, before the
    model's prose; the model's sentence whose number the cited passage does not state is marked."""
    page, model = signed_in.page, signed_in.model
    model.script(
        lambda messages: [f"The base Transformer uses 64 parallel attention heads [{first_key(messages)}]."]
    )
    ask_on_the_chat_page(page, HEADS_QUESTION)
    quotes = page.locator("[data-chat-log] ol.key-quotes")
    quotes.wait_for()
    expect(quotes.locator("li").first).to_contain_text("h = 8 parallel attention layers, or heads")
    expect(page.locator("[data-chat-log] .evidence-list mark").first).to_be_visible()
    marked = page.locator("[data-chat-log] .answer mark.not-stated")
    marked.wait_for()
    expect(marked).to_contain_text("64 parallel attention heads")
    flags = page.get_by_role("list", name="Checks that failed")
    assert "Not stated in the cited passage" in flags.inner_text()
    signed_in.log.assert_clean()


def first_key(messages: list[dict[str, str]]) -> str:
    user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    found = re.search(r"^\[(S\d+)\]", user, re.MULTILINE)
    return found[1] if found else "S1"


# On page 2 of "Attention Is All You Need", over two printed lines.
READER_QUOTE = (
    "the Transformer is the first transduction model relying entirely on self-attention to compute "
    "representations of its input and output"
)


@pytest.mark.parametrize("viewport", [VIEWPORT, PHONE], ids=["desktop", "phone"])
def test_the_page_reader_highlights_the_quote_where_pymupdf_finds_it(
    signed_in: Tab, viewport: ViewportSize
) -> None:
    page = signed_in.page
    page.set_viewport_size(viewport)
    try:
        page.goto(f"/papers/{PAPER}/pages/2?quote={quote_plus(READER_QUOTE)}#quote")
        expect(page.locator("#quote")).to_be_in_viewport()  # the link scrolls to the first mark
        image = page.locator("img.reader-image")
        expect(image).to_be_visible()
        page.wait_for_function("document.querySelector('img.reader-image').naturalWidth > 0")
        shown = image.bounding_box()
        assert shown is not None and shown["width"] <= viewport["width"]
        pdf = (SHARED_DATA / "pdfs" / "arxiv" / f"{PAPER}.pdf").read_bytes()
        expected = quote_rects(pdf, 2, READER_QUOTE, max_pages=500)
        marks = page.locator("rect.reader-mark")
        assert marks.count() == len(expected) == 2
        width, height = 612.0, 792.0  # US Letter, in points
        for i, (x0, y0, x1, _y1) in enumerate(expected):
            box = marks.nth(i).bounding_box()
            assert box is not None
            scale = shown["width"] / width
            assert abs(box["x"] - (shown["x"] + x0 * scale)) < 2
            assert abs(box["y"] - (shown["y"] + y0 * shown["height"] / height)) < 2
            assert abs(box["width"] - (x1 - x0) * scale) < 2
        assert "Text of page 2" in page.locator(".reader-text").inner_text()
        assert "transduction model" in page.locator(".reader-text").inner_text()
        audit(page)
        assert not signed_in.log.csp_violations and not signed_in.log.page_errors
    finally:
        page.set_viewport_size(VIEWPORT)
