"""The JSON API over real HTTP (uvicorn on loopback): answers, errors, the OpenAPI description, and
schemathesis over ``/openapi.json`` with zero 5xx and zero schema violations."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings

from settings import SHARED_DATA
from tests.integration.browse_catalogue import Facts, built, served

BASE = "https://wovepaper.test"
# Generated cases per operation: enough to hit every parameter's edges, small enough for CI.
EXAMPLES = 30


@dataclass
class Api:
    http: httpx.Client
    base: str
    facts: Facts


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    work = tmp_path_factory.mktemp(request.param)
    with (
        built(request.param, SHARED_DATA, work) as (app_settings, facts),
        served(app_settings) as base,
        httpx.Client(base_url=base, timeout=30) as http,
    ):
        yield Api(http, base, facts)


def _json(api: Api, path: str, status: int = 200) -> dict[str, Any]:
    response = api.http.get(path)
    assert response.status_code == status, (path, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    return body


def test_papers(api: Api) -> None:
    listing = _json(api, "/api/papers?size=5")
    assert len(listing["items"]) == 5 and listing["size"] == 5 and listing["page"] == 1
    assert listing["total"] > 600 and listing["pages"] == -(-listing["total"] // 5)
    first = listing["items"][0]
    assert first["url"].startswith(BASE + "/papers/") and first["markdown_url"] == first["url"] + ".md"
    dates = [p["activity_on"] for p in listing["items"]]
    assert dates == sorted(dates, reverse=True)
    in_category = _json(api, "/api/papers?category=stat.ML&size=100")
    assert in_category["total"] >= 13
    assert _json(api, "/api/papers?category=bad+value", status=400)["detail"].startswith("'bad value'")


def test_one_paper(api: Api) -> None:
    adam = _json(api, "/api/papers/1412.6980")
    assert adam["title"] == "Adam: A Method for Stochastic Optimization"
    assert [a["name"] for a in adam["authors"]] == ["Diederik P. Kingma", "Jimmy Lei Ba"]
    assert adam["authors"][0]["affiliations"][0]["raw"] == "University of Amsterdam, OpenAI"
    assert adam["authors"][1]["affiliations"][0]["institution_url"].startswith(BASE + "/institutions/")
    assert adam["citation_count"] is None  # not known: null, not 0
    assert adam["versions"][-1]["version"] == 9
    assert _json(api, "/api/papers/1412.6980v3")["arxiv_id"] == "1412.6980"
    assert _json(api, "/api/papers/astro-ph/0601001")["arxiv_id"] == "astro-ph/0601001"
    missing = _json(api, "/api/papers/2401.99999", status=404)
    assert missing == {"status_code": 404, "detail": "arXiv:2401.99999 is not in this archive (yet)."}
    assert "new-style ids look like" in _json(api, "/api/papers/banana", status=404)["detail"]


def test_researchers(api: Api) -> None:
    found = _json(api, "/api/researchers?q=kingma")
    assert [r["name"] for r in found["items"]] == ["Diederik P. Kingma"]
    kingma = _json(api, f"/api/researchers/{api.facts.enriched_researcher}")
    assert kingma["h_index"] == api.facts.h_index and kingma["works_count"] == api.facts.works
    assert (
        kingma["orcid"] == api.facts.orcid and kingma["institutions"][0]["name"] == "University of Amsterdam"
    )
    plain = _json(api, f"/api/researchers/{api.facts.plain_researcher}")
    assert plain["h_index"] is None and plain["citation_count"] is None and plain["works_count"] is None
    prolific = _json(api, f"/api/researchers/{api.facts.prolific_researcher}")
    assert prolific["positions"]["first"] == 26 and prolific["positions"]["papers_counted"] == 26
    assert {c["name"] for c in prolific["coauthors"]} == {"Ines Ortega", "Jonas Berg", "Kai Lindqvist"}
    papers = _json(api, f"/api/researchers/{api.facts.prolific_researcher}/papers?category=stat.ML&size=100")
    assert papers["total"] == 13
    namesake = _json(api, f"/api/researchers/{api.facts.namesakes[0]}")
    assert [s["id"] for s in namesake["same_name"]] == [api.facts.namesakes[1]]
    _json(api, "/api/researchers/999999999", status=404)
    _json(api, "/api/researchers/0", status=404)  # an address that names nothing: 404 (the rule)
    _json(api, "/api/researchers/abc", status=404)  # not an integer: no such route


def test_institutions(api: Api) -> None:
    found = _json(api, "/api/institutions?q=toronto")
    assert [i["name"] for i in found["items"]] == ["University of Toronto"]
    by_ror = _json(api, f"/api/institutions/ror:{api.facts.toronto_ror}")
    by_name = _json(api, "/api/institutions/University of Toronto")
    assert by_ror == by_name and by_ror["id"] == api.facts.toronto and by_ror["city"] == "Toronto"
    papers = _json(api, f"/api/institutions/{api.facts.toronto}/papers")
    assert "1412.6980" in {p["arxiv_id"] for p in papers["items"]}
    _json(api, "/api/institutions/ror:0abcdef12", status=404)


def test_openapi_describes_the_json_api(api: Api) -> None:
    document = _json(api, "/openapi.json")
    assert document["openapi"].startswith("3.1")
    paths = set(document["paths"])
    assert {
        "/api/papers",
        "/api/papers/{arxiv_id}",
        "/api/papers/{archive}/{number}",
        "/api/researchers",
        "/api/researchers/{researcher_id}",
        "/api/researchers/{researcher_id}/papers",
        "/api/institutions",
        "/api/institutions/{ident}",
        "/api/institutions/{ident}/papers",
    } <= paths
    assert not [p for p in paths if not p.startswith("/api/") and p != "/healthz"], "pages are not in the API"


# Operations this area owns get every schemathesis check; the rest of /openapi.json (search,
# indexing status …) is held to "no 5xx" here and to its own checks in its owners' tests.
OWN = ("/api/papers", "/api/researchers", "/api/institutions", "/healthz")


def _fuzz(base: str, operation: schemathesis.APIOperation, check_all: bool) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy())
    def exercise(case: schemathesis.Case) -> None:
        response = case.call(base_url=base)
        assert response.status_code < 500, (case.path, case.path_parameters, case.query, response.text[:300])
        if check_all:
            case.validate_response(response)

    exercise()


def test_schemathesis_finds_no_server_error_or_schema_violation(api: Api) -> None:
    schema = schemathesis.openapi.from_url(f"{api.base}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    assert len([op for op in operations if op.path.startswith(OWN)]) >= 10
    for operation in operations:
        _fuzz(api.base, operation, check_all=operation.path.startswith(OWN))
