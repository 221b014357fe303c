"""researchers, institution_names: folded keys refiled for transliterated letters

``catalog.names.fold`` now transliterates letters that have no accent to strip ("Søgaard" and
"Sogaard", "Łódź" and "Lodz", "Иван" and "Ivan" fold alike), so researchers are found where new
papers look for them and institutions by the names people print. Only keys that held such letters
change; ids and links do not.

Revision ID: 0010_transliterated_keys
Revises: 0009_refile_researcher_blocks
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from catalog.names import fold
from people.names import block_of

revision = "0010_transliterated_keys"
down_revision = "0009_refile_researcher_blocks"
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
    updates = []
    for rid, name, key, block in conn.execute(
        sa.select(
            researchers.c.id, researchers.c.display_name, researchers.c.name_key, researchers.c.block_key
        )
    ).all():
        if key.isascii() and block.isascii():
            continue
        new_key = fold(key) or key
        updates.append({"rid": rid, "key": new_key, "block": block_of(name) or new_key})
    if updates:
        conn.execute(
            sa.text("UPDATE researchers SET name_key = :key, block_key = :block WHERE id = :rid"), updates
        )
    names = sa.table("institution_names", sa.column("institution_id"), sa.column("name_key"))
    rows = conn.execute(sa.select(names.c.institution_id, names.c.name_key)).all()
    held = {(iid, key) for iid, key in rows}
    for iid, key in rows:
        if key.isascii() or not (new_key := fold(key)) or new_key == key:
            continue
        if (iid, new_key) in held:  # the institution already goes by the transliterated name
            conn.execute(
                sa.text("DELETE FROM institution_names WHERE institution_id = :iid AND name_key = :key"),
                {"iid": iid, "key": key},
            )
        else:
            conn.execute(
                sa.text(
                    "UPDATE institution_names SET name_key = :new WHERE institution_id = :iid AND name_key = :key"
                ),
                {"iid": iid, "key": key, "new": new_key},
            )
            held.add((iid, new_key))


def downgrade() -> None:
    """Nothing to undo: the keys are derived from the names."""
