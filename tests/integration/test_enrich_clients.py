"""The OpenAlex, Semantic Scholar and ROR clients against loopback peers serving the real recorded
responses (see ``enrichment_peers``): parsing, paging, batching, errors, politeness."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from coordination.pacing import pacer
from ingest.enrich.openalex import OpenAlexClient
from ingest.enrich.ror import RorClient, read_dump
from ingest.enrich.semanticscholar import SemanticScholarClient
from ingest.enrich.transport import (
    JsonClient,
    NotFound,
    RateLimited,
    RequestRejected,
    ServiceUnavailable,
)
from ingest.http import Politeness
from ingest.records import RecordError
from settings import EnrichmentSettings, get_settings
from tests.integration.enrichment_peers import (
    OpenAlexObjects,
    Peer,
    RorObjects,
    load_cassette,
    load_cassettes,
)

S2 = "api.semanticscholar.org"


def _settings(**values: object) -> EnrichmentSettings:
    fast = {
        "openalex_rate_limit": 1000.0,
        "semantic_scholar_rate_limit": 1000.0,
        "ror_rate_limit": 1000.0,
        "enrichment_timeout": 5.0,
        "enrichment_max_retries": 2,
        "enrichment_backoff": 0.01,
    }
    return EnrichmentSettings(**{**fast, **values})  # type: ignore[arg-type]


def _recorded(path: Path, index: int = 0) -> tuple[dict[str, list[str]], object]:
    """(query parameters, response JSON) of one recorded interaction, read from the cassette."""
    item = yaml.safe_load(path.read_text())["interactions"][index]
    response = item["response"]
    body = response["body"]["string"] if "body" in response else response["content"]
    return parse_qs(urlsplit(item["request"]["uri"]).query), json.loads(body)


@pytest.fixture(scope="module")
def s2_peer(shared_data: Path) -> Iterator[Peer]:
    cassettes = [*(shared_data / "enrichment" / "semanticscholar").glob("*.yaml")]
    cassettes += (shared_data / "enrichment" / "paperqa-cassettes").glob("*.yaml")
    peer = Peer(interactions=[i for i in load_cassettes(cassettes) if i.host == S2])
    yield peer
    peer.close()


@pytest.fixture
def s2(s2_peer: Peer) -> Iterator[SemanticScholarClient]:
    client = SemanticScholarClient(
        _settings(semantic_scholar_base_url=s2_peer.url + "/graph/v1", semantic_scholar_api_key="test-key"),
        pacer(get_settings()),
    )
    yield client
    client.close()


# -- Semantic Scholar ---------------------------------------------------------------------------------


def test_s2_author_and_api_key(s2: SemanticScholarClient, s2_peer: Peer) -> None:
    author = s2.author("2262347", fields=["name"])
    assert (author.author_id, author.name) == ("2262347", "A. Turing")
    assert author.h_index is None  # not asked for: unknown, not 0
    assert s2_peer.seen[-1].headers["x-api-key"] == "test-key"
    assert s2_peer.seen[-1].headers["user-agent"].startswith("wovepaper/")


def test_s2_batches_keep_order_and_unknown_ids(s2: SemanticScholarClient, shared_data: Path) -> None:
    folder = shared_data / "enrichment" / "semanticscholar"
    authors = s2.authors(["0", "3234559", "1726629", "1711844"], fields=["name"])
    _q, recorded = _recorded(folder / "test_get_authors_not_found_warning.yaml")
    assert authors[0] is None
    assert [a.name for a in authors[1:] if a] == [r["name"] for r in recorded[1:]]  # type: ignore[index]

    query, recorded = _recorded(folder / "test_get_papers_not_found_warning.yaml")
    ids = [
        "CorpusId:211530585",
        "CorpusId:470667",
        "10.2139/ssrn.2250500",
        "0f40b1f08821e22e859c6050916cec3667778613",
    ]
    papers = s2.papers(ids, fields=query["fields"][0].split(","))
    assert papers[0] is None and all(papers[1:])
    assert [(p.paper_id, p.citation_count) for p in papers[1:] if p] == [
        (r["paperId"], r["citationCount"])
        for r in recorded[1:]  # type: ignore[index]
    ]
    assert all(p.authors for p in papers[1:] if p)


def test_s2_paging_follows_next(s2: SemanticScholarClient, s2_peer: Peer, shared_data: Path) -> None:
    cassette = load_cassette(shared_data / "enrichment" / "semanticscholar" / "test_get_author_papers.yaml")
    expected = [p["paperId"] for item in cassette for p in json.loads(item.payload)["data"]]
    before = len(s2_peer.seen)
    papers = list(s2.author_papers("1723755", fields=["title"]))
    assert [p.paper_id for p in papers] == expected and len(expected) > 800
    assert len(s2_peer.seen) - before == len(cassette) == 9


def test_s2_paper_authors_with_profiles(s2: SemanticScholarClient, shared_data: Path) -> None:
    path = shared_data / "enrichment" / "semanticscholar" / "test_get_paper_authors.yaml"
    query, recorded = _recorded(path)
    authors = s2.paper_authors("10.2139/ssrn.2250500", fields=query["fields"][0].split(","))
    assert [(a.name, a.h_index, a.paper_count) for a in authors] == [
        (r["name"], r["hIndex"], r["paperCount"])
        for r in recorded["data"]  # type: ignore[index]
    ]
    assert authors[0].external_ids == {"DBLP": ["Esther Duflo"]} and authors[0].orcid is None


def test_s2_search_and_title_match(s2: SemanticScholarClient, shared_data: Path) -> None:
    found = list(s2.search_authors("turing", fields=["name"]))
    assert len(found) == 59 and found[0].name == "A. Turing"
    path = shared_data / "enrichment" / "paperqa-cassettes" / "test_arxiv_doi_is_used_when_available.yaml"
    query, recorded = _recorded(path, index=1)
    paper = s2.match_title("Attention is All you Need", fields=query["fields"][0].split(","))
    assert paper.arxiv_id == "1706.03762"
    assert paper.citation_count == recorded["data"][0]["citationCount"]  # type: ignore[index]
    assert [a.name for a in paper.authors][:2] == ["Ashish Vaswani", "Noam M. Shazeer"]


def test_s2_errors_are_narrow_and_say_why(
    s2: SemanticScholarClient, s2_peer: Peer, shared_data: Path
) -> None:
    with pytest.raises(NotFound, match="Paper with id 0 not found"):
        s2.paper("0", fields=list("title"))
    with pytest.raises(NotFound, match="Author with id 0 not found"):
        s2.author("0", fields=list("name"))
    before = len(s2_peer.seen)
    with pytest.raises(RequestRejected, match="Unrecognized or unsupported fields") as rejected:
        s2.paper("10.1093/mind/lix.236.433", fields=["unknown"])
    assert rejected.value.status == 400 and len(s2_peer.seen) - before == 1  # a 400 is never retried
    query, _ = _recorded(shared_data / "enrichment" / "semanticscholar" / "test_debug.yaml")
    with pytest.raises(RequestRejected, match="Forbidden"):
        s2.papers(
            ["CorpusId:470667", "10.2139/ssrn.2250500", "0f40b1f08821e22e859c6050916cec3667778613"],
            fields=query["fields"][0].split(","),
        )
    path = shared_data / "enrichment" / "paperqa-cassettes" / "test_bad_titles.yaml"
    query, _ = _recorded(path, index=1)
    with pytest.raises(NotFound):
        s2.match_title("askldjrq3rjaw938h", fields=query["fields"][0].split(","))


def test_retries_429_and_5xx_then_gives_up(s2_peer: Peer) -> None:
    delays: list[float] = []
    settings = _settings(
        semantic_scholar_base_url=s2_peer.url + "/graph/v1", enrichment_max_retries=2, enrichment_backoff=0.5
    )
    client = SemanticScholarClient(settings, pacer(get_settings()), sleep=delays.append)
    s2_peer.fail_next(1, 429, {"Retry-After": "7"})
    s2_peer.fail_next(1, 503)
    assert client.author("2262347", fields=["name"]).name == "A. Turing"
    backoffs = [d for d in delays if d >= 0.5]
    assert backoffs[0] == 7.0  # Retry-After wins
    assert 1.0 <= backoffs[1] <= 1.25  # then 0.5 s doubled, with jitter
    s2_peer.fail_next(3, 429)
    with pytest.raises(RateLimited):
        client.author("2262347", fields=["name"])
    s2_peer.fail_next(3, 502, body=b"<html>bad gateway</html>")
    with pytest.raises(ServiceUnavailable, match="bad gateway"):
        client.author("2262347", fields=["name"])
    client.close()


def test_timeouts_become_service_unavailable() -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers
    port = silent.getsockname()[1]
    polite = Politeness(interval=0.001, timeout=0.2, retries=1, backoff=0.01)
    http = JsonClient("OpenAlex", f"http://127.0.0.1:{port}", polite, pacer(get_settings()))
    started = time.perf_counter()
    with pytest.raises(ServiceUnavailable, match="Timeout"):
        http.get("/works/W1")
    assert http.requests == 2 and time.perf_counter() - started < 3
    http.close()
    silent.close()


def test_rate_limit_spaces_requests(s2_peer: Peer) -> None:
    polite = Politeness(interval=1 / 20, timeout=5, retries=0, backoff=1)
    http = JsonClient("S2", s2_peer.url + "/graph/v1", polite, pacer(get_settings()))
    started = time.perf_counter()
    for _ in range(6):
        http.get("/author/2262347", {"fields": "name"})
    assert time.perf_counter() - started >= 5 / 20
    http.close()


# -- OpenAlex ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def openalex_peer(shared_data: Path) -> Iterator[Peer]:
    data = shared_data / "enrichment"
    recorded = [
        i for i in load_cassettes((data / "paperqa-cassettes").glob("*.yaml")) if i.host == "api.openalex.org"
    ]
    peer = Peer(interactions=recorded, fallback=OpenAlexObjects(data))
    yield peer
    peer.close()


@pytest.fixture
def openalex(openalex_peer: Peer) -> Iterator[OpenAlexClient]:
    client = OpenAlexClient(
        _settings(
            openalex_base_url=openalex_peer.url, openalex_mailto="team@example.org", openalex_api_key="k1"
        ),
        pacer(get_settings()),
    )
    yield client
    client.close()


def test_openalex_title_search_parses_authorships(openalex: OpenAlexClient, openalex_peer: Peer) -> None:
    count, works, _cursor = openalex.works(
        filter="title.search:PaperQA: Retrieval-Augmented Generative Agent for Scientific Research"
    )
    assert count == 1
    work = works[0]
    assert (work.id, work.arxiv_id, work.doi) == ("W4389761608", "2312.07559", "10.48550/arxiv.2312.07559")
    assert [a.author_position for a in work.authorships] == ["first", *["middle"] * 4, "last"]
    assert (
        work.authorships[0].raw_name == "Lála, Jakub" and work.authorships[0].orcid == "0000-0002-5424-5260"
    )
    assert work.authorships[2].orcid is None
    sent = dict(openalex_peer.seen[-1].query)
    assert (sent["mailto"], sent["api_key"]) == ("team@example.org", "k1")


def test_openalex_doi_lookup_and_not_found(openalex: OpenAlexClient, shared_data: Path) -> None:
    path = shared_data / "enrichment" / "paperqa-cassettes" / "test_doi_search[paper_attributes1].yaml"
    recorded = next(i for i in load_cassette(path) if i.host == "api.openalex.org")
    work = openalex.work("10.1023/a:1007154515475")
    assert work.cited_by_count == json.loads(recorded.payload)["cited_by_count"]
    assert work.authorships and work.arxiv_id is None
    # ``select`` is honoured: only the fields asked for come back, so nothing else is known.
    slim = openalex.work("10.1023/a:1007154515475", select=["id", "doi"])
    assert (slim.id, slim.doi) == (work.id, work.doi)
    assert slim.cited_by_count is None and slim.authorships == ()
    with pytest.raises(NotFound) as missing:
        openalex.work("10.1046/j.1365-2699.2003.00795", select=["open_access", "doi"])
    assert missing.value.status == 404 and "Not Found" in missing.value.message


def test_openalex_authors(openalex: OpenAlexClient) -> None:
    priem = openalex.author("A5023888391")
    assert (priem.h_index, priem.works_count, priem.cited_by_count) == (17, 62, 3890)
    assert priem.orcid == "0000-0001-6187-6610" and not priem.is_deleted
    first_institution, years = priem.affiliations[0]
    assert (first_institution.ror_id, first_institution.name) == ("02nr0ka47", "OurResearch")
    assert years == (2019, 2021, 2022, 2023)
    assert openalex.author("A5317838346").is_deleted
    older = openalex.author("A2150889177")  # an older answer: no summary_stats, one last institution
    assert older.h_index is None and older.works_count == 523
    assert [i.ror_id for i, _ in older.affiliations] == ["05dxps055"]
    with pytest.raises(NotFound):
        openalex.author("A0000000001")


def test_openalex_batches_dois_in_one_request(openalex: OpenAlexClient, openalex_peer: Peer) -> None:
    before = len(openalex_peer.seen)
    found = openalex.works_by_doi(
        ["https://doi.org/10.7717/PEERJ.4375", "10.48550/arXiv.2312.07559", "10.1/none"]
    )
    assert sorted(found) == ["10.48550/arxiv.2312.07559", "10.7717/peerj.4375"]
    assert found["10.7717/peerj.4375"].id == "W2741809807"
    assert len(openalex_peer.seen) - before == 1
    assert openalex.institution("I27837315").ror_id == "00jmfr291"


def test_openalex_asks_for_each_doi_once_fifty_at_a_time(
    openalex: OpenAlexClient, openalex_peer: Peer
) -> None:
    dois = [f"10.1/none-{n}" for n in range(101)]
    before = len(openalex_peer.seen)
    assert openalex.works_by_doi([*dois, *(d.upper() for d in dois[:10]), ""]) == {}
    assert len(openalex_peer.seen) - before == 3  # 101 distinct DOIs: 50 + 50 + 1


# -- ROR -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ror_peer(shared_data: Path) -> Iterator[Peer]:
    peer = Peer(fallback=RorObjects(shared_data / "enrichment"))
    yield peer
    peer.close()


def test_ror_client(ror_peer: Peer) -> None:
    client = RorClient(
        _settings(ror_base_url=ror_peer.url + "/v2", ror_client_id="client-1"), pacer(get_settings())
    )
    stanford = client.organization("https://ror.org/00f54p054")
    assert (stanford.name, stanford.country_code, stanford.status) == ("Stanford University", "US", "active")
    assert "SU" in stanford.acronyms and stanford.website
    assert ror_peer.seen[-1].headers["client-id"] == "client-1"
    with pytest.raises(NotFound, match="does not exist"):
        client.organization("0000aaa00")
    with pytest.raises(ValueError, match="not a ROR id"):
        client.organization("Stanford")
    total, records = client.search("Monash")
    assert ror_peer.seen[-1].query == [("query", "Monash")]
    assert records[0].name == "Monash University" and total == len(records) >= 1
    assert all(any("monash" in name.lower() for name, _kind in r.names()) for r in records)
    total, universities = client.search("university")
    assert total > 20 and len(universities) == 20  # one page of the many
    total, page_two = client.search("university", page=2)
    assert ror_peer.seen[-1].query == [("page", "2"), ("query", "university")]
    assert len(page_two) == 20 and not {r.ror_id for r in universities} & {r.ror_id for r in page_two}
    assert client.search("qxzvbnm") == (0, [])
    client.close()


def test_ror_dump_reports_bad_lines(shared_data: Path, tmp_path: Path) -> None:
    real = (shared_data / "enrichment" / "ror" / "ror_v2_records_from_ror-records_releases.jsonl").open()
    lines = [
        real.readline(),
        "{not json\n",
        json.dumps({"id": "https://ror.org/000025p04", "name": "v1"}) + "\n",
    ]
    real.close()
    path = tmp_path / "dump.jsonl"
    path.write_text("".join(lines))
    items = list(read_dump(path))
    assert items[0].ror_id == "000025p04"  # type: ignore[union-attr]
    errors = [i for i in items if isinstance(i, RecordError)]
    assert [e.line for e in errors] == [2, 3]
    assert "v1 record" in errors[1].reason
