"""enrichment: per-source records of papers and researchers, researcher identity changes

Revision ID: 0003_enrichment
Revises: 0002_indexing
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_enrichment"
down_revision = "0002_indexing"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "paper_enrichments",
        sa.Column("paper_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("external_id", sa.String(length=64), nullable=True),
        sa.Column("citation_count", sa.Integer(), nullable=True),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["paper_id"], ["papers.id"], name=op.f("fk_paper_enrichments_paper_id_papers"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("paper_id", "source", name=op.f("pk_paper_enrichments")),
    )
    with op.batch_alter_table("paper_enrichments", schema=None) as batch_op:
        batch_op.create_index("ix_paper_enrichments_source_checked", ["source", "checked_at"], unique=False)

    op.create_table(
        "researcher_enrichments",
        sa.Column("researcher_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("external_id", sa.String(length=64), nullable=True),
        sa.Column("orcid", sa.String(length=32), nullable=True),
        sa.Column("h_index", sa.Integer(), nullable=True),
        sa.Column("citation_count", sa.Integer(), nullable=True),
        sa.Column("works_count", sa.Integer(), nullable=True),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["researcher_id"],
            ["researchers.id"],
            name=op.f("fk_researcher_enrichments_researcher_id_researchers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("researcher_id", "source", name=op.f("pk_researcher_enrichments")),
    )
    with op.batch_alter_table("researcher_enrichments", schema=None) as batch_op:
        batch_op.create_index(
            "ix_researcher_enrichments_source_checked", ["source", "checked_at"], unique=False
        )

    op.create_table(
        "researcher_changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("researcher_id", sa.Integer(), nullable=False),
        sa.Column("other_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("external_id", sa.String(length=64), nullable=True),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_researcher_changes")),
    )
    with op.batch_alter_table("researcher_changes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_researcher_changes_other_id"), ["other_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_researcher_changes_researcher_id"), ["researcher_id"], unique=False
        )


def downgrade() -> None:
    op.drop_table("researcher_changes")
    op.drop_table("researcher_enrichments")
    op.drop_table("paper_enrichments")
