"""Sign-in rules that need no server: where ``next`` may point, which address is the client,
when the local link is on, what production refuses, which ID-token algorithms are accepted."""

from __future__ import annotations

import secrets

import pytest

from app.auth.id_tokens import BadIdToken, allowed_algorithms
from app.auth.local_link import available, is_loopback
from app.auth.requester import client_address, parse_networks
from app.routing import safe_next
from settings import production_problems
from tests.integration.signin_peers import settings_with


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/papers?page=2", "/papers?page=2"),
        ("/researchers/1-ada#top", "/researchers/1-ada#top"),
        (None, "/"),
        ("", "/"),
        ("papers", "/"),
        ("https://evil.example/", "/"),
        ("//evil.example/x", "/"),
        ("/\\evil.example", "/"),
        ("/%0d%0aSet-Cookie:x", "/%0d%0aSet-Cookie:x"),  # percent-encoded stays a path
        ("/\r\nLocation: x", "/"),
        ("javascript:alert(1)", "/"),
        ("/" + "a" * 2000, "/"),
    ],
)
def test_next_is_a_same_site_relative_path(value: str | None, expected: str) -> None:
    assert safe_next(value) == expected


PROXIES = parse_networks(["10.0.0.0/8", "127.0.0.1"])


@pytest.mark.parametrize(
    ("peer", "forwarded", "expected"),
    [
        ("203.0.113.9", "1.2.3.4", "203.0.113.9"),  # not a proxy: the header is ignored
        ("10.1.2.3", "198.51.100.7", "198.51.100.7"),  # a proxy: its client
        ("10.1.2.3", "6.6.6.6, 198.51.100.7", "198.51.100.7"),  # a forged left part is not believed
        ("10.1.2.3", "198.51.100.7, 10.9.9.9", "198.51.100.7"),  # two proxies deep
        ("10.1.2.3", "not-an-address", "10.1.2.3"),
        ("10.1.2.3", None, "10.1.2.3"),
        (None, "1.2.3.4", "unknown"),
    ],
)
def test_the_client_address_trusts_only_configured_proxies(
    peer: str | None, forwarded: str | None, expected: str
) -> None:
    assert client_address(peer, forwarded, PROXIES) == expected


def test_a_bad_proxy_setting_is_named() -> None:
    with pytest.raises(ValueError, match="not-a-net"):
        parse_networks(["not-a-net"])


def test_the_local_link_is_only_for_loopback_without_providers() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert available(settings_with({}), providers_configured=False)
    assert not available(settings_with({}), providers_configured=True)
    assert not available(settings_with({"WOVEPAPER_HOST": "0.0.0.0"}), providers_configured=False)
    assert not available(settings_with({"WOVEPAPER_LOCAL_SIGNIN": "false"}), providers_configured=False)


def test_production_refuses_unsafe_sign_in_settings() -> None:
    production = {"WOVEPAPER_ENVIRONMENT": "production"}
    unsafe = settings_with({**production, "WOVEPAPER_LOCAL_SIGNIN": "true"})
    problems = " ".join(production_problems(unsafe))
    assert "SECRET_KEY is not set" in problems and "https://" in problems and "LOCAL_SIGNIN" in problems
    https = {**production, "WOVEPAPER_PUBLIC_URL": "https://x.org"}
    for weak in ("changeme", "a" * 40, "0123456789abcdef"):  # a placeholder, one letter, too short
        placeholder = settings_with({**https, "WOVEPAPER_SECRET_KEY": weak})
        assert "SECRET_KEY looks like a placeholder" in " ".join(production_problems(placeholder)), weak
    good = settings_with({**https, "WOVEPAPER_SECRET_KEY": secrets.token_hex(32)})
    assert production_problems(good) == []


def test_only_asymmetric_id_token_algorithms_are_accepted() -> None:
    assert allowed_algorithms(["RS256", "HS256", "none"]) == ["RS256"]
    assert allowed_algorithms(None) == ["RS256"]
    with pytest.raises(BadIdToken):
        allowed_algorithms(["HS256", "none"])
