"""The arXiv API client against the 20 recorded responses, replayed by a real HTTP server on loopback.

The recordings (``../shared/data/arxiv/api-fixtures``, from arxiv.py's test suite) keep each body as
text that was decoded as Latin-1 ("WÃ¼bben"); encoding it back to Latin-1 gives the exact UTF-8
bytes arXiv sent, which is what the replay server serves. It answers only the recorded requests
(same path and the same query parameters), so a client building a wrong URL gets a 404.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from catalog import arxiv_ids
from catalog.models import Affiliation, Authorship, Paper
from coordination.pacing import pacer
from ingest.__main__ import cli
from ingest.http import ARXIV, HttpError, PoliteClient, Politeness
from ingest.importer import Importer
from ingest.records import PaperRecord, RecordError
from ingest.sources.arxiv_api import ArxivApiError, ArxivClient, Feed
from settings import get_settings
from tests.integration.loopback_http import LoopbackServer, Reply, Request, serve

Key = tuple[str, frozenset[tuple[str, str]]]
FAST = Politeness(interval=0.0, timeout=5.0, retries=2, backoff=0.01, max_wait=5.0)


class Recording:
    def __init__(self, path: Path) -> None:
        data = json.loads(path.read_text())
        url = urlsplit(data["url"])
        self.name = path.name
        self.path = url.path
        self.params = dict(parse_qsl(url.query, keep_blank_values=True))
        self.status: int = data["status_code"]
        self.body: bytes = data["body"].encode("latin-1")

    @property
    def key(self) -> Key:
        return self.path, frozenset(self.params.items())

    def entry_ids(self) -> list[str]:
        return [m.decode() for m in re.findall(rb"<id>http://arxiv.org/abs/([^<]+)</id>", self.body)]


def _key(request: Request) -> Key:
    return request.path, frozenset(request.params)


@pytest.fixture(scope="module")
def recordings(shared_data: Path) -> dict[Key, Recording]:
    found = [Recording(p) for p in sorted((shared_data / "arxiv" / "api-fixtures").glob("*.json"))]
    assert len(found) == 20
    return {r.key: r for r in found}


def _replay(recordings: dict[Key, Recording]) -> Callable[[Request], Reply]:
    """Answer recorded requests exactly; a lookup of several ids that has no recording of its own
    is answered, as arXiv would, with the recorded entries of each id (404 if one is missing)."""
    single = {
        r.params["id_list"]: r
        for r in recordings.values()
        if r.params["id_list"] and "," not in r.params["id_list"] and r.status == 200
    }
    atom = {"Content-Type": "application/atom+xml; charset=utf-8"}

    def handler(request: Request) -> Reply:
        recording = recordings.get(_key(request))
        if recording is not None:
            return Reply(recording.status, recording.body, atom)
        query = request.query
        ids = query.get("id_list", "").split(",")
        if query.get("search_query") or not all(i in single for i in ids):
            return Reply(404, b"no recording for this request")
        entries = [e for i in ids for e in re.findall(rb"<entry>.*?</entry>", single[i].body, re.S)]
        head = single[ids[0]].body.split(b"<entry>", 1)[0]
        head = re.sub(rb"<opensearch:totalResults>\d+<", b"<opensearch:totalResults>%d<" % len(entries), head)
        return Reply(200, head + b"".join(entries) + b"</feed>", atom)

    return handler


@pytest.fixture
def arxiv(recordings: dict[Key, Recording]) -> Iterator[LoopbackServer]:
    with serve(_replay(recordings)) as server:
        yield server


def _client(server: LoopbackServer, *, page_size: int = 100, politeness: Politeness = FAST) -> ArxivClient:
    """A client as production builds it, for this server (the pace kept in the test's data dir)."""
    http = PoliteClient(politeness, pacer(get_settings()), pace_key=ARXIV)
    return ArxivClient(http, base_url=server.url + "/api/query", page_size=page_size)


def _records(feeds: Iterator[Feed]) -> list[PaperRecord]:
    items = [item for feed in feeds for item in feed.items]
    assert all(isinstance(i, PaperRecord) for i in items), items
    return items  # type: ignore[return-value]


# -- every recording, through real HTTP -------------------------------------------------------------


def test_every_recorded_response_replays_through_the_client(
    arxiv: LoopbackServer, recordings: dict[Key, Recording]
) -> None:
    client = _client(arxiv)
    for recording in recordings.values():
        p = recording.params
        call = {
            "search_query": p["search_query"],
            "id_list": p["id_list"].split(",") if p["id_list"] else [],
            "start": int(p["start"]),
            "max_results": int(p["max_results"]),
        }
        if recording.status == 400:
            with pytest.raises(ArxivApiError, match="HTTP 400: incorrect id format for abc"):
                client.query(**call)
            continue
        feed = client.query(**call)
        expected_ids = recording.entry_ids()
        records = _records(iter([feed]))
        assert [r.arxiv_id for r in records] == [arxiv_ids.canonical(i) for i in expected_ids], recording.name
        total = int(re.search(rb"<opensearch:totalResults>(\d+)<", recording.body)[1])  # type: ignore[index]
        assert (feed.total, feed.start) == (total, call["start"])
        for record, raw in zip(feed.items, expected_ids, strict=True):
            assert isinstance(record, PaperRecord)
            assert record.latest_version == arxiv_ids.parse(raw).version
            assert record.title and record.authors and record.categories
    # Each recording was asked for exactly once and nothing else was asked.
    assert sorted(_key(r) for r in arxiv.requests) == sorted(recordings)
    client.close()


# -- what an entry becomes ----------------------------------------------------------------------------


def test_an_entry_becomes_a_full_record(arxiv: LoopbackServer) -> None:
    with _client(arxiv) as client:
        (record,) = _records(client.fetch(["1707.08567"]))
    assert record.arxiv_id == "1707.08567"
    assert record.title == "Proceedings of Workshop AEW10: Concepts in Information Theory and Communications"
    assert record.abstract.startswith('The 10th Asia-Europe workshop in "Concepts in Information Theory')
    assert len(record.authors) == 34
    assert record.authors[:2] == ("Kees A. Schouhamer Immink", "Stan Baggen")
    assert record.authors[-2:] == ("Dirk Wübben", "Hirosuke Yamamoto")  # UTF-8 decoded, not mojibake
    assert record.categories == ("cs.IT",)
    assert record.comments == "44 pages, editors for the proceedings: Yanling Chen and A. J. Han Vinck"
    assert record.versions[0].number == 1
    assert record.versions[0].submitted_at == dt.datetime(2017, 7, 27, 8, 18, 33, tzinfo=dt.UTC)
    assert record.abs_url == "https://arxiv.org/abs/1707.08567v1"
    assert record.pdf_url == "https://arxiv.org/pdf/1707.08567v1"
    assert (record.doi, record.journal_ref, record.affiliations) == (None, None, {})


def test_old_style_ids_journal_refs_and_affiliations(arxiv: LoopbackServer) -> None:
    with _client(arxiv) as client:
        (astro,) = _records(client.fetch(["astro-ph/0601001"]))
        (quant,) = _records(client.fetch(["arXiv:quant-ph/0201082v1"]))
    assert astro.arxiv_id == "astro-ph/0601001"
    assert astro.journal_ref == "ActaAstron.56:1-50,2006"
    assert astro.affiliations == {
        "Andrew Gould": ("Ohio State",),
        "Susan Dorsher": ("Ohio State",),
        "B. Scott Gaudi": ("CfA",),
        "Andrzej Udalski": ("Warsaw University Observatory",),
    }
    assert astro.abstract.startswith("We derive the frequencies")  # leading blanks collapsed
    assert "Gould & Morgan (2003)" in astro.abstract and "V_max<17.5" in astro.abstract  # entities decoded
    assert quant.arxiv_id == "quant-ph/0201082"
    assert quant.categories == ("quant-ph", "cs.PL")  # primary first
    assert quant.latest_version == 1


def test_versions_come_from_the_id_and_the_dates(arxiv: LoopbackServer) -> None:
    with _client(arxiv) as client:
        feed = client.query(search_query="testing", max_results=100)
    by_id = {r.arxiv_id: r for r in feed.items if isinstance(r, PaperRecord)}
    nine = by_id["2409.05654"]  # v9: first and latest dated, the ones between known by number only
    assert [v.number for v in nine.versions] == list(range(1, 10))
    assert nine.versions[0].submitted_at == dt.datetime(2024, 9, 9, 14, 21, 19, tzinfo=dt.UTC)
    assert nine.versions[-1].submitted_at == dt.datetime(2025, 5, 8, 20, 52, 40, tzinfo=dt.UTC)
    assert all(v.submitted_at is None for v in nine.versions[1:-1])
    two = by_id["2005.14124"]
    assert [(v.number, v.submitted_at.date()) for v in two.versions if v.submitted_at] == [
        (1, dt.date(2020, 5, 28)),
        (2, dt.date(2020, 7, 16)),
    ]
    first = by_id["2202.12139"]
    assert first.doi == "10.1109/ICSTW55395.2022.00035"
    assert first.journal_ref and first.journal_ref.startswith("Artificial Intelligence in Software Testing")
    assert first.categories == ("cs.SE", "cs.LG")


# -- errors and empty results ------------------------------------------------------------------------


def test_a_rejected_query_is_a_clear_error(arxiv: LoopbackServer) -> None:
    with _client(arxiv) as client:
        with pytest.raises(ArxivApiError) as raised:
            client.query(id_list=["abc"])
        assert "HTTP 400" in str(raised.value) and "incorrect id format for abc" in str(raised.value)
        # fetch() checks ids itself, before any request.
        with pytest.raises(arxiv_ids.InvalidArxivId, match="not an arXiv id: 'abc'"):
            list(client.fetch(["1605.08386", "abc"]))
    assert [r.query["id_list"] for r in arxiv.requests] == ["abc"]


def test_empty_results(arxiv: LoopbackServer, recordings: dict[Key, Recording]) -> None:
    with _client(arxiv) as client:
        assert client.query(id_list=["0000.0000"]) == Feed(total=0, start=0, items=[])
        assert client.query(id_list=["0808.05394"]).items == []
        both = client.query(id_list=["0808.05394", "1707.08567"])
        assert [r.arxiv_id for r in _records(iter([both]))] == ["1707.08567"]

    # An id arXiv does not know (the recorded empty feed, served for any lookup) is reported.
    empty = next(r for r in recordings.values() if r.params["id_list"] == "0000.0000").body
    with serve(lambda _r: Reply(200, empty)) as server, _client(server) as client:
        (feed,) = client.fetch(["2401.00001v2"])
    assert feed.items == [RecordError("arXiv API (ids)", 1, "2401.00001v2: arXiv has no such paper")]


def test_unreadable_responses_are_clear_errors() -> None:
    answers = iter([Reply(200, b"<html>maintenance</html"), Reply(200, b"<rss/>"), Reply(404, b"gone")])
    with serve(lambda _r: next(answers)) as server, _client(server) as client:
        with pytest.raises(ArxivApiError, match="not well-formed XML"):
            client.query(id_list=["1605.08386"])
        with pytest.raises(ArxivApiError, match="expected an Atom feed, got <rss>"):
            client.query(id_list=["1605.08386"])
        with pytest.raises(ArxivApiError, match="HTTP 404"):  # not retried: a 404 will not pass
            client.query(id_list=["1605.08386"])
        assert len(server.requests) == 3


def test_a_bad_entry_is_reported_and_the_rest_kept(recordings: dict[Key, Recording]) -> None:
    body = next(r for r in recordings.values() if r.name.startswith("q_testing_s0_m10_")).body
    broken = body.replace(
        b"<id>http://arxiv.org/abs/2405.13786v1</id>", b"<id>http://arxiv.org/abs/nonsense</id>"
    )
    with serve(lambda _r: Reply(200, broken)) as server, _client(server) as client:
        feed = client.query(search_query="testing", max_results=10)
    errors = [i for i in feed.items if isinstance(i, RecordError)]
    assert len(feed.items) == 10
    assert [(e.line, "not an arXiv id" in e.reason) for e in errors] == [(2, True)]


# -- paging ---------------------------------------------------------------------------------------


def test_a_search_pages_through_the_results(arxiv: LoopbackServer, recordings: dict[Key, Recording]) -> None:
    with _client(arxiv, page_size=10) as client:
        feeds = list(client.search("testing", max_results=60))
    assert [(r.query["start"], r.query["max_results"]) for r in arxiv.requests] == [
        (str(s), "10") for s in range(0, 60, 10)
    ]
    assert [f.start for f in feeds] == list(range(0, 60, 10))
    ids = [r.arxiv_id for f in feeds for r in f.items]  # type: ignore[union-attr]
    hundred = next(
        r for r in recordings.values() if r.params["max_results"] == "100" and r.params["search_query"]
    )
    assert ids == [arxiv_ids.canonical(i) for i in hundred.entry_ids()][:60]

    arxiv.requests.clear()
    with _client(arxiv, page_size=15) as client:
        feeds = list(client.search("testing", max_results=15, start=9))
    assert [(r.query["start"], r.query["max_results"]) for r in arxiv.requests] == [("9", "15")]
    assert len(feeds[0].items) == 15


def test_an_empty_page_inside_the_results_is_asked_again(recordings: dict[Key, Recording]) -> None:
    page = next(r for r in recordings.values() if r.name.startswith("q_testing_s10_m10_")).body
    hollow = re.sub(rb"<entry>.*</entry>", b"", page, flags=re.S)  # arXiv's occasional empty page
    answers = iter([hollow, page])
    with serve(lambda _r: Reply(200, next(answers))) as server, _client(server, page_size=10) as client:
        feeds = list(client.search("testing", max_results=10, start=10))
    assert len(server.requests) == 2 and len(feeds[0].items) == 10

    with (
        serve(lambda _r: Reply(200, hollow)) as server,
        _client(server, page_size=10) as client,
        pytest.raises(ArxivApiError, match="empty page at 10 of 214881 results"),
    ):
        list(client.search("testing", max_results=10, start=10))
    assert len(server.requests) == FAST.retries + 1


# -- pacing and retries ---------------------------------------------------------------------------


def test_requests_are_spaced_across_clients_and_threads(recordings: dict[Key, Recording]) -> None:
    body = next(iter(recordings.values())).body

    def slow(_r: Request) -> Reply:
        return Reply(200, body, delay=0.05)  # long enough for overlapping requests to show

    interval = 0.4
    with serve(slow) as server:
        polite = Politeness(interval=interval, timeout=5.0, retries=0)
        clients = [_client(server, politeness=polite) for _ in range(3)]

        def work(client: ArxivClient) -> None:
            for _ in range(2):
                client.query(id_list=["0000.0000"])

        threads = [threading.Thread(target=work, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for c in clients:
            c.close()
    arrivals = sorted(r.arrived for r in server.requests)
    assert len(arrivals) == 6
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    # The slots are one interval apart; an arrival trails its slot by the sender's wake-up latency,
    # tens of milliseconds on this loaded machine (see tests/integration/test_pacing.py).
    assert min(gaps) >= interval * 0.9, gaps
    assert server.in_flight_peak[0] == 1  # one connection at a time


def test_5xx_and_429_are_retried_with_backoff_and_retry_after(recordings: dict[Key, Recording]) -> None:
    body = next(r for r in recordings.values() if r.params["id_list"] == "1605.08386").body
    answers = iter([Reply(503), Reply(502), Reply(429, headers={"Retry-After": "1"}), Reply(200, body)])
    with serve(lambda _r: next(answers)) as server:
        polite = Politeness(interval=0.0, timeout=5.0, retries=3, backoff=0.05, max_wait=5.0)
        with _client(server, politeness=polite) as client:
            (record,) = _records(client.fetch(["1605.08386"]))
    assert record.arxiv_id == "1605.08386"
    at = [r.arrived for r in server.requests]
    assert len(at) == 4
    assert at[1] - at[0] >= 0.05  # backoff 0.05 s, then 0.1 s
    assert at[2] - at[1] >= 0.1
    assert at[3] - at[2] >= 1.0  # Retry-After: 1 wins over the 0.2 s backoff


def test_failures_that_persist_end_with_a_clear_error() -> None:
    with serve(lambda _r: Reply(500)) as server, _client(server) as client:
        with pytest.raises(HttpError, match=r"HTTP 500 \(after 3 attempts\)"):
            client.query(id_list=["1605.08386"])
        assert len(server.requests) == 3

    with serve(lambda _r: Reply(503, headers={"Retry-After": "3600"})) as server, _client(server) as client:
        with pytest.raises(HttpError, match="retry after 3600 s, longer than the 5 s we wait"):
            client.query(id_list=["1605.08386"])
        assert len(server.requests) == 1

    slow = Politeness(interval=0.0, timeout=0.2, retries=1, backoff=0.01)
    with serve(lambda _r: Reply(200, b"", delay=1.0)) as server, _client(server, politeness=slow) as client:
        with pytest.raises(HttpError, match=r"ReadTimeout.*\(after 2 attempts\)"):
            client.query(id_list=["1605.08386"])
        assert len(server.requests) == 2

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    http = PoliteClient(FAST, pacer(get_settings()), pace_key=ARXIV)
    client = ArxivClient(http, base_url=f"http://127.0.0.1:{port}/api/query")
    with pytest.raises(HttpError, match="ConnectError"):
        client.query(id_list=["1605.08386"])


# -- into the catalogue ---------------------------------------------------------------------------


def test_fetched_papers_import_once(engine: Engine, arxiv: LoopbackServer) -> None:
    ids = ["1707.08567", "1605.08386", "astro-ph/0601001", "quant-ph/0201082v1", "2104.12255v1"]
    with _client(arxiv) as client:
        first = Importer(engine, source="arxiv-api").run(i for f in client.fetch(ids) for i in f.items)
        again = Importer(engine, source="arxiv-api").run(i for f in client.fetch(ids) for i in f.items)
    assert (first.added, first.failed) == (5, 0)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 5)
    with Session(engine) as s:
        paper = s.execute(select(Paper).where(Paper.arxiv_id == "astro-ph/0601001")).scalar_one()
        assert (paper.latest_version, paper.published_on, paper.source) == (
            1,
            dt.date(2006, 1, 2),
            "arxiv-api",
        )
        assert paper.journal_ref == "ActaAstron.56:1-50,2006"
        assert [a.name for a in paper.authorships][:2] == ["Andrew Gould", "Susan Dorsher"]
        places = s.execute(
            select(Affiliation.author_position, Affiliation.raw)
            .where(Affiliation.paper_id == paper.id)
            .order_by(Affiliation.author_position)
        ).all()
        assert [tuple(p) for p in places] == [
            (0, "Ohio State"),
            (1, "Ohio State"),
            (2, "CfA"),
            (3, "Warsaw University Observatory"),
        ]
        assert s.execute(select(func.count()).select_from(Authorship)).scalar_one() == 34 + 2 + 4 + 1 + 1


def test_search_results_import_into_the_catalogue(engine: Engine, arxiv: LoopbackServer) -> None:
    with _client(arxiv, page_size=10) as client:
        summary = Importer(engine, source="arxiv-api", batch_size=10).run(
            i for f in client.search("testing", max_results=60) for i in f.items
        )
    assert (summary.added, summary.failed) == (60, 0)
    with Session(engine) as s:
        nine = s.execute(select(Paper).where(Paper.arxiv_id == "2409.05654")).scalar_one()
        assert nine.latest_version == 9
        assert (nine.published_on, nine.updated_on) == (dt.date(2024, 9, 9), dt.date(2025, 5, 8))
        assert [v.version for v in nine.versions] == list(range(1, 10))


# -- the command ----------------------------------------------------------------------------------


@pytest.fixture
def arxiv_env(arxiv: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> LoopbackServer:
    monkeypatch.setenv("WOVEPAPER_ARXIV_API_URL", arxiv.url + "/api/query")
    monkeypatch.setenv("WOVEPAPER_ARXIV_INTERVAL_SECONDS", "0")
    monkeypatch.setenv("WOVEPAPER_ARXIV_BACKOFF_SECONDS", "0.01")
    get_settings.cache_clear()
    return arxiv


def test_the_arxiv_command_imports_ids_and_searches(
    arxiv_env: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["arxiv", "1605.08386", "astro-ph/0601001", "2104.12255v1"])
    assert result.exit_code == 0, result.output
    assert "3 added, 0 updated, 0 unchanged, 0 failed" in result.output

    monkeypatch.setenv("WOVEPAPER_ARXIV_PAGE_SIZE", "10")
    get_settings.cache_clear()
    result = runner.invoke(cli, ["arxiv", "--query", "testing", "--max", "30"])
    assert result.exit_code == 0, result.output
    assert "30 added, 0 updated, 0 unchanged, 0 failed" in result.output
    assert [r.query["start"] for r in arxiv_env.requests[-3:]] == ["0", "10", "20"]


def test_the_arxiv_command_refuses_bad_input(arxiv_env: LoopbackServer) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["arxiv", "1605.08386", "abc"])
    assert result.exit_code == 2
    assert "not an arXiv id: 'abc'" in result.output
    assert runner.invoke(cli, ["arxiv"]).exit_code == 2
    assert runner.invoke(cli, ["arxiv", "1605.08386", "--query", "x"]).exit_code == 2
    assert arxiv_env.requests == []


def test_the_arxiv_command_keeps_what_it_got_when_arxiv_fails(
    arxiv_env: LoopbackServer, recordings: dict[Key, Recording], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WOVEPAPER_ARXIV_PAGE_SIZE", "10")
    monkeypatch.setenv("WOVEPAPER_ARXIV_RETRIES", "1")
    get_settings.cache_clear()
    replay = _replay(recordings)
    arxiv_env.set_handler(lambda r: Reply(503) if r.query.get("start") == "20" else replay(r))
    result = CliRunner().invoke(cli, ["arxiv", "--query", "testing", "--max", "30"])
    assert result.exit_code == 1
    assert "harvest stopped" in result.output and "HTTP 503 (after 2 attempts)" in result.output
    assert "20 added, 0 updated, 0 unchanged, 0 failed" in result.output
