"""Full text on request through the site: ``POST``/``GET /api/papers/<id>/fulltext``, the paper
page's form and state, and the MCP tool ``request_full_text``, against the app served by uvicorn
with its embedded worker, a real OpenID provider for sign-in, the loopback embedding endpoint, and
a loopback server standing in for arXiv's PDF host (``WOVEPAPER_ARXIV_PDF_URL``)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from settings import SHARED_DATA
from tests.integration.fulltext_site import IDS, PENDING, QUOTA, REAL, Site, fulltext_site, pdf
from tests.integration.indexing_peers import paper_text, text_pdf
from tests.integration.loopback_http import Reply


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with fulltext_site(tmp_path_factory.mktemp("fulltext")) as found:
        yield found


# -- the way through ------------------------------------------------------------------------------


def test_a_token_asks_and_the_paper_goes_queued_to_indexed_and_the_chat_cites_its_pages(site: Site) -> None:
    site.arxiv.answers[f"/pdf/{REAL}"] = [
        pdf((SHARED_DATA / "pdfs" / "arxiv" / f"{REAL}.pdf").read_bytes(), 0.5)
    ]
    before = site.get(f"/api/papers/{REAL}/fulltext").json()
    assert (before["state"], before["held"], before["can_request"]) == ("none", False, True)

    asked = site.ask(REAL, site.token({"fulltext"}))

    assert asked.status_code == 202, asked.text
    state = asked.json()
    assert state["requested"] is True and state["state"] in PENDING and not state["held"]
    if state["state"] == "queued":
        assert state["position"] >= 1
    done = site.settle(REAL)
    assert (done["state"], done["held"], done["pages"], done["can_request"]) == ("indexed", True, 11, False)
    assert site.arxiv.asked(REAL) == 1
    paper = site.get(f"/api/papers/{REAL}").json()
    assert paper["full_text"]["state"] == "indexed"
    assert "Full text indexed (11 pages)" in site.get(f"/papers/{REAL}").text
    # Asking again costs nothing and changes nothing: the state as it is.
    again = site.ask(REAL, site.token({"fulltext"}))
    assert again.status_code == 202 and again.json()["requested"] is False and site.arxiv.asked(REAL) == 1

    chat = httpx.post(
        f"{site.base}/api/chat",
        json={"question": "How does batch normalization reduce internal covariate shift?", "papers": [REAL]},
        headers={**site.token({"chat"}), "Accept": "application/json"},
        timeout=120,
    )
    assert chat.status_code == 200, chat.text
    passages = chat.json()["passages"]
    assert passages and all(p["arxiv_id"] == REAL for p in passages)
    assert any(p["pages"] and max(p["pages"]) > 1 for p in passages)  # from the PDF's pages
    # The fetched PDF is kept: its citations open our page reader, which draws the page.
    page = max(passages[0]["pages"])
    image = site.get(f"/papers/{REAL}/pages/{page}.png")
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")


def test_asks_for_one_paper_coalesce_into_one_fetch(site: Site) -> None:
    paper = IDS[0]
    site.arxiv.answers[f"/pdf/{paper}"] = [pdf(text_pdf([paper_text(paper, 20)]), delay=1.0)]
    first = site.ask(paper, site.token({"fulltext"}))
    second = site.ask(paper, site.token({"fulltext"}))
    assert first.status_code == second.status_code == 202
    assert first.json()["requested"] is True and second.json()["requested"] is False
    assert second.json()["state"] in PENDING
    assert site.settle(paper)["state"] == "indexed"
    assert site.arxiv.asked(paper) == 1


def test_a_daily_quota_per_person_counts_new_fetches_only(site: Site) -> None:
    slow, *others = IDS[1 : 2 + QUOTA]
    site.arxiv.answers[f"/pdf/{slow}"] = [pdf(text_pdf([paper_text(slow, 5)]), delay=2.0)]
    person = site.token({"fulltext"})
    assert site.ask(slow, person).status_code == 202
    assert site.ask(slow, person).json()["requested"] is False  # under way: free
    for paper in others[: QUOTA - 1]:
        assert site.ask(paper, person).status_code == 202
    refused = site.ask(others[-1], person)
    assert refused.status_code == 429, refused.text
    assert int(refused.headers["retry-after"]) > 3600
    assert "full-text requests per day" in refused.json()["detail"]
    assert site.get(f"/api/papers/{others[-1]}/fulltext").json()["state"] == "none"  # nothing queued
    assert site.ask(others[-1], site.token({"fulltext"})).status_code == 202  # another person may


def test_a_failure_reads_plainly_on_the_page_and_may_be_asked_again(site: Site) -> None:
    paper = IDS[6]
    site.arxiv.answers[f"/pdf/{paper}"] = [Reply(503, b"down for maintenance")]
    assert site.ask(paper, site.token({"fulltext"})).status_code == 202
    failed = site.settle(paper)
    assert failed["state"] == "failed" and failed["can_request"] is True
    assert failed["reason"].startswith("arXiv could not be reached ("), failed["reason"]
    page = site.get(f"/papers/{paper}")
    assert page.status_code == 200
    assert "Could not get the full text: arXiv could not be reached" in page.text
    missing = IDS[7]  # no PDF at all
    assert site.ask(missing, site.token({"fulltext"})).status_code == 202
    assert site.settle(missing)["reason"].startswith("arXiv has no PDF for this paper (")
    # Asked again once arXiv is back: queued again, and indexed.
    site.arxiv.answers[f"/pdf/{paper}"] = [pdf(text_pdf([paper_text(paper, 20)]))]
    assert site.ask(paper, site.token({"fulltext"})).json()["requested"] is True
    assert site.settle(paper)["state"] == "indexed"


# -- who may ask, and for what ------------------------------------------------------------------


def test_asking_needs_a_session_with_its_csrf_token_or_a_token_with_the_scope(site: Site) -> None:
    paper = IDS[8]
    anonymous = site.ask(paper)
    assert anonymous.status_code == 401 and "fulltext" in anonymous.json()["detail"]
    read_only = site.ask(paper, site.token({"read", "chat"}))
    assert read_only.status_code == 403
    assert 'scope="fulltext"' in read_only.headers["www-authenticate"]
    client = site.browser.client
    no_csrf = client.post(f"/api/papers/{paper}/fulltext", headers={"Accept": "application/json"})
    assert no_csrf.status_code == 403
    cross_site = client.post(
        f"/api/papers/{paper}/fulltext",
        data={"csrf_token": site.csrf},
        headers={"Origin": "https://evil.example"},
    )
    assert cross_site.status_code == 403
    assert site.get(f"/api/papers/{paper}/fulltext").json()["state"] == "none"  # nothing was queued

    # The paper page's form, without JavaScript: a 303 back to the page's full-text section.
    form = client.post(f"/api/papers/{paper}/fulltext", data={"csrf_token": site.csrf})
    assert form.status_code == 303, form.text
    assert form.headers["location"].startswith(f"/papers/{paper}-") and form.headers["location"].endswith(
        "#full-text"
    )
    assert site.get(f"/api/papers/{paper}/fulltext").json()["state"] != "none"
    # The same by fetch, as static/fulltext.js sends it: the state as JSON.
    fetched = client.post(
        f"/api/papers/{IDS[9]}/fulltext", headers={"X-CSRF-Token": site.csrf, "Accept": "application/json"}
    )
    assert fetched.status_code == 202 and fetched.json()["requested"] is True


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize(
    ("path", "detail"),
    [
        ("/api/papers/not-an-id/fulltext", "not"),
        ("/api/papers/2409.99999/fulltext", "not in this archive"),
        ("/api/papers/hep-th/9912999/fulltext", "not in this archive"),
        ("/api/papers/evil.example%2Fx/fulltext", ""),
    ],
)
def test_an_id_that_names_no_paper_here_is_a_404(site: Site, method: str, path: str, detail: str) -> None:
    answer = httpx.request(method, site.base + path, headers=site.token({"fulltext"}), timeout=30)
    assert answer.status_code == 404, answer.text
    assert detail in answer.json()["detail"]


def test_an_old_style_id_has_its_state(site: Site) -> None:
    answer = site.get("/api/papers/hep-th/9901001/fulltext")
    assert answer.status_code == 200 and answer.json()["arxiv_id"] == "hep-th/9901001"


# -- the paper page -----------------------------------------------------------------------------


def test_the_page_says_whether_the_full_text_is_held_and_offers_it_to_signed_in_people(site: Site) -> None:
    paper = IDS[10]
    anonymous = site.get(f"/papers/{paper}", Accept="text/html").text
    assert 'data-full-text-state="none"' in anonymous and "Only the abstract is held here" in anonymous
    assert "Sign in to get the full text" in anonymous and "Get the full text</button>" not in anonymous
    assert '<script type="module" src="/static/fulltext.js"></script>' in anonymous
    signed_in = site.browser.client.get(f"/papers/{paper}", follow_redirects=True).text
    assert "Get the full text</button>" in signed_in
    assert f'action="/api/papers/{paper}/fulltext"' in signed_in and site.csrf in signed_in
    markdown = site.get(f"/papers/{paper}.md").text
    assert "## Full text" in markdown and "Only the abstract is held here" in markdown
    assert f"`POST /api/papers/{paper}/fulltext`" in markdown and "`request_full_text`" in markdown
    assert site.get(f"/api/papers/{paper}").json()["full_text"]["state"] == "none"
    script = site.get("/static/fulltext.js")
    assert script.status_code == 200 and 'import { postForm } from "./post-form.js";' in script.text
    sender = site.get("/static/post-form.js")
    assert sender.status_code == 200 and '"X-CSRF-Token": token' in sender.text


# -- agents -------------------------------------------------------------------------------------


def _mcp(site: Site, arxiv_id: str, headers: dict[str, str]) -> httpx.Response:
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "request_full_text", "arguments": {"arxiv_id": arxiv_id}},
    }
    return httpx.post(
        f"{site.base}/mcp",
        json=call,
        headers={"accept": "application/json, text/event-stream", **headers},
        timeout=30,
    )


def test_the_mcp_tool_asks_through_the_same_service(site: Site) -> None:
    paper = IDS[11]
    site.arxiv.answers[f"/pdf/{paper}"] = [pdf(text_pdf([paper_text(paper, 20)]))]
    assert _mcp(site, paper, {}).status_code == 401
    refused = _mcp(site, paper, site.token({"read"}))
    assert refused.status_code == 403 and 'error="insufficient_scope"' in refused.headers["www-authenticate"]

    answer = _mcp(site, paper, site.token({"fulltext"}))
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert not result.get("isError"), result
    assert result["structuredContent"]["requested"] is True
    assert result["structuredContent"]["state"] in PENDING
    assert f"Full text of arXiv:{paper}" in result["content"][0]["text"]
    assert site.settle(paper)["state"] == "indexed"
    again = _mcp(site, paper, site.token({"fulltext"})).json()["result"]["structuredContent"]
    assert (again["state"], again["requested"]) == ("indexed", False)
    unknown = _mcp(site, "2409.99999", site.token({"fulltext"})).json()["result"]
    assert unknown["isError"] and "not in this archive" in unknown["content"][0]["text"]


def test_options_names_both_methods(site: Site) -> None:
    for path in (f"/api/papers/{IDS[14]}/fulltext", "/api/papers/hep-th/9901001/fulltext"):
        answer = httpx.options(site.base + path, timeout=30)
        assert answer.status_code == 204 and answer.headers["allow"] == "GET, OPTIONS, POST"
