"""researchers: block keys refiled for the surname rule of catalog.names

A family name's particles and the first parts of a double-barrelled name are no longer part of the
surname ("Nisansa de Silva" and "Nisansa De Silva" are both filed under "silva n"), so researchers
are found where new papers look for them. Only the block key changes; ids and links do not.

Revision ID: 0009_refile_researcher_blocks
Revises: 0008_researcher_blocks
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from people.names import block_of

revision = "0009_refile_researcher_blocks"
down_revision = "0008_researcher_blocks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    researchers = sa.table(
        "researchers",
        sa.column("id"),
        sa.column("display_name"),
        sa.column("name_key"),
        sa.column("block_key"),
    )
    rows = conn.execute(
        sa.select(
            researchers.c.id, researchers.c.display_name, researchers.c.name_key, researchers.c.block_key
        )
    )
    updates = [
        {"rid": rid, "block": block}
        for rid, name, key, held in rows.all()
        if (block := block_of(name) or key) != held
    ]
    if updates:
        conn.execute(sa.text("UPDATE researchers SET block_key = :block WHERE id = :rid"), updates)


def downgrade() -> None:
    """Nothing to undo: block keys are derived from display names."""
