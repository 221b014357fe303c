"""full_texts.stage: what a running full-text job is doing (fetching, parsing, indexing)

A person who asked for a paper's full text sees the state move on without a reload; the stage
is what "running" is doing now. Existing rows have none.

Revision ID: 0011_full_text_stage
Revises: 0010_transliterated_keys
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_full_text_stage"
down_revision = "0010_transliterated_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("full_texts") as batch:
        batch.add_column(sa.Column("stage", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("full_texts") as batch:
        batch.drop_column("stage")
