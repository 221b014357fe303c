"""The chat's pages over HTTP (``python -m app serve``, signed in with the printed local link): the
dock on every page (the chat panel for a signed-in person, a sign-in offer for everyone else; never
on /chat or the sign-in page), the /chat page behind sign-in, and "Chat with this paper"."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from catalog.db import make_engine, migrate
from ingest.importer import Importer
from ingest.sources import listings
from tests.integration.signin_peers import app_processes, printed_link

pytestmark = pytest.mark.slow

PAPER = "2401.00002"
TITLE = "A paper to <chat> with"


@dataclass
class Site:
    base: str
    reader: httpx.Client  # signed in
    anonymous: httpx.Client


def catalogue(data: Path, rows: list[dict[str, object]]) -> None:
    data.mkdir(parents=True)
    engine = make_engine(f"sqlite:///{data / 'catalogue.sqlite3'}")
    migrate(engine)
    listing = data / "listing.jsonl"
    listing.write_text("".join(json.dumps(row) + "\n" for row in rows))
    Importer(engine, source="listings").run(listings.read(listing))
    engine.dispose()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    work = tmp_path_factory.mktemp("chat-pages")
    row = {"id": PAPER, "title": TITLE, "summary": "s", "authors": ["Ada Lovelace"], "categories": ["cs.CL"]}
    catalogue(work / "app-0", [{**row, "_listing_file": "2024-01-02"}])
    with app_processes(work, 1, {"WOVEPAPER_LOCAL_LLM_ENABLED": "false"}) as (base,):
        link = printed_link(work / "app-0" / "server.log")
        with httpx.Client(base_url=base) as reader, httpx.Client(base_url=base) as anonymous:
            assert reader.get(link).status_code in (302, 303)
            yield Site(base, reader, anonymous)


def test_anonymous_pages_offer_sign_in_in_the_dock(site: Site) -> None:
    home = site.anonymous.get("/papers")
    assert home.status_code == 200
    assert 'aria-label="Chat with the papers"' in home.text
    assert "<summary>Ask the papers</summary>" in home.text
    assert 'href="/signin?next=/papers">Sign in to chat</a>' in home.text
    assert "data-chat=" not in home.text and "/static/chat.js" not in home.text  # no panel, no script
    assert 'name="csrf-token"' not in home.text
    signin = site.anonymous.get("/signin")
    assert "Ask the papers" not in signin.text  # the sign-in page is the offer itself


def test_a_signed_in_reader_gets_the_chat_panel_in_the_dock(site: Site) -> None:
    page = site.reader.get("/papers")
    assert page.status_code == 200 and page.headers["cache-control"] == "private, no-store"
    assert 'data-chat="dock"' in page.text and '<script type="module" src="/static/chat.js">' in page.text
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert token and len(token.group(1)) > 20
    assert "<details data-chat-dock>" in page.text  # collapsed until opened
    assert 'for="dock-question"' in page.text and 'id="dock-question"' in page.text


def test_the_chat_page_needs_sign_in_and_has_no_dock(site: Site) -> None:
    away = site.anonymous.get("/chat?paper=2401.00002")
    assert away.status_code == 303
    assert away.headers["location"] == "/signin?next=%2Fchat%3Fpaper%3D2401.00002"
    page = site.reader.get("/chat")
    assert page.status_code == 200 and page.headers["cache-control"] == "private, no-store"
    assert 'data-chat="page"' in page.text and "data-chat-history" in page.text
    assert "data-chat-dock" not in page.text
    assert '<meta name="robots" content="noindex, follow">' in page.text
    # Like the account page, no markdown variant: agents ask POST /api/chat with Accept: text/markdown.
    assert (
        site.reader.get("/chat", headers={"Accept": "text/markdown"})
        .headers["content-type"]
        .startswith("text/html")
    )
    assert site.reader.get("/chat.md").status_code == 404
    reopened = site.reader.get("/chat?c=12")
    assert 'data-chat-open="12"' in reopened.text


@pytest.mark.parametrize("value", ["abc", "-3", "0", "99999999999999999999999", ""])
def test_a_malformed_conversation_id_opens_a_new_chat(site: Site, value: str) -> None:
    page = site.reader.get("/chat", params={"c": value})
    assert page.status_code == 200 and "data-chat-open" not in page.text


def test_chat_with_this_paper(site: Site) -> None:
    paper = site.anonymous.get(f"/papers/{PAPER}", follow_redirects=True)
    assert f'href="/chat?paper={PAPER}" data-chat-paper="{PAPER}"' in paper.text
    scoped = site.reader.get("/chat", params={"paper": f"arXiv:{PAPER}v1"})
    assert f'data-chat-paper="{PAPER}"' in scoped.text
    assert 'data-chat-title="A paper to &lt;chat&gt; with"' in scoped.text  # escaped, not markup
    for unknown in ("2401.99999", "not an id", "x" * 500):
        page = site.reader.get("/chat", params={"paper": unknown})
        assert page.status_code == 200 and "data-chat-paper" not in page.text
