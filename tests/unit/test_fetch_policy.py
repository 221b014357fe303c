"""The production fetch policy, tested directly: only https to arXiv's hosts on public addresses;
ids are parsed before they become URLs."""

from __future__ import annotations

import pytest

from catalog.arxiv_ids import InvalidArxivId
from ingest.fetch import pdf_url
from ingest.http import ARXIV_HOSTS, Refused, UrlPolicy, is_public

PUBLIC = "151.101.67.42"  # an address arXiv's CDN uses


def policy(*addresses: str) -> UrlPolicy:
    """The production policy with DNS answered by the test (no network here)."""
    return UrlPolicy(resolver=lambda _host, _port: list(addresses or (PUBLIC,)))


@pytest.mark.parametrize(
    "url",
    [
        "https://arxiv.org/pdf/1706.03762v7",
        "https://export.arxiv.org/pdf/hep-th/9901001",
        "https://ARXIV.org/pdf/2401.01234",
        "https://arxiv.org./pdf/2401.01234",
        "https://arxiv.org:443/pdf/2401.01234",
    ],
)
def test_https_urls_on_arxiv_hosts_are_allowed(url: str) -> None:
    assert policy().check(url).host.rstrip(".").lower() in ARXIV_HOSTS


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://arxiv.org/pdf/1706.03762", "scheme 'http'"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("ftp://arxiv.org/pdf/1706.03762", "scheme 'ftp'"),
        ("gopher://arxiv.org/", "scheme 'gopher'"),
        ("//arxiv.org/pdf/1706.03762", "scheme"),
        ("https://evil.example/pdf/1706.03762", "not an arXiv host"),
        ("https://arxiv.org.evil.example/pdf/1", "not an arXiv host"),
        ("https://evilarxiv.org/pdf/1", "not an arXiv host"),
        ("https://www.arxiv.org/pdf/1", "not an arXiv host"),
        ("https://user:secret@arxiv.org/pdf/1", "credentials"),
        ("https://arxiv.org:8443/pdf/1", "port 8443"),
        ("https://127.0.0.1/pdf/1", "not an arXiv host"),
        ("https://[::1]/pdf/1", "not an arXiv host"),
        ("https://169.254.169.254/latest/meta-data", "not an arXiv host"),
        ("not a url at all", "scheme"),
    ],
)
def test_other_schemes_hosts_ports_and_credentials_are_refused(url: str, why: str) -> None:
    with pytest.raises(Refused) as refused:
        policy().check(url)
    assert why in str(refused.value)


@pytest.mark.parametrize(
    "addresses",
    [
        ("127.0.0.1",),
        ("10.1.2.3",),
        ("192.168.0.10",),
        ("172.16.5.4",),
        ("169.254.169.254",),  # cloud metadata
        ("100.64.0.1",),  # carrier-grade NAT
        ("0.0.0.0",),
        ("::1",),
        ("fd00::1",),
        ("fe80::1%eth0",),
        ("::ffff:127.0.0.1",),  # IPv4-mapped loopback
        ("224.0.0.1",),
        (PUBLIC, "10.0.0.5"),  # one private answer is enough to refuse
    ],
)
def test_arxiv_names_resolving_to_private_addresses_are_refused(addresses: tuple[str, ...]) -> None:
    with pytest.raises(Refused, match="non-public address"):
        policy(*addresses).check("https://arxiv.org/pdf/1706.03762")


def test_public_addresses() -> None:
    assert is_public("151.101.67.42") and is_public("2a04:4e42::347")
    assert not any(
        map(is_public, ["127.0.0.1", "10.0.0.1", "::1", "fc00::1", "not-an-ip", "255.255.255.255"])
    )


@pytest.mark.parametrize(
    ("raw", "version", "url"),
    [
        ("1706.03762", None, "https://arxiv.org/pdf/1706.03762"),
        ("1706.03762v7", None, "https://arxiv.org/pdf/1706.03762v7"),
        ("1706.03762", 5, "https://arxiv.org/pdf/1706.03762v5"),
        (" arXiv:2401.01234 ", None, "https://arxiv.org/pdf/2401.01234"),
        ("hep-th/9901001v2", None, "https://arxiv.org/pdf/hep-th/9901001v2"),
        ("math.GT/0309136", None, "https://arxiv.org/pdf/math/0309136"),
    ],
)
def test_pdf_urls_are_built_from_parsed_ids(raw: str, version: int | None, url: str) -> None:
    assert pdf_url(raw, version) == url
    assert policy().check(url)


@pytest.mark.parametrize(
    "raw",
    [
        "1706.03762/../../etc/passwd",
        "1706.03762?download=evil",
        "1706.03762#frag",
        "../1706.03762",
        "1706.03762v7 HTTP/1.1\r\nHost: evil",
        "https://evil.example/pdf/1706.03762",
        "",
        "hep-th/../9901001",
    ],
)
def test_injected_ids_never_become_urls(raw: str) -> None:
    with pytest.raises(InvalidArxivId):
        pdf_url(raw)


def test_version_must_be_positive() -> None:
    with pytest.raises(InvalidArxivId, match="version 0"):
        pdf_url("1706.03762", 0)
