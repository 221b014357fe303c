"""accounts: people, their sign-in identities, API tokens and follows (models in ``accounts.models``)

Revision ID: 0006_accounts
Revises: 0004_browse_indexes
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_accounts"
down_revision = "0004_browse_indexes"
branch_labels = None
depends_on = None


def _person_fk() -> sa.Column[int]:
    return sa.Column(
        "person_id", sa.Integer(), sa.ForeignKey("people.id", ondelete="CASCADE"), nullable=False
    )


def upgrade() -> None:
    op.create_table(
        "people",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("display_name", sa.String(length=200), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("researcher_id", sa.Integer(), nullable=True),
        sa.Column("feed_token_hash", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_signin_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["researcher_id"],
            ["researchers.id"],
            name=op.f("fk_people_researcher_id_researchers"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_people")),
        sa.UniqueConstraint("feed_token_hash", name=op.f("uq_people_feed_token_hash")),
    )
    op.create_index(op.f("ix_people_researcher_id"), "people", ["researcher_id"], unique=False)

    op.create_table(
        "identities",
        sa.Column("id", sa.Integer(), nullable=False),
        _person_fk(),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("issuer", sa.String(length=255), nullable=False),
        sa.Column("subject", sa.String(length=255), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_identities")),
        sa.UniqueConstraint("issuer", "subject", name="uq_identities_issuer_subject"),
    )
    op.create_index(op.f("ix_identities_person_id"), "identities", ["person_id"], unique=False)

    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        _person_fk(),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("scopes", sa.String(length=100), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("hint", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_index(op.f("ix_api_tokens_person_id"), "api_tokens", ["person_id"], unique=False)

    op.create_table(
        "follows",
        _person_fk(),
        sa.Column(
            "researcher_id",
            sa.Integer(),
            sa.ForeignKey("researchers.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("person_id", "researcher_id", name=op.f("pk_follows")),
    )
    op.create_index("ix_follows_researcher", "follows", ["researcher_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_follows_researcher", table_name="follows")
    op.drop_table("follows")
    op.drop_index(op.f("ix_api_tokens_person_id"), table_name="api_tokens")
    op.drop_table("api_tokens")
    op.drop_index(op.f("ix_identities_person_id"), table_name="identities")
    op.drop_table("identities")
    op.drop_index(op.f("ix_people_researcher_id"), table_name="people")
    op.drop_table("people")
