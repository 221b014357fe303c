"""Fixtures shared by integration modules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from settings import SHARED_DATA
from tests.integration.browse_catalogue import ServedCatalogue, built, served


@pytest.fixture(scope="session", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def served_catalogue(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServedCatalogue]:
    """One served app per backend for every module that only reads it over HTTP (the JSON API
    tests, the hostile-input fuzz suite, schemathesis): built once, shared."""
    work = tmp_path_factory.mktemp(f"served-{request.param}")
    # These modules send thousands of API requests from one address: the API limit (tested with the
    # sign-in work) would answer 429 long before they are done.
    env = {"WOVEPAPER_LIMIT_API": "1000000/60"}
    with built(request.param, SHARED_DATA, work, env) as (settings, facts), served(settings) as base:
        yield ServedCatalogue(base, facts, settings, request.param)
