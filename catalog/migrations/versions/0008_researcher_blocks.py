"""researchers: block_key, the loose name key the resolver finds candidates by

Surname and first initial ("liu y"), so "Y. Liu", "Yang Liu" and "Yu Liu" are looked up together and
told apart by the evidence (people.resolver). Existing researchers get theirs from their
display name; their ids and links do not change.

Revision ID: 0008_researcher_blocks
Revises: 0007_chat
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from people.names import block_of

revision = "0008_researcher_blocks"
down_revision = "0007_chat"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("researchers") as batch_op:
        batch_op.add_column(sa.Column("block_key", sa.String(length=512), nullable=False, server_default=""))
        batch_op.create_index(batch_op.f("ix_researchers_block_key"), ["block_key"], unique=False)
    conn = op.get_bind()
    researchers = sa.table("researchers", sa.column("id"), sa.column("display_name"), sa.column("name_key"))
    rows = conn.execute(sa.select(researchers.c.id, researchers.c.display_name, researchers.c.name_key))
    updates = [{"rid": rid, "block": block_of(name) or key} for rid, name, key in rows.all()]
    if updates:
        conn.execute(
            sa.text("UPDATE researchers SET block_key = :block WHERE id = :rid"),
            updates,
        )


def downgrade() -> None:
    with op.batch_alter_table("researchers") as batch_op:
        batch_op.drop_index(batch_op.f("ix_researchers_block_key"))
        batch_op.drop_column("block_key")
