"""Signing in through the real flow over HTTP: the app under uvicorn, a real OpenID provider on
loopback (oidc-provider-mock), sessions in the embedded SQLite store and in the real Redis.

RELIABILITY.md cases: 1 (state), 2 (PKCE), 4 (mix-up, open ``next``), 5 (planted session id),
6 (logout replay, idle and absolute expiry, cookie flags), 7 (CSRF), 13 (one person cannot reach
another's data). ID-token attacks (case 3) are in ``test_id_tokens.py``; limits (case 8) in
``test_limits_http.py``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, func, select, text

from accounts.models import ApiToken, Follow, Identity, Person
from catalog.db import make_engine
from ingest.importer import Importer
from ingest.sources import listings
from settings import Settings
from tests.conftest import REDIS_TEST_URL
from tests.integration.signin_peers import (
    COOKIE,
    Browser,
    FakeGitHub,
    app_settings,
    free_port,
    oidc_mock,
    query,
    serve_app,
)

pytestmark = pytest.mark.slow

CLIENT = {"WOVEPAPER_OIDC_CLIENT_ID": "wovepaper-test", "WOVEPAPER_OIDC_CLIENT_SECRET": "s3cret"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with oidc_mock() as url:
        yield url


@pytest.fixture(scope="module")
def second_issuer() -> Iterator[str]:
    with oidc_mock() as url:
        yield url


@dataclass
class Site:
    base: str
    settings: Settings
    data_dir: Path

    def browser(self) -> Browser:
        return Browser(self.base)

    def count(self, model: type, **where: object) -> int:
        engine = create_engine(self.settings.database_url)
        try:
            with engine.connect() as conn:
                statement = select(func.count()).select_from(model)
                for column, value in where.items():
                    statement = statement.where(getattr(model, column) == value)
                return int(conn.execute(statement).scalar_one())
        finally:
            engine.dispose()


def _redis_env() -> dict[str, str]:
    return {"WOVEPAPER_REDIS_URL": REDIS_TEST_URL, "WOVEPAPER_WORKER_QUEUE": f"test-{uuid.uuid4().hex[:12]}"}


def _cleanup_redis(settings: Settings) -> None:
    from coordination.redis import sync_client

    if settings.redis.redis_url != REDIS_TEST_URL:
        return  # no Redis, or one that is down on purpose
    client = sync_client(settings)
    assert client is not None
    prefix = settings.worker.worker_queue
    for pattern in (f"{prefix}_sessions:*", f"{prefix}:limits:*"):
        for key in client.scan_iter(match=pattern):
            client.delete(key)
    client.close()


def _serve(tmp_path: Path, env: dict[str, str]) -> Iterator[Site]:
    port = free_port()
    settings = app_settings(tmp_path / "data", port, env)
    try:
        with serve_app(settings) as base:
            yield Site(base, settings, tmp_path / "data")
    finally:
        _cleanup_redis(settings)


@pytest.fixture(params=["embedded", "redis"])
def site(request: pytest.FixtureRequest, tmp_path: Path, issuer: str, second_issuer: str) -> Iterator[Site]:
    """The app with two providers: "oidc" (one mock issuer) and "orcid" (another, no PKCE);
    sessions and limits in SQLite + in-process, or in the real Redis."""
    env = {
        "WOVEPAPER_OIDC_ISSUER": issuer,
        "WOVEPAPER_OIDC_NAME": "Test SSO",
        **CLIENT,
        "WOVEPAPER_ORCID_ISSUER": second_issuer,
        "WOVEPAPER_ORCID_CLIENT_ID": "orcid-client",
        "WOVEPAPER_ORCID_CLIENT_SECRET": "orcid-secret",
        **(_redis_env() if request.param == "redis" else {}),
    }
    yield from _serve(tmp_path, env)


def _signed_in(browser: Browser) -> bool:
    answer = browser.client.get("/api/account")
    return answer.status_code == 200


def _set_cookie(response: httpx.Response) -> str:
    return "; ".join(response.headers.get_list("set-cookie"))


# -- the flow ----------------------------------------------------------------------------------


def test_sign_in_over_http_with_a_real_provider(site: Site) -> None:
    alice = site.browser()
    home = alice.client.get("/papers")
    assert home.status_code == 200 and ">Sign in</a>" in home.text
    assert "set-cookie" not in home.headers  # anonymous pages carry no cookie (and stay cacheable)
    signin_page = alice.client.get("/signin?next=/papers")
    assert "Continue with Test SSO" in signin_page.text and "Continue with ORCID" in signin_page.text
    # The forms' answer redirects to the providers: the page's form-action allows exactly them.
    directives = dict(
        d.strip().split(" ", 1) for d in signin_page.headers["content-security-policy"].split(";")
    )
    providers = (site.settings.auth.oidc_issuer, site.settings.auth.orcid_issuer)
    assert sorted(directives["form-action"].split()) == sorted(["'self'", *providers])
    assert "form-action 'self';" in httpx.get(f"{site.base}/papers").headers["content-security-policy"]

    authorize = alice.start("oidc", "/papers?page=1")
    params = query(authorize)
    assert authorize.startswith(site.settings.auth.oidc_issuer)
    assert params["code_challenge_method"] == "S256" and len(params["code_challenge"]) == 43  # case 2
    assert params["redirect_uri"] == f"{site.base}/signin/oidc/callback"
    assert params["nonce"] and params["state"]
    before = alice.session
    assert before is not None  # the pending sign-in lives in a (pre-sign-in) session

    done = alice.callback(alice.sign_in_at_mock(authorize, "alice"))
    assert done.status_code == 303 and done.headers["location"] == "/papers?page=1"
    assert alice.session is not None and alice.session != before  # case 5: a fresh id at sign-in
    cookie = _set_cookie(done)
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http on loopback: local development

    me = alice.client.get("/api/account").json()
    assert me["name"] == "alice" and me["via"] == "session"
    page = alice.client.get("/papers")
    assert 'class="account-link">alice</a>' in page.text
    assert page.headers["cache-control"] == "private, no-store"
    # The anonymous copy of the same page is still the anonymous one (never the signed-in page).
    anonymous = httpx.get(f"{site.base}/papers")
    assert ">Sign in</a>" in anonymous.text and "alice" not in anonymous.text

    # The id that was in the browser before sign-in gives no identity (case 5).
    planted = Browser(site.base)
    planted.plant(before)
    assert not _signed_in(planted)
    assert site.count(Person) == 1 and site.count(Identity, subject="alice") == 1

    # Signing in again finds the same person.
    again = site.browser()
    again.sign_in("oidc", "alice")
    assert again.client.get("/api/account").json()["person_id"] == me["person_id"]
    assert site.count(Person) == 1


def test_state_must_be_this_browsers_unused_one(site: Site) -> None:
    """Case 1: missing, forged, replayed or another session's state: 4xx, nobody signed in."""
    victim, attacker = site.browser(), site.browser()
    attacker_url = attacker.sign_in_at_mock(attacker.start("oidc"), "mallory")
    code = query(attacker_url)["code"]

    victim.start("oidc")  # the victim has a pending sign-in of their own
    assert victim.client.get(f"/signin/oidc/callback?code={code}").status_code == 400  # no state
    assert victim.client.get(f"/signin/oidc/callback?code={code}&state=forged").status_code == 400
    other = victim.callback(attacker_url)  # the attacker's (valid) state in the victim's browser
    assert other.status_code == 400 and "not started in this browser" in other.text
    assert not _signed_in(victim) and site.count(Person) == 0

    assert attacker.callback(attacker_url).status_code == 303
    replay = attacker.callback(attacker_url)
    assert replay.status_code == 400  # single use
    assert site.count(Person) == 1


def test_pkce_is_sent_except_to_orcid(site: Site) -> None:
    browser = site.browser()
    orcid = query(browser.start("orcid"))
    assert "code_challenge" not in orcid and orcid["redirect_uri"].endswith("/signin/orcid/callback")
    done = browser.callback(browser.sign_in_at_mock(browser.start("orcid"), "0000-0002-1825-0097"))
    assert done.status_code == 303 and _signed_in(browser)


def test_a_code_from_one_provider_is_refused_at_anothers_callback(site: Site) -> None:
    """Case 4: mix-up — provider A's code and state delivered to provider B's callback."""
    browser = site.browser()
    from_a = browser.sign_in_at_mock(browser.start("oidc"), "alice")
    swapped = from_a.replace("/signin/oidc/callback", "/signin/orcid/callback")
    refused = browser.callback(swapped)
    assert refused.status_code == 400 and "another provider" in refused.text
    assert not _signed_in(browser) and site.count(Person) == 0


@pytest.mark.parametrize(
    "target",
    ["https://evil.example/x", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "http:/evil"],
)
def test_next_is_only_a_same_site_path(site: Site, target: str) -> None:
    browser = site.browser()
    done = browser.callback(browser.sign_in_at_mock(browser.start("oidc", target), "alice"))
    assert done.status_code == 303 and done.headers["location"] == "/"


def test_a_planted_session_id_is_never_adopted(site: Site) -> None:
    """Case 5, both ways: an id the store does not know, and a live pre-sign-in id of the attacker's."""
    unknown = "ab" * 32
    victim = site.browser()
    victim.plant(unknown)
    answer = victim.client.post("/signin/oidc", data={"next": "/"})
    assert answer.status_code == 303
    assert victim.session != unknown  # the pending sign-in went under a new id
    victim.callback(victim.sign_in_at_mock(answer.headers["location"], "alice"))
    assert _signed_in(victim) and victim.session != unknown

    attacker = site.browser()
    attacker.start("oidc")
    fixed = attacker.session
    assert fixed is not None
    target = site.browser()
    target.plant(fixed)  # the attacker fixes their own live session id
    target.callback(target.sign_in_at_mock(target.start("oidc"), "bob"))
    assert _signed_in(target) and target.session != fixed
    assert not _signed_in(attacker)  # the attacker's copy of the id is now worthless


def test_sign_out_deletes_the_session_on_the_server(site: Site) -> None:
    """Case 6: after sign-out, replaying the old cookie is anonymous."""
    browser = site.browser()
    browser.sign_in("oidc", "alice")
    old = browser.session
    assert old is not None
    token = browser.csrf()
    out = browser.client.post("/signout", data={"csrf_token": token})
    assert out.status_code == 303 and "Max-Age=0" in _set_cookie(out)
    replay = site.browser()
    replay.plant(old)
    assert not _signed_in(replay)
    assert replay.client.get("/account").status_code == 303


def test_sessions_expire_when_idle_and_absolutely(tmp_path: Path, issuer: str) -> None:
    # Whole seconds (the stores keep whole seconds), with margins a loaded machine needs: a sign-in
    # through the provider can take a second or two.
    idle_seconds, absolute_seconds = 6, 6
    sites = {
        "idle": {"WOVEPAPER_SESSION_IDLE_MINUTES": str(idle_seconds / 60)},
        "absolute": {"WOVEPAPER_SESSION_ABSOLUTE_DAYS": str(absolute_seconds / 86_400)},
    }
    for name, limits in sites.items():
        env = {"WOVEPAPER_OIDC_ISSUER": issuer, **CLIENT, **limits}
        for served in _serve(tmp_path / name, env):
            if name == "idle":
                active, idle = served.browser(), served.browser()
                idle.sign_in("oidc", "bob")
                idle_since = time.monotonic()
                active.sign_in("oidc", "alice")
                # Used every second for longer than the idle timeout: each request renews it.
                while time.monotonic() - idle_since < idle_seconds + 2:
                    time.sleep(1)
                    assert _signed_in(active)
                assert not _signed_in(idle)
            else:
                busy = served.browser()
                busy.sign_in("oidc", "alice")
                started = time.monotonic()
                while time.monotonic() - started < absolute_seconds + 2:
                    time.sleep(1)
                    alive = _signed_in(busy)
                assert not alive  # however active, the session ended after its absolute lifetime


def test_secure_cookies_with_the_host_prefix_outside_local_development(tmp_path: Path, issuer: str) -> None:
    port = free_port()
    settings = app_settings(
        tmp_path / "data",
        port,
        {"WOVEPAPER_OIDC_ISSUER": issuer, **CLIENT, "WOVEPAPER_PUBLIC_URL": "https://papers.test"},
    )
    with serve_app(settings) as base:
        started = httpx.post(f"{base}/signin/oidc", data={"next": "/"})
        assert started.status_code == 303
        cookie = _set_cookie(started)
        assert cookie.startswith("__Host-wovepaper_session=")
        assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
        assert (
            query(started.headers["location"])["redirect_uri"] == "https://papers.test/signin/oidc/callback"
        )


def test_a_restart_keeps_people_signed_in(tmp_path: Path, issuer: str) -> None:
    env = {"WOVEPAPER_OIDC_ISSUER": issuer, **CLIENT}
    port = free_port()
    settings = app_settings(tmp_path / "data", port, env)
    with serve_app(settings) as base:
        browser = Browser(base)
        browser.sign_in("oidc", "alice")
        cookie = browser.session
    with serve_app(settings) as base:  # a new process would read the same files
        again = Browser(base)
        again.plant(cookie or "")
        assert _signed_in(again)


# -- CSRF --------------------------------------------------------------------------------------


def test_unsafe_requests_need_this_sessions_csrf_token(site: Site) -> None:
    """Case 7: no token, another session's token, a cross-site Origin: 403 and nothing changed."""
    alice, bob = site.browser(), site.browser()
    alice.sign_in("oidc", "alice")
    bob.sign_in("oidc", "bob")
    alices, bobs = alice.csrf(), bob.csrf()
    form = {"name": "agent", "scope": "read"}
    assert alice.client.post("/account/tokens", data=form).status_code == 403
    assert alice.client.post("/account/tokens", data={**form, "csrf_token": bobs}).status_code == 403
    assert alice.client.post("/account/tokens", data=form, headers={"X-CSRF-Token": bobs}).status_code == 403
    cross_site = alice.client.post(
        "/account/tokens", data={**form, "csrf_token": alices}, headers={"Origin": "https://evil.example"}
    )
    assert cross_site.status_code == 403
    assert site.count(ApiToken) == 0
    assert alice.client.get("/account/tokens").status_code == 405  # no state change on GET
    assert alice.client.post("/account/tokens", data={**form, "csrf_token": alices}).status_code == 201
    assert (
        alice.client.post("/account/tokens", data=form, headers={"X-CSRF-Token": alices}).status_code == 201
    )
    assert site.count(ApiToken) == 2
    # A signed-out request is refused too, not treated as anonymous-and-fine.
    assert alice.client.post("/signout").status_code == 403


# -- tokens, people and their data ------------------------------------------------------------


def _new_token(browser: Browser, scope: str = "read") -> str:
    answer = browser.client.post(
        "/account/tokens", data={"name": "my agent", "scope": scope, "csrf_token": browser.csrf()}
    )
    assert answer.status_code == 201
    marker = '<code class="secret">'
    start = answer.text.index(marker) + len(marker)
    return answer.text[start : answer.text.index("<", start)]


def test_api_tokens_work_as_bearer_and_stop_when_revoked(site: Site) -> None:
    alice = site.browser()
    alice.sign_in("oidc", "alice")
    secret = _new_token(alice)
    assert secret.startswith("wvp_")
    agent = httpx.Client(base_url=site.base, headers={"Authorization": f"Bearer {secret}"})
    me = agent.get("/api/account")
    assert me.status_code == 200 and me.json()["via"] == "token" and me.json()["scopes"] == ["read"]
    # A bearer request is judged by the token alone: no CSRF, and cookies are not looked at.
    agent.cookies.set(COOKIE, alice.session or "")
    assert agent.get("/api/account").json()["via"] == "token"
    assert site.count(ApiToken, token_hash=secret) == 0  # only the hash is stored

    page = alice.client.get("/account")
    token_id = int(page.text.split('action="/account/tokens/')[1].split("/")[0])
    revoked = alice.client.post(f"/account/tokens/{token_id}/revoke", data={"csrf_token": alice.csrf()})
    assert revoked.status_code == 303
    dead = agent.get("/api/account")  # at once: the next request
    assert dead.status_code == 401 and 'error="invalid_token"' in dead.headers["www-authenticate"]
    assert httpx.get(f"{site.base}/api/account").status_code == 401
    assert httpx.get(f"{site.base}/papers", headers={"Authorization": "Bearer wvp_forged"}).status_code == 401


def test_one_person_cannot_reach_anothers_data(site: Site) -> None:
    """Case 13: B gets 404 for A's token, identity and feed, and sees none of A's data."""
    alice, bob = site.browser(), site.browser()
    alice.sign_in("oidc", "alice")
    bob.sign_in("oidc", "bob")
    _new_token(alice)
    page = alice.client.get("/account").text
    token_id = int(page.split('action="/account/tokens/')[1].split("/")[0])
    feed = alice.client.post("/account/feed", data={"action": "new", "csrf_token": alice.csrf()})
    feed_url = feed.text.split('<code class="secret">')[1].split("<")[0]
    csrf = bob.csrf()
    assert bob.client.post(f"/account/tokens/{token_id}/revoke", data={"csrf_token": csrf}).status_code == 404
    identity = site.count(Identity)
    assert bob.client.post("/account/identities/1/unlink", data={"csrf_token": csrf}).status_code in (
        400,
        404,
    )
    assert site.count(ApiToken) == 1 and site.count(Identity) == identity
    bobs = bob.client.get("/account/export").json()
    assert bobs["person"]["display_name"] == "bob" and bobs["api_tokens"] == []
    assert "my agent" not in bob.client.get("/account").text
    assert httpx.get(feed_url).status_code == 200
    assert httpx.get(feed_url.replace("wvf_", "wvf_x")).status_code == 404


def test_deleting_an_account_leaves_no_rows(site: Site) -> None:
    alice = site.browser()
    alice.sign_in("oidc", "alice")
    other_tab = site.browser()
    other_tab.sign_in("oidc", "alice")
    secret = _new_token(alice)
    person_id = alice.client.get("/api/account").json()["person_id"]
    refused = alice.client.post("/account/delete", data={"confirm": "no", "csrf_token": alice.csrf()})
    assert refused.status_code == 400 and site.count(Person) == 1
    gone = alice.client.post("/account/delete", data={"confirm": "delete", "csrf_token": alice.csrf()})
    assert gone.status_code == 303
    assert site.count(Person, id=person_id) == 0
    for table in (Identity, ApiToken, Follow):
        assert site.count(table, person_id=person_id) == 0
    assert not _signed_in(alice) and not _signed_in(other_tab)
    assert (
        httpx.get(f"{site.base}/api/account", headers={"Authorization": f"Bearer {secret}"}).status_code
        == 401
    )


# -- follows and the private feed ---------------------------------------------------------------


def _researcher(site: Site) -> tuple[int, str]:
    import json

    path = site.data_dir / "listing.jsonl"
    rows = [
        {
            "id": "2401.00001",
            "title": "Followed work on attention",
            "summary": "s",
            "authors": ["Ada Lovelace"],
            "categories": ["cs.LG"],
            "_listing_file": "2024-01-01",
        }
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    engine = make_engine(site.settings.database_url)
    Importer(engine, source="listings").run(listings.read(path))
    with engine.connect() as conn:
        researcher_id = int(conn.execute(text("SELECT id FROM researchers")).scalar_one())
    engine.dispose()
    return researcher_id, "Followed work on attention"


def test_follow_a_researcher_and_read_their_papers_in_the_private_feed(site: Site) -> None:
    researcher_id, title = _researcher(site)
    alice = site.browser()
    alice.sign_in("oidc", "alice")
    page = alice.client.get(f"/researchers/{researcher_id}", follow_redirects=True)
    assert (
        f'action="/researchers/{researcher_id}/follow"' in page.text and 'aria-pressed="false"' in page.text
    )
    token = alice.csrf()
    done = alice.client.post(f"/researchers/{researcher_id}/follow", data={"csrf_token": token})
    assert done.status_code == 303 and site.count(Follow) == 1
    assert title in alice.client.get("/").text.split("New from the researchers you follow")[1]
    # The fetch path of progressive enhancement: header token, JSON answer.
    unfollowed = alice.client.post(
        f"/researchers/{researcher_id}/unfollow",
        headers={"X-CSRF-Token": token, "Accept": "application/json"},
    )
    assert unfollowed.json() == {"researcher_id": researcher_id, "following": False}
    assert site.count(Follow) == 0
    alice.client.post(f"/researchers/{researcher_id}/follow", headers={"X-CSRF-Token": token})
    made = alice.client.post("/account/feed", data={"action": "new", "csrf_token": token})
    feed_url = made.text.split('<code class="secret">')[1].split("<")[0]
    rss = httpx.get(feed_url)
    assert rss.status_code == 200 and rss.headers["content-type"].startswith("application/rss+xml")
    assert title in rss.text and rss.headers["cache-control"] == "private, no-store"
    alice.client.post("/account/feed", data={"action": "revoke", "csrf_token": token})
    assert httpx.get(feed_url).status_code == 404
    anonymous = httpx.post(f"{site.base}/researchers/{researcher_id}/follow", follow_redirects=False)
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/signin?next=")


def test_github_sign_in_reads_the_user_and_the_primary_verified_email(tmp_path: Path) -> None:
    """GitHub cannot run here: a stand-in speaking its OAuth protocol, reached through the same
    settings an operator of GitHub Enterprise would use."""
    github = FakeGitHub()
    with github.running() as url:
        env = {
            "WOVEPAPER_GITHUB_CLIENT_ID": "Iv1.test",
            "WOVEPAPER_GITHUB_CLIENT_SECRET": "gh-secret",
            "WOVEPAPER_GITHUB_URL": url,
            "WOVEPAPER_GITHUB_API_URL": f"{url}/api",
        }
        for site in _serve(tmp_path, env):
            browser = site.browser()
            authorize = browser.start("github", "/papers")
            assert query(authorize)["scope"] == "read:user user:email"
            back = httpx.get(authorize, follow_redirects=False).headers["location"]
            done = browser.callback(back)
            assert done.status_code == 303 and done.headers["location"] == "/papers"
            assert github.token_accepts == ["application/json"]  # GitHub answers JSON only when asked
            export = browser.client.get("/account/export").json()
            assert export["person"]["display_name"] == "Octo Cat"
            assert export["person"]["email"] == "octo@example.org"  # the primary verified one
            assert export["identities"][0] | {"created_at": None, "last_used_at": None} == {
                "provider": "github",
                "issuer": url,
                "subject": "4242",  # the numeric id: logins can be renamed
                "email": "octo@example.org",
                "created_at": None,
                "last_used_at": None,
            }


def test_with_redis_down_browsing_works_and_sessions_say_so(tmp_path: Path, issuer: str) -> None:
    """Redis unreachable: anonymous pages and the JSON API answer (limits fail open); a request
    that needs its session gets a clear 503, never a 500."""
    env = {"WOVEPAPER_OIDC_ISSUER": issuer, **CLIENT, "WOVEPAPER_REDIS_URL": "redis://127.0.0.1:1/0"}
    for site in _serve(tmp_path, env):
        assert httpx.get(f"{site.base}/papers").status_code == 200
        assert httpx.get(f"{site.base}/api/papers").status_code == 200
        assert httpx.post(f"{site.base}/signin/oidc", data={"next": "/"}).status_code == 303
        browser = site.browser()
        browser.plant("ab" * 32)
        answer = browser.client.get("/papers")
        assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
        assert "Sessions are unavailable" in answer.text
