"""Hostile input over real HTTP, against the app served by uvicorn on loopback (SQLite and PostgreSQL).

- The requests a hostile probe found failing (non-Latin-1 paths, control characters, ids beyond the
  integer columns, non-ASCII digits, HEAD on a keep-alive connection, duplicate spellings of one
  address) get the answer the rule says, with every security header, and the connection stays usable.
- A fuzz suite: Hypothesis builds paths from every route the app serves (read from the app itself,
  so a new route is fuzzed without touching this file) with arbitrary percent-encoded bytes,
  surrogates, control characters, overlong and non-ASCII numbers, odd slashes and suffixes, and query
  strings for every parameter any handler reads. Every answer must be < 500, carry the security
  headers and leave the keep-alive connection usable for the next request.
- Schemathesis over ``/openapi.json`` with the examples, coverage and fuzzing phases and every check:
  zero 5xx, zero schema violations.
"""

from __future__ import annotations

import http.client
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.main import create_app
from app.routing import handler_parameters
from tests.integration.browse_catalogue import ServedCatalogue

SECURITY_HEADERS = ("content-security-policy", "x-content-type-options", "referrer-policy", "x-frame-options")
# Fuzzed requests per backend: enough to reach every route family many times, bounded for CI.
FUZZ_EXAMPLES = 250
# Schemathesis cases per operation and phase; the seed keeps CI reproducible (the Hypothesis
# suite above is the part that explores new inputs on every run).
SCHEMATHESIS_EXAMPLES = 25
SCHEMATHESIS_SEED = 20261201


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


class Connection:
    """One keep-alive HTTP/1.1 connection; every request must leave it open and usable."""

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self.http = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
        self.http.connect()

    def request(self, method: str, target: str, accept: str | None = None) -> Answer:
        socket_before = self.http.sock
        headers = {"Accept": accept} if accept else {}
        self.http.request(method, target, headers=headers)
        response = self.http.getresponse()
        body = response.read()
        assert not response.will_close, f"{method} {target}: the server closed the connection"
        assert self.http.sock is socket_before, f"{method} {target}: the connection was replaced"
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, body)

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def connection(served_catalogue: ServedCatalogue) -> Iterator[Connection]:
    conn = Connection(served_catalogue.base)
    yield conn
    conn.close()


def assert_clean(conn: Connection, method: str, target: str, answer: Answer) -> None:
    """< 500, every security header, and the same connection answers the next request."""
    where = f"{method} {target}"
    assert answer.status < 500, (where, answer.status, answer.body[:300])
    missing = [h for h in SECURITY_HEADERS if h not in answer.headers]
    assert not missing, (where, missing)
    assert "accept" in answer.headers.get("vary", "").lower(), where
    if method == "HEAD":
        assert answer.body == b"", where
    follow_up = conn.request("GET", "/healthz")
    assert follow_up.status == 200, (where, "then GET /healthz", follow_up.status)


# -- the table of the issue ------------------------------------------------------------------------

TABLE = [
    ("GET", "/%E2%82%AC", 404),
    ("GET", "/papers/%ED%A0%80", 404),
    ("GET", "/papers/%FF%FE", 404),
    ("GET", "/nonexistent-%F0%9F%98%80", 404),
    ("GET", "/rss/%ED%A0%80.xml", 404),
    ("GET", "/papers/%00", 404),
    ("GET", "/static/%00", 404),
    ("GET", "/researchers/135-%0d%0aLocation:%20https://evil.example", 404),
    ("GET", "/institutions/99999999999999999999999", 404),
    ("GET", "/api/institutions/9223372036854775808", 404),
    ("GET", "/api/researchers/9223372036854775808", 404),
    ("GET", "/api/researchers/2147483648/papers", 404),
    ("GET", "/researchers/2147483648", 404),
    ("GET", "/institutions/%C2%B2", 404),
    ("GET", "/api/institutions/%C2%B2/papers", 404),
    ("GET", "/researchers/%D9%A1%D9%A4", 404),  # Arabic-Indic digits
    ("GET", "/papers/%EF%BC%91%EF%BC%94%EF%BC%91%EF%BC%92.%EF%BC%96%EF%BC%99%EF%BC%98%EF%BC%90", 404),
    ("HEAD", "/about", 200),
    ("HEAD", "/papers", 200),
    ("HEAD", "/nonexistent", 404),
    ("GET", "/about/", 301),
    ("GET", "//about", 301),
    ("GET", "/papers/.md", 404),
    ("GET", "/api/ingest/status/bogus", 404),
    ("GET", "/api/papers/bogus", 404),
    ("GET", "/researchers/-1", 404),
    ("GET", "/api/researchers/-1", 404),
    ("GET", "/search?q=%00", 200),  # a query of nothing is the search page's landing, as q= is
    ("GET", "/search?q=", 200),
]


@pytest.mark.parametrize(("method", "target", "status"), TABLE)
def test_the_reported_requests_get_clean_answers(
    connection: Connection, method: str, target: str, status: int
) -> None:
    answer = connection.request(method, target, accept="text/html")
    assert answer.status == status, (method, target, answer.status, answer.body[:300])
    assert_clean(connection, method, target, answer)


def test_duplicate_spellings_redirect_to_the_canonical_address(connection: Connection) -> None:
    assert connection.request("GET", "/about/").headers["location"] == "/about"
    assert connection.request("GET", "//papers//?page=2").headers["location"] == "/papers?page=2"
    assert connection.request("GET", "//about.md").headers["location"] == "/about.md"
    # A redirect's Location never carries the request's raw characters.
    moved = connection.request("GET", "/institutions/Universit%C3%A4t%20%E2%82%AC/")
    assert moved.status == 301 and moved.headers["location"] == "/institutions/Universit%C3%A4t%20%E2%82%AC"


def test_an_error_page_links_its_markdown_twin_percent_encoded(connection: Connection) -> None:
    answer = connection.request("GET", "/nonexistent-%E2%82%AC", accept="text/html")
    assert answer.status == 404
    assert answer.headers["link"].startswith("</nonexistent-%E2%82%AC.md>")


def test_every_bad_id_in_a_path_is_404_on_pages_and_api(connection: Connection) -> None:
    """The rule the developers page states: an address that names nothing is 404, whatever is wrong
    with the id in it; a query parameter that cannot be used is 400."""
    for target in ("/researchers/abc", "/researchers/0", "/api/researchers/abc", "/api/researchers/0"):
        assert connection.request("GET", target).status == 404, target
    for target in ("/api/papers?page=0", "/api/search?q=x&researcher=-1", "/papers?page=abc"):
        assert connection.request("GET", target).status == 400, target


# -- the fuzz suite ----------------------------------------------------------------------------------


def _pct(data: bytes) -> str:
    return "".join(f"%{byte:02X}" for byte in data)


def _encoded(text: str) -> str:
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


NUMBERS = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.integers(1, 60).map(lambda n: "9" * n),
    st.sampled_from(["0", "-1", "00042", "2147483647", "2147483648", "9223372036854775808", "1e9", "0x10"]),
)
NON_ASCII_DIGITS = st.text(
    alphabet=st.characters(categories=["Nd", "No"], exclude_characters="0123456789"), min_size=1, max_size=8
).map(_encoded)
HOSTILE_TEXT = st.text(
    alphabet=st.characters(categories=["Cc", "Cs", "Cf", "Nd", "L", "P", "S", "Zs"]), min_size=1, max_size=10
).map(_encoded)
RAW_BYTES = st.binary(min_size=1, max_size=10).map(_pct)
ODD = st.sampled_from(
    [
        "-",
        ".",
        "..",
        "%2e%2e",
        ".md",
        "index.md",
        "%2F",
        "%2f..%2f",
        "%00",
        "%0d%0a",
        "%20",
        "~",
        "ror:",
        "v2",
    ]
)


def pieces(served: ServedCatalogue) -> st.SearchStrategy[str]:
    """Pieces of a path segment or a query value: real ids (so handlers get past the first check)
    mixed with everything hostile."""
    facts = served.facts
    real = st.sampled_from(
        [
            *(
                "1412.6980",
                "1412.6980v3",
                "astro-ph",
                "0601001",
                "cs.LG",
                "latest.xml",
                "papers-1.xml",
                "css",
            ),
            str(facts.enriched_researcher),
            f"{facts.enriched_researcher}-diederik-p-kingma",
            str(facts.toronto),
            f"ror:{facts.toronto_ror}",
        ]
    )
    return st.one_of(real, NUMBERS, NON_ASCII_DIGITS, HOSTILE_TEXT, RAW_BYTES, ODD)


def app_routes(served: ServedCatalogue) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every path template the app serves and every parameter name its handlers read."""
    app = create_app(served.settings)
    paths, names = set(), set()
    reserved = {"request", "pages", "services", "db", "state", "scope", "headers", "cookies", "data"}
    for route in app.routes:
        paths.add(route.path_format)
        for handler in getattr(route, "route_handlers", []):
            path_params = set(re.findall(r"{(\w+)", route.path))
            for name, field in handler_parameters(handler).items():
                if name in reserved or name in path_params:
                    continue
                alias = getattr(field.kwarg_definition, "name", None) or getattr(
                    field.kwarg_definition, "query", None
                )
                names.add(alias or name)
    return tuple(sorted(paths)), tuple(sorted(names))


def requests(served: ServedCatalogue) -> st.SearchStrategy[tuple[str, str, str | None]]:
    templates, parameters = app_routes(served)
    piece = pieces(served)
    segment = st.lists(piece, min_size=1, max_size=3).map("".join)

    @st.composite
    def one(draw: st.DrawFn) -> tuple[str, str, str | None]:
        template = draw(st.sampled_from(templates))
        path = re.sub(r"{[^}]+}", lambda _m: draw(segment), template)
        path = draw(st.sampled_from(["", "", "", "/"])) + path  # sometimes a doubled leading slash
        path += draw(st.sampled_from(["", "", "", "/", "//", ".md", "/.md", ".xml", "%00", "/%2e%2e"]))
        pairs = draw(
            st.lists(
                st.tuples(
                    st.one_of(st.sampled_from(parameters), HOSTILE_TEXT), st.one_of(piece, st.just(""))
                ),
                max_size=4,
            )
        )
        query = "&".join(f"{key}={value}" for key, value in pairs)
        target = path + (f"?{query}" if query else draw(st.sampled_from(["", "?"])))
        method = draw(st.sampled_from(["GET", "GET", "HEAD"]))
        accept = draw(st.sampled_from([None, "text/html", "text/markdown", "application/json", "*/*"]))
        return method, target, accept

    return one()


def test_the_fuzz_suite_reaches_every_route_and_parameter(served_catalogue: ServedCatalogue) -> None:
    templates, parameters = app_routes(served_catalogue)
    assert {"/papers/{ident}", "/api/search", "/static/{file_path}", "/healthz"} <= set(templates)
    assert {"q", "category", "from", "to", "researcher", "sort", "mode", "page", "size"} <= set(parameters)


def test_fuzzed_requests_never_fail_the_server(served_catalogue: ServedCatalogue) -> None:
    conn = Connection(served_catalogue.base)

    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(request=requests(served_catalogue))
    def exercise(request: tuple[str, str, str | None]) -> None:
        method, target, accept = request
        answer = conn.request(method, target, accept)
        assert_clean(conn, method, target, answer)

    try:
        exercise()
    finally:
        conn.close()


# -- schemathesis ------------------------------------------------------------------------------------


def test_schemathesis_finds_no_server_error_or_schema_violation(
    served_catalogue: ServedCatalogue, tmp_path: Path
) -> None:
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "run",
        f"{served_catalogue.base}/openapi.json",
        "--phases=examples,coverage,fuzzing",
        "--checks=all",
        f"--max-examples={SCHEMATHESIS_EXAMPLES}",
        f"--seed={SCHEMATHESIS_SEED}",
        "--workers=1",
        "--no-color",
        "--warnings=off",
        "--request-timeout=30",
    ]
    # In a scratch directory: schemathesis keeps a cache and reports beside where it runs.
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False)
    summary = run.stdout[-6000:]
    assert run.returncode == 0, summary
    assert re.search(r"\d+ generated, \d+ passed", summary), summary
