"""The JSON API over real HTTP (uvicorn on loopback): answers, errors and the OpenAPI description.
Schemathesis over ``/openapi.json`` runs in ``test_hostile_http.py`` on the same served app."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.integration.browse_catalogue import Facts, ServedCatalogue

BASE = "https://wovepaper.test"


@dataclass
class Api:
    http: httpx.Client
    base: str
    facts: Facts


@pytest.fixture
def api(served_catalogue: ServedCatalogue) -> Iterator[Api]:
    with httpx.Client(base_url=served_catalogue.base, timeout=30) as http:
        yield Api(http, served_catalogue.base, served_catalogue.facts)


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
    (other,) = namesake["same_name"]
    assert other["id"] == api.facts.namesakes[1] and namesake["same_name_more"] == 0
    # What tells them apart: years, fields, co-authors, institution (the other is a biologist).
    assert (other["first_year"], other["last_year"], other["categories"]) == (2019, 2024, ["q-bio.GN"])
    assert [c["name"] for c in other["coauthors"]] == ["Bertil Oskarsson"]
    assert other["institution"]["name"] == "Yale University" and other["h_index"] is None
    assert namesake["attribution_url"] == BASE + "/about/researchers"
    spelled = _json(api, f"/api/researchers/{api.facts.spelled}")
    assert spelled["name"] == "Zoë Ästrand" and spelled["name_variants"] == ["Zoe Astrand"]
    assert spelled["same_name"] == [] and spelled["papers"] == 3
    _json(api, "/api/researchers/999999999", status=404)
    _json(api, "/api/researchers/0", status=404)  # an address that names nothing: 404 (the rule)
    _json(api, "/api/researchers/abc", status=404)  # not an integer: no such route


def test_institutions(api: Api) -> None:
    found = _json(api, "/api/institutions?q=toronto")
    assert [i["name"] for i in found["items"]] == ["University of Toronto"]
    by_ror = _json(api, f"/api/institutions/ror:{api.facts.toronto_ror}")
    by_name = _json(api, "/api/institutions/University of Toronto")
    assert by_ror == by_name and by_ror["id"] == api.facts.toronto and by_ror["city"] == "Toronto"
    # Its researchers carry what the researcher search items carry, to tell namesakes apart.
    (ba,) = [r for r in by_ror["researchers"] if r["id"] == api.facts.plain_researcher]
    (searched,) = _json(api, "/api/researchers?q=jimmy lei ba")["items"]
    assert set(ba) == set(searched) and ba["url"] == searched["url"]
    assert (ba["first_year"], ba["last_year"], ba["categories"]) == (2017, 2017, ["cs.LG"])
    assert ba["coauthors"] == searched["coauthors"] and ba["institution"] == searched["institution"]
    assert ba["coauthors"][0]["name"] == "Diederik P. Kingma"
    amsterdam = _json(api, "/api/institutions/University of Amsterdam")["researchers"]
    (kingma,) = [r for r in amsterdam if r["id"] == api.facts.enriched_researcher]
    assert (kingma["h_index"], kingma["citation_count"]) == (api.facts.h_index, api.facts.citations)
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
    assert not [p for p in paths if not p.startswith("/api/") and p not in ("/healthz", "/readyz")], (
        "pages are not in the API"
    )
