"""indexing: the embedded job queue, the abstract index, run bookkeeping on full_texts

Revision ID: 0002_indexing
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_indexing"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("run_after", sa.Float(), nullable=False),
        sa.Column("lease_until", sa.Float(), nullable=True),
        sa.Column("worker", sa.String(length=128), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.UniqueConstraint("key", name=op.f("uq_jobs_key")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index("ix_jobs_claim", ["status", "priority", "run_after", "id"], unique=False)

    op.create_table(
        "abstract_index",
        sa.Column("paper_id", sa.Integer(), nullable=False),
        sa.Column("collection", sa.String(length=128), nullable=False),
        sa.Column("content_hash", sa.String(length=40), nullable=False),
        sa.Column("chunk_id", sa.String(length=128), nullable=False),
        sa.Column("indexed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["paper_id"], ["papers.id"], name=op.f("fk_abstract_index_paper_id_papers"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("paper_id", "collection", name=op.f("pk_abstract_index")),
    )

    with op.batch_alter_table("full_texts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("completions", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("run_id", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("full_texts", schema=None) as batch_op:
        batch_op.drop_column("run_id")
        batch_op.drop_column("completions")
    op.drop_table("abstract_index")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_jobs_claim")
    op.drop_table("jobs")
