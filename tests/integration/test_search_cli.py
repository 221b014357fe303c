"""``python -m indexing reindex-lexical`` and the catalogue sync on SQLite and PostgreSQL: new, changed
and deleted papers reach the lexical index."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, delete

from catalog.db import transaction
from catalog.models import Paper
from indexing.__main__ import cli
from ingest.importer import Importer
from ingest.records import PaperRecord, Version
from retrieval.lexical import LexicalIndex
from settings import get_settings


def record(arxiv_id: str, title: str, abstract: str) -> PaperRecord:
    return PaperRecord(
        arxiv_id=arxiv_id,
        title=title,
        abstract=abstract,
        authors=("Grace Hopper",),
        categories=("cs.PL",),
        versions=(Version(1),),
    )


def test_reindex_and_sync_follow_the_catalogue(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WOVEPAPER_DATABASE_URL", engine.url.render_as_string(hide_password=False))
    get_settings.cache_clear()
    Importer(engine, source="test").run(
        [
            record("2401.00001", "Compilers for COBOL", "Compiler construction for business code."),
            record("2401.00002", "Garbage collection", "A study of generational garbage collectors."),
        ]
    )
    result = CliRunner().invoke(cli, ["reindex-lexical"])
    assert result.exit_code == 0, result.output
    assert "papers: 2 documents" in result.output
    index = LexicalIndex.from_settings(get_settings())
    assert [h.arxiv_id for h in index.search("papers", "compiler construction", k=5)] == ["2401.00001"]

    # A new version changes the text; a paper leaves the catalogue; the incremental sync sees both.
    Importer(engine, source="test").run(
        [record("2401.00001", "Compilers for COBOL and Fortran", "Now with loop vectorisation.")]
    )
    with transaction(engine) as session:
        session.execute(delete(Paper).where(Paper.arxiv_id == "2401.00002"))
    summary = index.sync_catalogue(engine)
    index.flush()
    assert summary.changed == 1 and summary.removed == 1 and summary.papers == 1
    assert [h.arxiv_id for h in index.search("papers", "vectorisation fortran", k=5)] == ["2401.00001"]
    assert index.search("papers", "garbage collectors", k=5) == []
    # Nothing changed since: a second sync does nothing.
    again = index.sync_catalogue(engine)
    assert again.changed == 0 and again.removed == 0
