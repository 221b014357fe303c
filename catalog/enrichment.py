"""Enrichment provenance: what each outside source said, and how researcher identities changed.

The figures shown on pages live on ``Paper`` and ``Researcher`` (``citation_count``, ``h_index`` …).
They are *derived* from the rows here by the conflict rule in ``ingest.enrich.merge`` (see
``docs/ingest.md``, Enrichment), so enriching from OpenAlex then Semantic Scholar gives the same
catalogue as the other way round, and running a source again changes nothing.
"""

from __future__ import annotations

import datetime as dt
import weakref
from collections.abc import Sequence

from sqlalchemy import (
    Connection,
    DateTime,
    Engine,
    ForeignKey,
    Index,
    String,
    Text,
    TextClause,
    inspect,
    select,
    text,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from catalog.models import Base

OPENALEX = "openalex"
SEMANTIC_SCHOLAR = "semanticscholar"
SOURCES = (OPENALEX, SEMANTIC_SCHOLAR)  # also the order of preference on ties


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class PaperEnrichment(Base):
    """One source's record of one paper: found (with its id and citation count) or not found."""

    __tablename__ = "paper_enrichments"

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    source: Mapped[str] = mapped_column(String(32), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))  # "found" | "not_found"
    external_id: Mapped[str | None] = mapped_column(String(64))
    citation_count: Mapped[int | None]
    checked_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)

    __table_args__ = (Index("ix_paper_enrichments_source_checked", "source", "checked_at"),)


class ResearcherEnrichment(Base):
    """One source's profile of one researcher; the three figures always come from one profile."""

    __tablename__ = "researcher_enrichments"

    researcher_id: Mapped[int] = mapped_column(
        ForeignKey("researchers.id", ondelete="CASCADE"), primary_key=True
    )
    source: Mapped[str] = mapped_column(String(32), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))  # "found" | "not_found"
    external_id: Mapped[str | None] = mapped_column(String(64))
    orcid: Mapped[str | None] = mapped_column(String(32))
    h_index: Mapped[int | None]
    citation_count: Mapped[int | None]
    works_count: Mapped[int | None]
    checked_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)

    __table_args__ = (Index("ix_researcher_enrichments_source_checked", "source", "checked_at"),)


class ResearcherChange(Base):
    """An identity decision taken by enrichment, kept so pages can redirect and people can audit.

    ``merged``: researcher ``researcher_id`` was folded into ``other_id`` (the lower id survives; the
    merged id no longer exists and should redirect). ``split``: an authorship of ``other_id`` was moved
    to the new researcher ``researcher_id`` because the ids disagreed. ``conflict``: a merge was
    refused because the two researchers carry different ORCIDs (or ids of one source).
    """

    __tablename__ = "researcher_changes"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # "merged" | "split" | "conflict"
    researcher_id: Mapped[int] = mapped_column(index=True)  # no FK: a merged researcher is gone
    other_id: Mapped[int] = mapped_column(index=True)
    source: Mapped[str] = mapped_column(String(32))
    external_id: Mapped[str | None] = mapped_column(String(64))
    detail: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


def surviving_researcher_id(session: Session, researcher_id: int) -> int | None:
    """The id a merged researcher now lives under (follows chains of merges), or None if not merged.

    Researcher pages use this to redirect ``/researchers/<old id>`` after enrichment merged it.
    """
    seen = {researcher_id}
    current = researcher_id
    while True:
        target = session.execute(
            select(ResearcherChange.other_id)
            .where(ResearcherChange.kind == "merged", ResearcherChange.researcher_id == current)
            .order_by(ResearcherChange.id.desc())
            .limit(1)
        ).scalar_one_or_none()
        if target is None or target in seen:
            return None if current == researcher_id else current
        seen.add(target)
        current = target


def move_researcher_references(conn: Connection, moves: Sequence[tuple[int, int]]) -> None:
    """For each ``(gone, keep)``, point every row that refers to researcher ``gone`` at ``keep``
    before ``gone`` is deleted (one executemany per referring table, however many moves).

    Other packages' tables refer to researchers too (a person's follows live in ``accounts``, which
    the catalogue must not import), so the referring tables are read from the database itself (once
    per engine: the schema does not change under a running process). A row whose twin already refers
    to ``keep_id`` (someone who followed both) is left to the delete's cascade, not duplicated.
    """
    if not moves:
        return
    statements = _REPOINTING.get(conn.engine)
    if statements is None:
        statements = _REPOINTING[conn.engine] = _repointing_statements(conn)
    params = [{"gone": gone, "keep": keep} for gone, keep in moves]
    for statement in statements:
        conn.execute(statement, params)


_REPOINTING: weakref.WeakKeyDictionary[Engine, tuple[TextClause, ...]] = weakref.WeakKeyDictionary()


def _repointing_statements(conn: Connection) -> tuple[TextClause, ...]:
    # Inspected through the caller's connection: another would wait behind its write lock on SQLite.
    inspector = inspect(conn)
    quote = conn.dialect.identifier_preparer.quote
    statements = []
    for table in inspector.get_table_names():
        for fk in inspector.get_foreign_keys(table):
            if fk["referred_table"] != "researchers" or len(fk["constrained_columns"]) != 1:
                continue
            column = fk["constrained_columns"][0]
            key = inspector.get_pk_constraint(table).get("constrained_columns") or []
            others = [c for c in key if c != column]
            # Identifiers come from the database's own catalogue, quoted; values are bound.
            table_q, column_q = quote(table), quote(column)
            twin = " AND ".join(f"o.{quote(c)} = {table_q}.{quote(c)}" for c in others)
            sql = f"UPDATE {table_q} SET {column_q} = :keep WHERE {column_q} = :gone"  # noqa: S608
            if column in key and others:
                sql += f" AND NOT EXISTS (SELECT 1 FROM {table_q} o WHERE o.{column_q} = :keep AND {twin})"  # noqa: S608
            statements.append(text(sql))
    return tuple(statements)
