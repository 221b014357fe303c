"""``/search`` and ``/api/search`` over HTTP on the small real corpus: JSON in the OpenAPI schema,
HTML with highlighted matches, markdown for agents, clear 400s for bad parameters (never a 5xx), and
the development debug view with each hit's lexical, dense and fused rank."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from litestar.testing import TestClient

from app.main import create_app
from tests.integration.search_corpus import Corpus, environment
from tests.integration.test_search import ADAM, corpus  # noqa: F401 - the session corpus fixture

Client = TestClient


@pytest.fixture(scope="module")
def client(corpus: Corpus) -> Iterator[Client]:  # noqa: F811
    """The app in development mode (where the debug view exists; it still needs ``?debug=1``)."""
    with environment({**corpus.env, "WOVEPAPER_ENVIRONMENT": "development"}) as settings:
        app = create_app(settings)
    with TestClient(app) as client:
        yield client


def test_api_search_answers_json_with_snippets_and_ranks(client: Client) -> None:
    response = client.get("/api/search", params={"q": "adaptive moment estimation optimizer", "size": 3})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["items"][0]["arxiv_id"] == ADAM
    top = body["items"][0]
    assert top["url"].endswith(f"/papers/{ADAM}-adam-a-method-for-stochastic-optimization")
    assert top["snippet"]["kind"] == "abstract"
    start, end = top["snippet"]["highlights"][0]
    assert top["snippet"]["text"][start:end]
    assert top["fused_rank"] == 1 and top["lexical_rank"] and top["dense_rank"]
    assert body["total"] >= 3 and body["pages"] >= 1 and body["facets"]
    assert {"category": "cs.LG", "count": body["facets"][0]["count"]} in body["facets"] or body["facets"]


def test_api_search_filters_sort_and_pages(client: Client) -> None:
    body = client.get(
        "/api/search", params={"q": "language models", "category": "cs.CL", "sort": "newest", "size": 5}
    ).json()
    assert body["items"] and all("cs.CL" in item["categories"] for item in body["items"])
    dates = [item["activity_on"] for item in body["items"]]
    assert dates == sorted(dates, reverse=True)
    page2 = client.get(
        "/api/search",
        params={"q": "language models", "category": "cs.CL", "sort": "newest", "size": 5, "page": 2},
    ).json()
    assert not {i["arxiv_id"] for i in body["items"]} & {i["arxiv_id"] for i in page2["items"]}
    ranged = client.get(
        "/api/search", params={"q": "networks", "from": "2025-06-01", "to": "2026-12-31"}
    ).json()
    assert all("2025-06-01" <= item["activity_on"] <= "2026-12-31" for item in ranged["items"])


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({}, "query"),
        ({"q": "   "}, "query"),
        ({"q": "deep learning " * 40}, "limit"),
        ({"q": "x", "size": "500"}, "size"),
        ({"q": "x", "page": "0"}, ""),
        ({"q": "x", "page": "abc"}, ""),
        ({"q": "x", "from": "yesterday"}, ""),
        ({"q": "x", "from": "2025-02-01", "to": "2025-01-01"}, "date"),
        ({"q": "x", "sort": "oldest"}, "sort"),
        ({"q": "x", "mode": "magic"}, "mode"),
        ({"q": "x", "category": "cs.LG'; drop table papers"}, ""),
        ({"q": "x", "researcher": "-4"}, ""),
    ],
)
def test_bad_parameters_get_a_clear_400(client: Client, params: dict[str, str], needle: str) -> None:
    response = client.get("/api/search", params=params)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert needle in response.json()["detail"].lower()


def test_nonsense_is_an_empty_result_not_an_error(client: Client) -> None:
    body = client.get("/api/search", params={"q": "qxzvbnm wplkjh zzkkqq"}).json()
    assert body["items"] == [] and body["total"] == 0


def test_api_search_is_in_the_openapi_schema(client: Client) -> None:
    schema = client.get("/openapi.json").json() if client.get("/openapi.json").status_code == 200 else None
    schema = schema or client.get("/schema/openapi.json").json()
    operation = schema["paths"]["/api/search"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"q", "category", "from", "to", "researcher", "sort", "page", "size"} <= names


def test_search_page_highlights_matches_and_links_facets(client: Client) -> None:
    response = client.get("/search", params={"q": "stochastic optimization adaptive moments"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert "Adam: A Method for Stochastic Optimization" in html
    assert "<mark>stochastic</mark>" in html.lower()
    assert "/search?q=stochastic+optimization+adaptive+moments&amp;category=" in html
    assert "Ranking (development view)" not in html
    lede = " ".join(re.sub(r"<[^>]+>", " ", html.split('class="lede"', 1)[1].split("</p>")[0]).split())
    assert re.fullmatch(
        r"> \d+ papers for “stochastic optimization adaptive moments” · most relevant first · sort by date",
        lede,
    ), lede


def test_search_page_escapes_the_query(client: Client) -> None:
    html = client.get("/search", params={"q": "<script>alert(1)</script>"}).text
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_search_page_empty_states(client: Client) -> None:
    landing = client.get("/search")
    assert landing.status_code == 200 and "Try:" in landing.text
    nothing = client.get("/search", params={"q": "qxzvbnm wplkjh zzkkqq"})
    assert nothing.status_code == 200 and "Nothing matched" in nothing.text
    too_long = client.get("/search", params={"q": "deep learning " * 40})
    assert too_long.status_code == 400 and "limit" in too_long.text


def test_search_page_answers_in_markdown(client: Client) -> None:
    response = client.get(
        "/search", params={"q": "adaptive moment estimation"}, headers={"accept": "text/markdown"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/markdown")
    assert "Vary" in response.headers or "vary" in response.headers
    text = response.text
    assert text.startswith("# Results for")
    assert f"arXiv:{ADAM}" in text and "**" in text
    assert client.get("/search.md", params={"q": "adaptive moment estimation"}).text == text


def test_the_debug_view_shows_each_ranking_in_development(client: Client) -> None:
    html = client.get("/search", params={"q": "adaptive moment estimation", "debug": "1"}).text
    assert "Ranking (development view)" in html
    assert "lexical rank (BM25)" in html and "dense rank (embedding)" in html and "fused rank" in html
    assert "Show how these were ranked" in client.get("/search", params={"q": "adam"}).text
