"""The PDF fetcher (and so the polite client under it) against a real HTTP server on loopback. The
policy is widened explicitly to allow this server (http, 127.0.0.1/localhost, any port) and nothing
else, so every redirect is still re-checked against it; the production policy itself is tested in
test_fetch_policy.py."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from coordination.pacing import pacer
from ingest.fetch import PdfFetcher
from ingest.http import ARXIV, HttpError, PoliteClient, Politeness, Refused, UrlPolicy
from settings import get_settings

PDF = b"%PDF-1.7\n" + b"0" * 5000 + b"\n%%EOF\n"
Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Server:
    routes: dict[str, Callable[[], Answer]] = field(default_factory=dict)
    hits: list[tuple[str, float]] = field(default_factory=list)
    port: int = 0

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args: object) -> None:
            pass

        def do_GET(self) -> None:
            state.hits.append((self.path, time.monotonic()))
            status, headers, body = state.routes.get(self.path, lambda: (404, {}, b"no such page"))()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if "Transfer-Encoding" in headers:
                self.end_headers()
                try:
                    for start in range(0, len(body), 4096):
                        part = body[start : start + 4096]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up on purpose (the size cap): expected, not an error
                return
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


LOOPBACK = UrlPolicy(
    hosts=frozenset({"127.0.0.1", "localhost"}), schemes=frozenset({"http"}), ports=None, allow_private=True
)


def fetcher(
    *, interval: float = 0.0, max_bytes: int = 1 << 20, retries: int = 2, policy: UrlPolicy = LOOPBACK
) -> PdfFetcher:
    polite = Politeness(interval=interval, max_bytes=max_bytes, retries=retries, backoff=0.05, timeout=5)
    return PdfFetcher(PoliteClient(polite, pacer(get_settings()), pace_key=ARXIV, policy=policy))


def test_a_pdf_is_downloaded(server: Server) -> None:
    server.routes["/pdf/1"] = lambda: (200, {"Content-Type": "application/pdf"}, PDF)
    with fetcher() as f:
        assert f.get(server.url("/pdf/1")) == PDF


def test_redirects_are_followed_and_each_hop_rechecked(server: Server) -> None:
    server.routes["/a"] = lambda: (302, {"Location": server.url("/b", host="localhost")}, b"")
    server.routes["/b"] = lambda: (301, {"Location": "/c"}, b"")  # relative to the current hop
    server.routes["/c"] = lambda: (200, {}, PDF)
    with fetcher() as f:
        assert f.get(server.url("/a")) == PDF
    assert [path for path, _ in server.hits] == ["/a", "/b", "/c"]


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("file:///etc/passwd", "scheme 'file'"),
        ("http://169.254.169.254/latest/meta-data/", "not an arXiv host"),
        ("http://evil.example/pdf", "not an arXiv host"),
        ("https://127.0.0.1/pdf", "scheme 'https'"),  # not in this (widened) policy either
    ],
)
def test_a_redirect_outside_the_policy_is_refused_before_it_is_followed(
    server: Server, location: str, why: str
) -> None:
    server.routes["/start"] = lambda: (302, {"Location": location}, b"")
    with fetcher() as f, pytest.raises(Refused, match=why) as refused:
        f.get(server.url("/start"))
    assert not refused.value.retryable
    assert [path for path, _ in server.hits] == ["/start"]


def test_the_production_policy_refuses_this_server_without_a_request(server: Server) -> None:
    server.routes["/pdf"] = lambda: (200, {}, PDF)
    with fetcher(policy=UrlPolicy()) as f, pytest.raises(Refused):
        f.get(server.url("/pdf"))
    assert server.hits == []


def test_redirect_loops_end(server: Server) -> None:
    server.routes["/loop"] = lambda: (302, {"Location": "/loop"}, b"")
    with fetcher() as f, pytest.raises(Refused, match="more than 5 redirects"):
        f.get(server.url("/loop"))
    assert len(server.hits) == 6


def test_declared_size_over_the_cap_is_refused(server: Server) -> None:
    server.routes["/big"] = lambda: (200, {}, PDF * 10)
    with fetcher(max_bytes=len(PDF) * 5) as f, pytest.raises(HttpError, match="limit") as error:
        f.get(server.url("/big"))
    assert not error.value.retryable


def test_streamed_size_over_the_cap_is_refused(server: Server) -> None:
    server.routes["/chunked"] = lambda: (200, {"Transfer-Encoding": "chunked"}, PDF * 10)
    with fetcher(max_bytes=len(PDF) * 5) as f, pytest.raises(HttpError, match="more than the"):
        f.get(server.url("/chunked"))


def test_an_html_page_is_not_a_pdf(server: Server) -> None:
    server.routes["/html"] = lambda: (200, {"Content-Type": "text/html"}, b"<html>not here</html>")
    with fetcher() as f, pytest.raises(HttpError, match="not a PDF"):
        f.get(server.url("/html"))


def test_not_found_is_not_retried(server: Server) -> None:
    with fetcher() as f, pytest.raises(HttpError, match="HTTP 404") as error:
        f.get(server.url("/missing"))
    assert not error.value.retryable and len(server.hits) == 1


def test_server_errors_are_retried_with_backoff_within_the_rate_limit(server: Server) -> None:
    answers: Iterator[tuple[int, dict[str, str], bytes]] = iter(
        [(503, {}, b"busy"), (502, {}, b"bad gateway"), (200, {}, PDF)]
    )
    server.routes["/flaky"] = lambda: next(answers)
    with fetcher(interval=1.0) as f:
        assert f.get(server.url("/flaky")) == PDF
    times = [t for _, t in server.hits]
    assert len(times) == 3
    # Admissions are exactly >= 1 s apart (test_fetch_policy); arrival adds network and scheduling
    # jitter (tens of milliseconds on a loaded 2-core machine, once more), so arrivals are held to
    # well over half the interval — unpaced retries would arrive milliseconds apart.
    assert min(b - a for a, b in itertools.pairwise(times)) >= 0.6


def test_retries_give_up_with_the_last_reason(server: Server) -> None:
    server.routes["/down"] = lambda: (503, {}, b"down")
    with fetcher(retries=2) as f, pytest.raises(HttpError, match="HTTP 503") as error:
        f.get(server.url("/down"))
    assert error.value.retryable and len(server.hits) == 3


def test_retry_after_is_honoured(server: Server) -> None:
    answers = iter([(429, {"Retry-After": "1"}, b"slow down"), (200, {}, PDF)])
    server.routes["/polite"] = lambda: next(answers)
    with fetcher() as f:
        assert f.get(server.url("/polite")) == PDF
    (_, first), (_, second) = server.hits
    assert second - first >= 0.95


def test_the_connection_goes_to_the_address_the_policy_checked(server: Server) -> None:
    """The name is resolved by the policy's resolver at connect time too, and the connection goes
    to that address: here "arxiv.org" answers with this loopback server."""
    server.routes["/pdf/1"] = lambda: (200, {}, PDF)
    policy = UrlPolicy(
        hosts=frozenset({"arxiv.org"}),
        schemes=frozenset({"http"}),
        ports=None,
        allow_private=True,
        resolver=lambda _host, _port: ["127.0.0.1"],
    )
    with fetcher(policy=policy) as f:
        assert f.get(f"http://arxiv.org:{server.port}/pdf/1") == PDF
    assert [path for path, _ in server.hits] == ["/pdf/1"]


def test_a_dns_answer_that_changes_after_the_check_is_refused_at_connect(server: Server) -> None:
    """DNS rebinding: the first answer (checked before the request) is public, the one at connect
    time is loopback. The connect-time check refuses it; nothing reaches the server."""
    server.routes["/pdf/1"] = lambda: (200, {}, PDF)
    answers = iter([["151.101.67.42"], ["127.0.0.1"]])
    policy = UrlPolicy(
        hosts=frozenset({"arxiv.org"}),
        schemes=frozenset({"http"}),
        ports=None,
        resolver=lambda _host, _port: next(answers),
    )
    with fetcher(policy=policy) as f, pytest.raises(Refused, match=r"non-public address 127\.0\.0\.1"):
        f.get(f"http://arxiv.org:{server.port}/pdf/1")
    assert server.hits == []
