"""A newcomer's sign-in in a real browser: ``python -m app serve`` with no provider on loopback
prints a one-time link; Chromium opens it and is signed in; then follows a researcher (the form
sent by ``fetch`` with the CSRF header), makes an API token on the account page, signs out, and
finds the link used up. The strict CSP stays quiet throughout."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from playwright.sync_api import Browser

from catalog.db import make_engine, migrate
from ingest.importer import Importer
from ingest.sources import listings
from tests.browser.test_browser import open_tab
from tests.integration.signin_peers import app_processes, printed_link


def _catalogue(data: Path) -> None:
    """One paper by one researcher, so there is someone to follow."""
    data.mkdir(parents=True)
    engine = make_engine(f"sqlite:///{data / 'catalogue.sqlite3'}")
    migrate(engine)
    listing = data / "listing.jsonl"
    row = {
        "id": "2401.00002",
        "title": "A paper worth following",
        "summary": "s",
        "authors": ["Grace Hopper"],
        "categories": ["cs.PL"],
        "_listing_file": "2024-01-02",
    }
    listing.write_text(json.dumps(row) + "\n")
    Importer(engine, source="listings").run(listings.read(listing))
    engine.dispose()


def test_a_newcomer_signs_in_with_theprinted_link(chromium: Browser, tmp_path: Path) -> None:
    _catalogue(tmp_path / "app-0")
    with app_processes(tmp_path, 1, {}) as (base,):
        link = printed_link(tmp_path / "app-0" / "server.log")
        assert link.startswith(f"{base}/signin/local?token=")

        context, tab, log = open_tab(chromium, base)

        tab.goto("/")
        assert tab.get_by_role("link", name="Sign in").is_visible()
        tab.goto(link)  # what the newcomer does: open the printed URL
        assert tab.url == f"{base}/"
        account = tab.locator(".account-link")
        assert account.inner_text() == "Local reader"
        cookie = next(c for c in context.cookies() if c["name"] == "wovepaper_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"

        # Follow the researcher: the button is sent by fetch (CSRF header) and flips in place.
        tab.goto("/researchers")
        tab.get_by_role("link", name="Grace Hopper").first.click()
        follow = tab.get_by_role("button", name="Follow")
        follow.click()
        tab.get_by_role("button", name="Following").wait_for()
        assert "/researchers/" in tab.url  # no reload, no navigation
        tab.goto("/")
        assert tab.get_by_text("A paper worth following").first.is_visible()

        # An API token from the account page, shown once.
        account.click()
        tab.get_by_label("Name").fill("browser agent")
        tab.get_by_role("button", name="Create token").click()
        secret = tab.locator("code.secret").inner_text()
        assert secret.startswith("wvp_")
        me = httpx.get(f"{base}/api/account", headers={"Authorization": f"Bearer {secret}"})
        assert me.status_code == 200 and me.json()["name"] == "Local reader"

        tab.get_by_role("button", name="Sign out").click()
        tab.get_by_role("link", name="Sign in").wait_for()  # the sign-out is a navigation: wait for it
        log.assert_clean()
        used = tab.goto(link)  # one time only
        assert used is not None and used.status == 400
        assert "already used" in tab.content()
        assert not log.csp_violations and not log.page_errors
        context.close()
