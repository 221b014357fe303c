"""The polite client's one retry policy, its pacing of every hop and retry, and its limits, against
httpx's MockTransport (the seam production's transport sits in), with the waits recorded instead of
slept. (Against a real server on loopback: test_fetch_http.py; across processes:
tests/integration/test_pacing.py.)"""

from __future__ import annotations

import email.utils
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from coordination.pacing import FilePacer, PacingUnavailable
from ingest.http import HttpError, PoliteClient, Politeness, retry_after

Answer = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """The client's ``sleep``: records the waits; the pacer's clock moves with them."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def client(
    answers: Iterator[httpx.Response] | Answer, folder: Path, recorder: Recorder, **polite: float
) -> tuple[PoliteClient, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers(request) if callable(answers) else next(answers)

    settings: dict[str, float] = {"interval": 0.0, "retries": 3, "backoff": 1.0, "max_wait": 60.0, **polite}
    politeness = Politeness(**settings)  # type: ignore[arg-type]
    http = PoliteClient(
        politeness,
        FilePacer(folder, recorder.clock),
        base_url="https://api.example.org",
        transport=httpx.MockTransport(handler),
        sleep=recorder.sleep,
    )
    return http, seen


def test_5xx_and_429_are_retried_with_exponential_backoff_and_retry_after_wins(tmp_path: Path) -> None:
    rec = Recorder()
    answers = iter(
        [
            httpx.Response(503),
            httpx.Response(502),
            httpx.Response(429, headers={"Retry-After": "7"}),
            httpx.Response(200, json={"ok": True}),
        ]
    )
    http, seen = client(answers, tmp_path, rec)
    assert http.get("/works").json() == {"ok": True}
    assert len(seen) == 4
    first, second, third = rec.waits
    assert 1.0 <= first <= 1.5 and 2.0 <= second <= 2.5  # 1 s doubled, plus up to half of 1 s
    assert third == 7.0  # the server's word, no jitter


def test_what_still_fails_says_why_and_how_often(tmp_path: Path) -> None:
    rec = Recorder()
    http, seen = client(lambda _r: httpx.Response(500, text="boom"), tmp_path, rec, retries=2)
    with pytest.raises(
        HttpError, match=r"https://api.example.org/x: HTTP 500 \(after 3 attempts\)"
    ) as failed:
        http.get("/x")
    assert failed.value.retryable and failed.value.status == 500 and len(seen) == 3
    assert failed.value.reply is not None and failed.value.reply.text == "boom"  # what the server said


def test_a_retry_after_beyond_the_cap_fails_at_once(tmp_path: Path) -> None:
    rec = Recorder()
    http, seen = client(lambda _r: httpx.Response(503, headers={"Retry-After": "3600"}), tmp_path, rec)
    with pytest.raises(HttpError, match="retry after 3600 s, longer than the 60 s we wait") as failed:
        http.get("/x")
    assert len(seen) == 1 and rec.waits == [] and failed.value.retry_after == 3600


def test_other_statuses_come_back_to_the_caller_unretried(tmp_path: Path) -> None:
    rec = Recorder()
    http, seen = client(lambda _r: httpx.Response(404, json={"error": "no such work"}), tmp_path, rec)
    reply = http.get("/works/W1")
    assert (reply.status, reply.ok, reply.json()) == (404, False, {"error": "no such work"})
    assert len(seen) == 1


def test_network_errors_are_retried(tmp_path: Path) -> None:
    rec = Recorder()
    calls: Iterator[httpx.Response | Exception] = iter(
        [httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.Response(200, text="hi")]
    )

    def answer(request: httpx.Request) -> httpx.Response:
        outcome = next(calls)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    http, seen = client(answer, tmp_path, rec)
    assert http.get("/x").text == "hi" and len(seen) == 3 and len(rec.waits) == 2


def test_every_hop_and_every_retry_takes_its_own_slot(tmp_path: Path) -> None:
    rec = Recorder()
    answers = iter(
        [
            httpx.Response(302, headers={"Location": "/b"}),
            httpx.Response(503),
            httpx.Response(301, headers={"Location": "https://api.example.org/c"}),
            httpx.Response(200, text="done"),
        ]
    )
    starts: list[float] = []

    def answer(_request: httpx.Request) -> httpx.Response:
        starts.append(rec.now)
        return next(answers)

    http, seen = client(answer, tmp_path, rec, interval=2.0, backoff=0.5)
    assert http.get("/a").text == "done"
    assert [r.url.path for r in seen] == ["/a", "/b", "/a", "/c"]  # a retry starts from the first URL
    assert http.requests == 4
    assert all(b - a >= 2.0 for a, b in itertools.pairwise(starts)), starts


def test_a_body_over_the_limit_is_refused_and_not_retried(tmp_path: Path) -> None:
    rec = Recorder()
    big = httpx.Response(200, content=b"x" * 5000)
    http, seen = client(lambda _r: big, tmp_path, rec, max_bytes=4096)
    with pytest.raises(HttpError, match="over the 4,096-byte limit") as failed:
        http.get("/big")
    assert not failed.value.retryable and len(seen) == 1


def test_a_pacing_store_that_is_away_is_retried_then_named(tmp_path: Path) -> None:
    class Away:
        def reserve(self, key: str, interval: float) -> float:
            raise PacingUnavailable("cannot reserve a request slot on Redis: connection refused")

    rec = Recorder()
    http = PoliteClient(
        Politeness(interval=1.0, retries=1, backoff=0.1),
        Away(),
        transport=httpx.MockTransport(lambda _r: httpx.Response(200)),
        sleep=rec.sleep,
    )
    with pytest.raises(HttpError, match=r"connection refused \(after 2 attempts\)") as failed:
        http.get("https://api.example.org/x")
    assert failed.value.retryable and http.requests == 0  # nothing was sent unpaced


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        (" 1.5 ", 1.5),
        ("-3", 0.0),
        ("nan", None),
        ("soon", None),
        ("", None),
        (None, None),
        (email.utils.formatdate(1_000_120.0, usegmt=True), 120.0),
        (email.utils.formatdate(999_000.0, usegmt=True), 0.0),  # a date in the past: now
        ("Wed, 21 Oct 2015 07:28:00", None),  # no zone: unusable
    ],
)
def test_retry_after_reads_seconds_and_http_dates(value: str | None, seconds: float | None) -> None:
    assert retry_after(value, now=lambda: 1_000_000.0) == seconds
