"""``python -m ingest reindex-lexical``: rebuild the lexical (BM25) index from the catalogue."""

from __future__ import annotations

import time

import click

from catalog.db import make_engine, migrate
from ingest import console as out
from retrieval.lexical import CORPORA, LexicalError, LexicalIndex
from settings import get_settings


@click.command("reindex-lexical")
def reindex_lexical() -> None:
    """Re-read every paper's title, abstract and authors from the catalogue and rebuild the BM25
    index of papers and of full-text chunks now. Running web processes load the new index by
    themselves; nothing needs a restart."""
    settings = get_settings()
    engine = make_engine(settings.database_url, echo=settings.database.database_echo)
    migrate(engine)
    started = time.perf_counter()
    try:
        index = LexicalIndex.from_settings(settings)
        summary = index.rebuild(engine)
    except LexicalError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.dispose()
    sizes = ", ".join(f"{corpus}: {index.document_count(corpus):,} documents" for corpus in CORPORA)
    out.console.print(
        f"lexical index rebuilt in {time.perf_counter() - started:.1f} s ({sizes}; "
        f"{summary.changed:,} papers changed, {summary.removed:,} removed) at {index.root}"
    )


COMMANDS = [reindex_lexical]
