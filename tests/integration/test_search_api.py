"""``/search`` and ``/api/search`` over HTTP on the small real corpus: JSON validated against the
app's own OpenAPI schema, HTML with highlighted matches, markdown for agents, clear 400s naming the
parameter to change (never a 5xx), and the development debug view with each hit's lexical, dense
and fused rank."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from litestar.testing import TestClient

from app.main import create_app
from tests.integration.search_corpus import environment
from tests.integration.test_search import ADAM, backend_env, corpus  # noqa: F401 - the fixtures

Client = TestClient


@pytest.fixture(scope="module")
def client(backend_env: dict[str, str]) -> Iterator[Client]:  # noqa: F811
    """The app in development mode (where the debug view exists; it still needs ``?debug=1``), on
    SQLite and on PostgreSQL."""
    with environment({**backend_env, "WOVEPAPER_ENVIRONMENT": "development"}) as settings:
        app = create_app(settings)
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def openapi(client: Client) -> Any:
    return schemathesis.openapi.from_dict(client.get("/openapi.json").json())


def search(client: Client, openapi: Any, params: dict[str, Any], status: int = 200) -> dict[str, Any]:
    """``/api/search`` with ``params``; the answer must have ``status`` and match the schema."""
    response = client.get("/api/search", params=params)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    openapi["/api/search"]["GET"].validate_response(response)
    body: dict[str, Any] = response.json()
    return body


def test_api_search_answers_json_with_snippets_and_ranks(client: Client, openapi: Any) -> None:
    body = search(client, openapi, {"q": "adaptive moment estimation optimizer", "size": 3})
    assert body["items"][0]["arxiv_id"] == ADAM
    top = body["items"][0]
    assert top["url"].endswith(f"/papers/{ADAM}-adam-a-method-for-stochastic-optimization")
    assert top["snippet"]["kind"] == "abstract"
    start, end = top["snippet"]["highlights"][0]
    assert top["snippet"]["text"][start:end]
    assert top["fused_rank"] == 1 and top["lexical_rank"] and top["dense_rank"]
    assert body["total"] >= 3 and body["pages"] == -(-body["total"] // 3)


def test_facets_count_the_categories_of_every_result(client: Client, openapi: Any) -> None:
    params = {"q": "neural networks", "size": 50}
    first = search(client, openapi, params)
    assert 50 < first["total"] <= 200 and not first["capped"]
    items = list(first["items"])
    for page in range(2, first["pages"] + 1):
        items += search(client, openapi, {**params, "page": page})["items"]
    assert len(items) == first["total"] == len({i["arxiv_id"] for i in items})
    counted = Counter(c for item in items for c in item["categories"])
    facets = {f["category"]: f["count"] for f in first["facets"]}
    assert facets == {category: n for category, n in counted.items() if category in facets}
    assert set(facets) >= {category for category, _ in counted.most_common(5)}
    assert [f["count"] for f in first["facets"]] == sorted(facets.values(), reverse=True)


def test_api_search_filters_sort_and_pages(client: Client, openapi: Any) -> None:
    body = search(client, openapi, {"q": "language models", "category": "cs.CL", "sort": "newest", "size": 5})
    assert body["items"] and all("cs.CL" in item["categories"] for item in body["items"])
    dates = [item["activity_on"] for item in body["items"]]
    assert dates == sorted(dates, reverse=True)
    page2 = search(
        client, openapi, {"q": "language models", "category": "cs.CL", "sort": "newest", "size": 5, "page": 2}
    )
    assert not {i["arxiv_id"] for i in body["items"]} & {i["arxiv_id"] for i in page2["items"]}
    ranged = search(client, openapi, {"q": "networks", "from": "2025-06-01", "to": "2026-12-31"})
    assert ranged["items"] and all("2025-06-01" <= i["activity_on"] <= "2026-12-31" for i in ranged["items"])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "deep learning " * 40}, "the query is 559 characters long; the limit is 300"),
        ({"q": "x", "size": "51"}, "size must be between 1 and 50"),
        ({"q": "x", "page": "0"}, "Invalid parameter: page: Expected `int` >= 1"),
        ({"q": "x", "page": "abc"}, "Invalid parameter: page: Expected `int`, got `str`"),
        ({"q": "x", "from": "yesterday"}, "Invalid parameter: from: Invalid RFC3339 encoded date"),
        ({"q": "x", "sort": "oldest"}, "Invalid parameter: sort: Invalid enum value 'oldest'"),
        ({"q": "x", "mode": "magic"}, "Invalid parameter: mode: Invalid enum value 'magic'"),
        ({"q": "x", "category": "cs.LG'; drop table papers"}, "Invalid parameter: category: Expected `str`"),
        ({"q": "x", "researcher": "-4"}, "Invalid parameter: researcher: Expected `int` >= 1"),
    ],
)
def test_bad_parameters_get_a_400_naming_what_to_change(
    client: Client, openapi: Any, params: dict[str, str], message: str
) -> None:
    assert search(client, openapi, params, status=400)["detail"].startswith(message)


@pytest.mark.parametrize("q", [None, "   ", "\x00"])
def test_no_query_lists_every_paper_newest_first(client: Client, openapi: Any, q: str | None) -> None:
    body = search(client, openapi, {"size": 5} if q is None else {"q": q, "size": 5})
    assert body["query"] == "" and body["sort"] == "newest" and body["total"] > 250
    dates = [item["activity_on"] for item in body["items"]]
    assert len(dates) == 5 and dates == sorted(dates, reverse=True)


def test_an_empty_date_range_is_an_empty_answer_that_says_why(client: Client, openapi: Any) -> None:
    body = search(client, openapi, {"q": "networks", "from": "2025-02-01", "to": "2025-01-01"})
    assert body["items"] == [] and body["total"] == 0
    assert body["notes"] == ["the date range is empty (`from` is after `to`), so no paper can match"]


def test_nonsense_is_an_empty_result_not_an_error(client: Client, openapi: Any) -> None:
    body = search(client, openapi, {"q": "qxzvbnm wplkjh zzkkqq"})
    assert body["items"] == [] and body["total"] == 0


def test_the_schema_states_the_limits_the_service_enforces(client: Client) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/search"]["get"]
    schemas = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert {"q", "category", "from", "to", "researcher", "sort", "mode", "page", "size"} <= set(schemas)
    assert schemas["q"]["maxLength"] == 300 and schemas["size"]["maximum"] == 50
    assert schemas["sort"]["enum"] == ["relevance", "newest"]
    assert client.get("/api/search", params={"q": "x" * 300}).status_code == 200
    assert client.get("/api/search", params={"q": "x", "size": 50}).status_code == 200
    bad_request = operation["responses"]["400"]["content"]["application/json"]["schema"]
    assert "oneOf" not in bad_request  # one error shape, not two identical alternatives


def test_indexing_status_matches_its_schema(client: Client, openapi: Any) -> None:
    response = client.get("/api/ingest/status")
    assert response.status_code == 200
    openapi["/api/ingest/status"]["GET"].validate_response(response)
    one = client.get(f"/api/ingest/status/{ADAM}")
    assert one.status_code == 200 and one.json()["arxiv_id"] == ADAM
    openapi["/api/ingest/status/{arxiv_id}"]["GET"].validate_response(one)
    missing = client.get("/api/ingest/status/2401.99999")
    assert missing.status_code == 404
    openapi["/api/ingest/status/{arxiv_id}"]["GET"].validate_response(missing)


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
    assert too_long.status_code == 400 and "the limit is 300" in too_long.text
    nothing_at_all = client.get("/search", params={"q": "\x00"})
    assert nothing_at_all.status_code == 200 and "Try:" in nothing_at_all.text


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
