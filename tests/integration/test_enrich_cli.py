"""``python -m ingest ror | affiliations | enrich`` end to end on the default SQLite catalogue, with
OpenAlex and Semantic Scholar served from recorded data on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from catalog.db import make_engine
from catalog.models import Affiliation, Institution, Paper
from ingest.__main__ import cli
from settings import get_settings
from tests.integration.enrichment_peers import OpenAlexObjects, Peer, SemanticScholarObjects


def test_ror_affiliations_and_enrich_commands(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = shared_data / "enrichment"
    openalex, s2 = Peer(fallback=OpenAlexObjects(data)), Peer(fallback=SemanticScholarObjects(data))
    monkeypatch.setenv("WOVEPAPER_OPENALEX_BASE_URL", openalex.url)
    monkeypatch.setenv("WOVEPAPER_SEMANTIC_SCHOLAR_BASE_URL", s2.url + "/graph/v1")
    monkeypatch.setenv("WOVEPAPER_OPENALEX_MAILTO", "ops@example.org")
    monkeypatch.setenv("WOVEPAPER_ENRICHMENT_MAX_RETRIES", "1")
    monkeypatch.setenv("WOVEPAPER_SEMANTIC_SCHOLAR_RATE_LIMIT", "1000")
    monkeypatch.setenv("WOVEPAPER_OPENALEX_RATE_LIMIT", "1000")
    monkeypatch.setenv("WOVEPAPER_ENRICHMENT_BACKOFF", "0.01")
    get_settings.cache_clear()
    runner = CliRunner()
    try:
        result = runner.invoke(cli, ["kaggle", str(shared_data / "pdfs" / "papers.jsonl")])
        assert result.exit_code == 0, result.output

        result = runner.invoke(
            cli, ["ror", str(data / "ror" / "ror_v2_records_from_ror-records_releases.jsonl")]
        )
        assert result.exit_code == 0, result.output
        assert "13503 added" in result.output and "distinct strings matched" in result.output

        result = runner.invoke(cli, ["affiliations"])  # nothing new: the unmatched are tried again
        assert result.exit_code == 0 and " 0 of " in result.output.split("printed affiliations")[1]

        result = runner.invoke(cli, ["enrich", "--source", "semanticscholar"])
        assert result.exit_code == 0, result.output
        assert (
            "papers from semanticscholar" in result.output
            and "researchers from semanticscholar" in result.output
        )

        again = runner.invoke(cli, ["enrich", "--source", "semanticscholar"])
        assert again.exit_code == 0 and "0 found, 0 not found, 0 failed" in again.output  # nothing due

        s2.fail_next(10, 503)
        failed = runner.invoke(cli, ["enrich", "--source", "semanticscholar", "--arxiv-id", "1706.03762"])
        assert failed.exit_code == 1 and "asked again on the next run" in failed.output
        assert "503" in failed.output

        openalex_run = runner.invoke(
            cli, ["enrich", "--source", "openalex", "--only", "papers", "--limit", "5"]
        )
        assert openalex_run.exit_code == 0, openalex_run.output
        assert all(dict(seen.query).get("mailto") == "ops@example.org" for seen in openalex.seen)
    finally:
        openalex.close()
        s2.close()

    engine = make_engine(get_settings().database_url)
    with Session(engine) as s:
        assert s.execute(select(func.count()).select_from(Institution)).scalar_one() == 13503
        matched = s.execute(select(func.count()).where(Affiliation.institution_id.is_not(None))).scalar_one()
        assert matched > 60
        attention = s.execute(select(Paper).where(Paper.arxiv_id == "1706.03762")).scalar_one()
        assert attention.citation_source == "semanticscholar" and attention.citation_count
    engine.dispose()
