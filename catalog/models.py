"""The relational catalogue: papers, their versions and authors, researchers and institutions.

Portable across SQLite and PostgreSQL (no dialect-only types). Lists that are only ever read whole
(aliases, external links) are JSON; anything filtered or joined on has its own table.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# Deterministic constraint names, so Alembic migrations are the same on every backend.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Paper(Base):
    __tablename__ = "papers"

    id: Mapped[int] = mapped_column(primary_key=True)
    arxiv_id: Mapped[str] = mapped_column(String(64), unique=True)  # canonical, no version
    latest_version: Mapped[int | None]  # None when the source gave no version (listings)
    title: Mapped[str] = mapped_column(Text)
    abstract: Mapped[str] = mapped_column(Text, default="")
    primary_category: Mapped[str | None] = mapped_column(String(32), index=True)
    doi: Mapped[str | None] = mapped_column(String(255))
    journal_ref: Mapped[str | None] = mapped_column(Text)
    comments: Mapped[str | None] = mapped_column(Text)
    report_no: Mapped[str | None] = mapped_column(Text)
    license: Mapped[str | None] = mapped_column(String(255))
    submitter: Mapped[str | None] = mapped_column(String(255))
    abs_url: Mapped[str] = mapped_column(String(255))
    pdf_url: Mapped[str] = mapped_column(String(255))
    # Dates: first version, latest version, the day arXiv announced it in a listing (each may be
    # unknown), and the one the "newest" ordering uses: the latest of those we know.
    published_on: Mapped[dt.date | None] = mapped_column(Date)
    updated_on: Mapped[dt.date | None] = mapped_column(Date)
    announced_on: Mapped[dt.date | None] = mapped_column(Date)
    activity_on: Mapped[dt.date | None] = mapped_column(Date, index=True)
    # Enrichment (None = not known, never 0 by default).
    citation_count: Mapped[int | None]
    citation_source: Mapped[str | None] = mapped_column(String(32))
    openalex_id: Mapped[str | None] = mapped_column(String(32), index=True)
    # Bookkeeping: a hash of the stored metadata decides "unchanged" on re-import.
    source: Mapped[str] = mapped_column(String(32))
    content_hash: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    modified_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now, onupdate=_now)

    versions: Mapped[list[PaperVersion]] = relationship(
        back_populates="paper", order_by="PaperVersion.version", cascade="all, delete-orphan"
    )
    categories: Mapped[list[PaperCategory]] = relationship(
        back_populates="paper", order_by="PaperCategory.position", cascade="all, delete-orphan"
    )
    authorships: Mapped[list[Authorship]] = relationship(
        back_populates="paper", order_by="Authorship.position", cascade="all, delete-orphan"
    )

    __table_args__ = (Index("ix_papers_activity_id", "activity_on", "id"),)


class PaperVersion(Base):
    __tablename__ = "paper_versions"

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    version: Mapped[int] = mapped_column(primary_key=True)
    submitted_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    size: Mapped[str | None] = mapped_column(String(32))

    paper: Mapped[Paper] = relationship(back_populates="versions")


class PaperCategory(Base):
    """One row per category; position 0 is the primary category."""

    __tablename__ = "paper_categories"

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(primary_key=True)
    category: Mapped[str] = mapped_column(String(64), index=True)

    paper: Mapped[Paper] = relationship(back_populates="categories")

    # Category → papers answered from the index (migration 0004_browse_indexes).
    __table_args__ = (Index("ix_paper_categories_category_paper", "category", "paper_id"),)


class Researcher(Base):
    """A person, resolved from author strings; ids are stable and never reused."""

    __tablename__ = "researchers"

    id: Mapped[int] = mapped_column(primary_key=True)
    display_name: Mapped[str] = mapped_column(String(512))
    name_key: Mapped[str] = mapped_column(String(512), index=True)  # see catalog.names
    # Surname and first initial ("liu y"): where the resolver looks for candidates (people.resolver).
    block_key: Mapped[str] = mapped_column(String(512), index=True, default="")
    orcid: Mapped[str | None] = mapped_column(String(32), index=True)
    openalex_id: Mapped[str | None] = mapped_column(String(32), index=True)
    semantic_scholar_id: Mapped[str | None] = mapped_column(String(32), index=True)
    h_index: Mapped[int | None]
    citation_count: Mapped[int | None]
    works_count: Mapped[int | None]
    metrics_source: Mapped[str | None] = mapped_column(String(32))  # "openalex" | "semanticscholar"
    metrics_updated_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)

    authorships: Mapped[list[Authorship]] = relationship(back_populates="researcher")


class Authorship(Base):
    """An author as written on a paper, in order, linked to the researcher it resolved to."""

    __tablename__ = "authorships"

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(primary_key=True)  # 0-based order on the paper
    name: Mapped[str] = mapped_column(String(512))
    # "first" | "middle" | "last" (a sole author is "first"); OpenAlex may overrule arXiv's order.
    role: Mapped[str] = mapped_column(String(8))
    role_source: Mapped[str] = mapped_column(String(16), default="arxiv")
    # None when the string names no person ("et al.", a collaboration).
    researcher_id: Mapped[int | None] = mapped_column(
        ForeignKey("researchers.id", ondelete="SET NULL"), index=True
    )

    paper: Mapped[Paper] = relationship(back_populates="authorships")
    researcher: Mapped[Researcher | None] = relationship(back_populates="authorships")

    # Researcher → papers answered from the index (migration 0004_browse_indexes).
    __table_args__ = (Index("ix_authorships_researcher_paper", "researcher_id", "paper_id"),)


class Institution(Base):
    __tablename__ = "institutions"

    id: Mapped[int] = mapped_column(primary_key=True)
    ror_id: Mapped[str | None] = mapped_column(String(16), unique=True)  # bare, e.g. "00013q465"
    name: Mapped[str] = mapped_column(String(512))
    aliases: Mapped[list[str]] = mapped_column(JSON, default=list)
    acronyms: Mapped[list[str]] = mapped_column(JSON, default=list)
    types: Mapped[list[str]] = mapped_column(JSON, default=list)
    country_code: Mapped[str | None] = mapped_column(String(2))
    country_name: Mapped[str | None] = mapped_column(String(128))
    city: Mapped[str | None] = mapped_column(String(255))
    website: Mapped[str | None] = mapped_column(String(512))
    links: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # wikipedia, external ids …
    status: Mapped[str | None] = mapped_column(String(16))
    established: Mapped[int | None]
    openalex_id: Mapped[str | None] = mapped_column(String(32), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


class InstitutionName(Base):
    """Every name an institution goes by, normalised, for lookup by name, alias or acronym."""

    __tablename__ = "institution_names"

    institution_id: Mapped[int] = mapped_column(
        ForeignKey("institutions.id", ondelete="CASCADE"), primary_key=True
    )
    name_key: Mapped[str] = mapped_column(String(512), primary_key=True, index=True)
    kind: Mapped[str] = mapped_column(String(16))  # "name" | "alias" | "acronym" | "label"


class Affiliation(Base):
    """An author's affiliation on one paper, as printed, and the institution it matched (if any)."""

    __tablename__ = "affiliations"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    author_position: Mapped[int]
    raw: Mapped[str] = mapped_column(Text)
    institution_id: Mapped[int | None] = mapped_column(
        ForeignKey("institutions.id", ondelete="SET NULL"), index=True
    )
    source: Mapped[str] = mapped_column(String(32))  # "pdf" | "openalex" | "kaggle"
    score: Mapped[float | None]

    __table_args__ = (
        UniqueConstraint("paper_id", "author_position", "raw", "source"),
        # Institution → papers answered from the index (migration 0004_browse_indexes).
        Index("ix_affiliations_institution_paper", "institution_id", "paper_id"),
    )


class ResearcherInstitution(Base):
    """A researcher's known affiliations over time (OpenAlex author affiliations)."""

    __tablename__ = "researcher_institutions"

    researcher_id: Mapped[int] = mapped_column(
        ForeignKey("researchers.id", ondelete="CASCADE"), primary_key=True
    )
    institution_id: Mapped[int] = mapped_column(
        ForeignKey("institutions.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    source: Mapped[str] = mapped_column(String(32), primary_key=True)
    years: Mapped[list[str]] = mapped_column(JSON, default=list)


class FullText(Base):
    """The state of a paper's PDF through fetch → parse → chunk → embed (one row per paper)."""

    __tablename__ = "full_texts"

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    status: Mapped[str] = mapped_column(String(16), index=True)  # queued | running | done | failed
    # While running: fetching | parsing | indexing (what a person waiting for it is told).
    stage: Mapped[str | None] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    version: Mapped[int | None]
    source_path: Mapped[str | None] = mapped_column(Text)
    sha256: Mapped[str | None] = mapped_column(String(64))
    pages: Mapped[int | None]
    chunk_count: Mapped[int | None]
    parser: Mapped[str | None] = mapped_column(String(64))
    collection: Mapped[str | None] = mapped_column(String(128))
    hidden_text: Mapped[list[str]] = mapped_column(JSON, default=list)  # text a reader cannot see
    updated_at: Mapped[dt.datetime] = mapped_column(
        DateTime(timezone=True), default=_now, onupdate=_now, server_default=func.now()
    )
    # Runs that reached done or failed; a finish is conditional on the run that claimed the row, so
    # a redelivered job never finishes a paper twice.
    completions: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    run_id: Mapped[str | None] = mapped_column(String(64))  # the worker run that holds it


class Job(Base):
    """The embedded job queue (no Redis): one row per job key, claimed with a lease.

    A claim takes a queued job whose ``run_after`` has passed, or a running one whose lease expired
    (its worker died); a running worker renews its lease every third of the lease time. Times are
    epoch seconds (floats) so comparisons are the same on SQLite and PostgreSQL."""

    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    key: Mapped[str] = mapped_column(String(255), unique=True)  # dedupes enqueues
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    priority: Mapped[int] = mapped_column(Integer, default=100)  # lower first
    status: Mapped[str] = mapped_column(String(16))  # queued | running | done | failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    run_after: Mapped[float] = mapped_column(Float, default=0.0)
    lease_until: Mapped[float | None] = mapped_column(Float)
    worker: Mapped[str | None] = mapped_column(String(128))
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now, onupdate=_now)

    __table_args__ = (Index("ix_jobs_claim", "status", "priority", "run_after", "id"),)


class AbstractIndex(Base):
    """Which paper's title + abstract chunk is in which vector collection, built from which metadata
    (``Paper.content_hash``): a paper is re-embedded when either changes, skipped otherwise."""

    __tablename__ = "abstract_index"

    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True)
    collection: Mapped[str] = mapped_column(String(128), primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(40))
    chunk_id: Mapped[str] = mapped_column(String(128))
    indexed_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
