"""Case 3: ID tokens the app must refuse, delivered through the real flow over HTTP by an OpenID
provider on loopback whose tokens the test writes (``HostileProvider``): a wrong nonce, audience
or issuer, an expired token, ``alg: none``, HS256 "signed" with the provider's public key, a
forged signature, an unknown key. Each ends in a 400 with nobody signed in and no account made; an
honest token (and one signed with a newly rotated key) signs in."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc.jwk import RSAKey
from sqlalchemy import create_engine, func, select

from accounts.models import Person
from settings import Settings
from tests.integration.signin_peers import Browser, HostileProvider, app_settings, free_port, serve_app

pytestmark = pytest.mark.slow

Writer = Callable[[dict[str, Any], HostileProvider], str]


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[tuple[HostileProvider, str, Settings]]:
    provider = HostileProvider()
    with provider.running() as issuer:
        env = {
            "WOVEPAPER_OIDC_ISSUER": issuer,
            "WOVEPAPER_OIDC_CLIENT_ID": "wovepaper-test",
            "WOVEPAPER_OIDC_CLIENT_SECRET": "s3cret",
        }
        settings = app_settings(tmp_path / "data", free_port(), env)
        with serve_app(settings) as base:
            yield provider, base, settings


def _people(settings: Settings) -> int:
    engine = create_engine(settings.database_url)
    with engine.connect() as conn:
        count = int(conn.execute(select(func.count()).select_from(Person)).scalar_one())
    engine.dispose()
    return count


def _sign_in(base: str) -> tuple[httpx.Response, Browser]:
    browser = Browser(base)
    authorize = browser.start("oidc")
    back = httpx.get(authorize, follow_redirects=False)  # the provider signs in at once
    assert back.status_code == 302
    return browser.callback(back.headers["location"]), browser


def test_an_honest_token_signs_in_with_pkce_checked(hostile: tuple[HostileProvider, str, Settings]) -> None:
    provider, base, settings = hostile
    answer, browser = _sign_in(base)
    assert answer.status_code == 303
    assert browser.client.get("/api/account").json()["name"] == "Hostile Test"
    assert provider.verified_pkce == [True]  # the verifier sent matches the S256 challenge
    assert _people(settings) == 1


def _claims(**changes: Any) -> Writer:
    def write(claims: dict[str, Any], provider: HostileProvider) -> str:
        return provider.sign({**claims, **changes})

    return write


REFUSED: dict[str, Writer] = {
    "wrong nonce": _claims(nonce="not-the-one-we-sent"),
    "missing nonce": lambda c, p: p.sign({k: v for k, v in c.items() if k != "nonce"}),
    "wrong audience": _claims(aud="another-client"),
    "several audiences, azp not us": _claims(aud=["wovepaper-test", "another"], azp="another"),
    "wrong issuer": _claims(iss="https://accounts.example.org"),
    "expired": _claims(exp=int(time.time()) - 3600, iat=int(time.time()) - 7200),
    "no expiry": lambda c, p: p.sign({k: v for k, v in c.items() if k != "exp"}),
    "alg none": lambda c, p: p.unsigned(c, {"alg": "none", "kid": "k1"}),
    "HS256 keyed with the public key": lambda c, p: p.hs256_with_public_key(c),
    "forged signature (another key, same kid)": lambda c, p: p.sign(
        c, key=RSAKey.generate_key(2048, parameters={"kid": "k1"})
    ),
    "unknown key": lambda c, p: p.sign(
        c, {"alg": "RS256", "kid": "k9"}, RSAKey.generate_key(2048, parameters={"kid": "k9"})
    ),
    "not a JWT": lambda c, p: "garbage",
}


@pytest.mark.parametrize("attack", list(REFUSED))
def test_bad_id_tokens_are_refused(hostile: tuple[HostileProvider, str, Settings], attack: str) -> None:
    provider, base, settings = hostile
    provider.id_token = REFUSED[attack]
    answer, browser = _sign_in(base)
    assert answer.status_code == 400, attack
    assert "ID token was not valid" in answer.text
    assert browser.client.get("/api/account").status_code == 401
    assert _people(settings) == 0


def test_a_rotated_key_is_fetched_once_and_accepted(hostile: tuple[HostileProvider, str, Settings]) -> None:
    provider, base, _settings = hostile
    assert _sign_in(base)[0].status_code == 303  # the app now holds the JWKS with k1
    fetched = provider.jwks_fetches
    rotated = RSAKey.generate_key(2048, parameters={"kid": "k2"})
    provider.extra_keys.append(rotated.as_dict(private=False))
    provider.id_token = lambda c, p: p.sign(c, {"alg": "RS256", "kid": "k2"}, rotated)
    assert _sign_in(base)[0].status_code == 303
    assert provider.jwks_fetches == fetched + 1  # refetched once for the unknown kid
