"""People and what is theirs, on the catalogue's ``Base`` (one schema, one Alembic history).

What is stored per person (the privacy page says the same): a display name and, when the provider
vouches for it, an e-mail address; each linked sign-in identity as (issuer, subject) with the
provider's name and when it was last used; API tokens as a SHA-256 hash with a name, scope, expiry
and last use; the researchers they follow; the hash of their private feed token. Sessions live in
the session store (Redis or ``<data_dir>/sessions.sqlite3``), never in these tables. Deleting a person
deletes every row below that points at them.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from catalog.models import Base


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Person(Base):
    __tablename__ = "people"

    id: Mapped[int] = mapped_column(primary_key=True)
    display_name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str | None] = mapped_column(String(320))
    # The researcher an ORCID sign-in proved them to be (the ORCID iD is the subject).
    researcher_id: Mapped[int | None] = mapped_column(
        ForeignKey("researchers.id", ondelete="SET NULL"), index=True
    )
    # SHA-256 of the private feed token; None: no feed.
    feed_token_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    last_signin_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


class Identity(Base):
    """A sign-in identity: the provider's issuer and its subject for this person."""

    __tablename__ = "identities"

    id: Mapped[int] = mapped_column(primary_key=True)
    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"), index=True)
    provider: Mapped[str] = mapped_column(String(32))  # "github", "google", "orcid", "oidc", "local"
    issuer: Mapped[str] = mapped_column(String(255))
    subject: Mapped[str] = mapped_column(String(255))
    email: Mapped[str | None] = mapped_column(String(320))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    last_used_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)

    __table_args__ = (UniqueConstraint("issuer", "subject", name="uq_identities_issuer_subject"),)


class ApiToken(Base):
    """A personal token for agents; only its hash is kept (the token is shown once)."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    scopes: Mapped[str] = mapped_column(String(100))  # space-separated, e.g. "chat read"
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    hint: Mapped[str] = mapped_column(String(16))  # the first characters, to recognise it in a list
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    last_used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))


class Follow(Base):
    __tablename__ = "follows"

    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"), primary_key=True)
    researcher_id: Mapped[int] = mapped_column(
        ForeignKey("researchers.id", ondelete="CASCADE"), primary_key=True
    )
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)

    __table_args__ = (Index("ix_follows_researcher", "researcher_id"),)


PERSONAL_TABLES = (Follow, ApiToken, Identity)  # everything of a person's, deleted before the person
