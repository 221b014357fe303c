"""The served test catalogue with two people signed in, for the signed-in fuzz tests.

The catalogue is :func:`served_catalogue`'s (the same database, each backend); this app over it has
its own data folder (sessions, an empty embedded Chroma, the lexical index rebuilt there), a real
OpenID provider on loopback (PyPI ``oidc-provider-mock``) through which the people sign in, a public
URL that is its own loopback port (so ``/mcp`` accepts the Host and cookies are not ``Secure``), and
limits high enough that thousands of fuzzed requests from one address are not a 429.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from litestar import Litestar

from app.main import create_app
from catalog.db import make_engine
from retrieval.lexical import LexicalIndex
from settings import Settings
from tests.integration.browse_catalogue import Facts, ServedCatalogue, served, settings_for
from tests.integration.signin_peers import Browser, free_port, oidc_mock

ALL_SCOPES = {"read", "chat", "fulltext"}
_SECRET = re.compile(r'<code class="secret">([^<]+)</code>')
_REVOKE = re.compile(r'action="/account/tokens/(\d+)/revoke"')


@dataclass
class Person:
    """A person signed in through the provider: a browser session (with its CSRF token) and a
    bearer token with every scope."""

    name: str
    subject: str
    browser: Browser
    csrf: str
    token: str
    person_id: int = 0

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def session_headers(self) -> dict[str, str]:
        return {"X-CSRF-Token": self.csrf}

    def post_form(self, path: str, data: dict[str, Any]) -> httpx.Response:
        return self.browser.client.post(path, data={**data, "csrf_token": self.csrf})

    def new_token(self, name: str, scopes: set[str]) -> tuple[str, int]:
        """A token made on the account page as a browser would: (secret, id)."""
        before = set(_REVOKE.findall(self.browser.client.get("/account").text))
        page = self.browser.client.post(
            "/account/tokens", data={"name": name, "scope": sorted(scopes), "csrf_token": self.csrf}
        )
        assert page.status_code == 201, page.text[:500]
        found = _SECRET.search(page.text)
        assert found, page.text[:500]
        (new_id,) = set(_REVOKE.findall(page.text)) - before
        return found.group(1), int(new_id)


@dataclass
class SignedInSite:
    base: str
    app: Litestar
    settings: Settings
    backend: str
    facts: Facts
    alice: Person
    bob: Person
    researchers: tuple[int, ...]  # real researcher ids to follow

    def resign(self, person: Person) -> None:
        """Sign ``person`` in again (a fuzzed request may have signed them out)."""
        if (
            person.browser.client.get("/api/account", headers={"Accept": "application/json"}).status_code
            == 200
        ):
            return
        browser = Browser(self.base)
        assert browser.sign_in("oidc", person.subject).status_code == 303
        person.browser.close()
        person.browser, person.csrf = browser, browser.csrf("/account")


def sign_in(base: str, name: str, subject: str) -> Person:
    """``subject`` signed in at the provider, with a new token with every scope."""
    browser = Browser(base)
    answer = browser.sign_in("oidc", subject)
    assert answer.status_code == 303, answer.text[:500]
    person = Person(name, subject, browser, browser.csrf("/account"), "")
    person.token = person.new_token(f"{name} fuzz", ALL_SCOPES)[0]
    whoami = browser.client.get("/api/account", headers=person.bearer)
    assert whoami.status_code == 200, whoami.text[:300]
    person.person_id = whoami.json()["person_id"]
    return person


@contextmanager
def signed_in_site(
    catalogue: ServedCatalogue, work: Path, env: dict[str, str] | None = None
) -> Iterator[SignedInSite]:
    port = free_port()
    with oidc_mock() as issuer:
        settings = settings_for(
            catalogue.settings.database_url,
            {
                "WOVEPAPER_DATA_DIR": str(work / "data"),
                "WOVEPAPER_PORT": str(port),
                "WOVEPAPER_PUBLIC_URL": f"http://127.0.0.1:{port}",
                "WOVEPAPER_WORKER_EMBEDDED": "false",
                "WOVEPAPER_OIDC_ISSUER": issuer,
                "WOVEPAPER_OIDC_NAME": "Test SSO",
                "WOVEPAPER_OIDC_CLIENT_ID": "wovepaper-test",
                "WOVEPAPER_OIDC_CLIENT_SECRET": "s3cret",
                # One address sends all of it: the limits are tested elsewhere (test_limits*.py).
                "WOVEPAPER_LIMIT_API": "1000000/60",
                "WOVEPAPER_LIMIT_MCP": "1000000/60",
                "WOVEPAPER_LIMIT_SIGNIN": "1000000/60",
                "WOVEPAPER_LIMIT_CHAT_REQUESTS": "1000000/60",
                "WOVEPAPER_LIMIT_CHAT_TOKENS_PER_DAY": "100000000",
                "WOVEPAPER_LIMIT_FULLTEXT_PER_DAY": "1000000",
                **(env or {}),
            },
        )
        engine = make_engine(settings.database_url)
        try:
            LexicalIndex.from_settings(settings).rebuild(engine)
        finally:
            engine.dispose()
        application = create_app(settings)
        with served(settings, port, application) as base:
            facts = catalogue.facts
            site = SignedInSite(
                base,
                application,
                settings,
                catalogue.backend,
                facts,
                sign_in(base, "Alice Fuzz", "alice-fuzz"),
                sign_in(base, "Bob Fuzz", "bob-fuzz"),
                (facts.enriched_researcher, facts.plain_researcher, facts.prolific_researcher),
            )
            try:
                yield site
            finally:
                site.alice.browser.close()
                site.bob.browser.close()
