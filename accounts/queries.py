"""Everything the app asks of accounts, one function per question. Each takes a catalogue session;
writers leave committing to the caller (``catalog.db.transaction``), so one request is one
transaction. Every function that reads or changes a person's things takes that person's id and
filters by it: a person can never reach another person's rows by guessing ids.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import CursorResult, Delete, delete, func, select, update
from sqlalchemy.orm import Session

from accounts.models import PERSONAL_TABLES, ApiToken, Follow, Identity, Person
from catalog.db import as_utc
from catalog.models import Researcher
from catalog.papers import PaperSummary
from catalog.researchers import papers_by_researchers
from catalog.text import human_text
from catalog.urls import researcher_path

TOKEN_PREFIX = "wvp_"  # noqa: S105 - a marker, not a secret
FEED_PREFIX = "wvf_"
# read: agent endpoints and MCP; chat: the chat API; fulltext: ask for a paper's full text (a fetch
# from arXiv, counted against the person's daily quota).
SCOPES = ("read", "chat", "fulltext")
# A token's last use is written at most this often (a write per API request would be a write
# transaction per request on SQLite).
_LAST_USED_EVERY = dt.timedelta(minutes=1)


class AccountError(ValueError):
    """A request about an account that cannot be done, with a reason written for the person."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _deleted(session: Session, statement: Delete) -> bool:
    return cast("CursorResult[Any]", session.execute(statement)).rowcount > 0


def token_hash(token: str) -> str:
    """Tokens are 256-bit random strings, so a plain SHA-256 is a safe way to keep them."""
    return hashlib.sha256(token.encode()).hexdigest()


# -- values ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PersonView:
    id: int
    display_name: str
    email: str | None
    researcher_id: int | None
    has_feed: bool
    created_at: dt.datetime


@dataclass(frozen=True, slots=True)
class IdentityView:
    id: int
    provider: str
    issuer: str
    subject: str
    email: str | None
    created_at: dt.datetime
    last_used_at: dt.datetime


@dataclass(frozen=True, slots=True)
class TokenView:
    id: int
    name: str
    scopes: tuple[str, ...]
    hint: str
    created_at: dt.datetime
    expires_at: dt.datetime | None
    last_used_at: dt.datetime | None


@dataclass(frozen=True, slots=True)
class Bearer:
    """Who a valid API token belongs to, and what it may do."""

    person_id: int
    token_id: int
    scopes: frozenset[str]


@dataclass(frozen=True, slots=True)
class FollowedResearcher:
    id: int
    name: str
    since: dt.datetime

    @property
    def path(self) -> str:
        return researcher_path(self.id, self.name)


@dataclass(frozen=True, slots=True)
class SignedIn:
    person_id: int
    display_name: str
    created: bool  # a new person
    linked: bool  # a new identity for an existing person


# -- people and identities ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Profile:
    """Who a sign-in provider says signed in (``app.auth.oauth`` reads it from the provider)."""

    provider: str
    issuer: str
    subject: str
    name: str | None
    email: str | None  # only an address the provider says is verified


def sign_in(session: Session, profile: Profile, *, link_to: int | None = None) -> SignedIn:
    """The person an identity belongs to, creating the person (or, with ``link_to``, linking the
    identity to that signed-in person). Raises :class:`AccountError` when ``link_to`` asks for an
    identity that already belongs to someone else."""
    now = _now()
    identity = session.execute(
        select(Identity).where(Identity.issuer == profile.issuer, Identity.subject == profile.subject)
    ).scalar_one_or_none()
    created = linked = False
    if identity is not None:
        if link_to is not None and identity.person_id != link_to:
            raise AccountError(
                "That sign-in already belongs to another account here. Sign in with it and delete "
                "that account first if you want to move it."
            )
        identity.last_used_at = now
        if profile.email:
            identity.email = profile.email
        person = session.get(Person, identity.person_id)
        assert person is not None
    else:
        if link_to is not None:
            person = session.get(Person, link_to)
            if person is None:
                raise AccountError("Your account no longer exists; sign in again.")
            linked = True
        else:
            person = Person(display_name=_display_name(profile), email=profile.email)
            session.add(person)
            session.flush()
            created = True
        session.add(
            Identity(
                person_id=person.id,
                provider=profile.provider,
                issuer=profile.issuer,
                subject=profile.subject,
                email=profile.email,
                created_at=now,
                last_used_at=now,
            )
        )
    if profile.provider == "orcid" and person.researcher_id is None:
        # The ORCID iD is the subject: it proves which catalogued researcher this person is.
        person.researcher_id = session.execute(
            select(Researcher.id).where(Researcher.orcid == profile.subject).order_by(Researcher.id).limit(1)
        ).scalar_one_or_none()
    if profile.email and not person.email:
        person.email = profile.email
    person.last_signin_at = now
    session.flush()
    return SignedIn(person.id, person.display_name, created, linked)


def _display_name(profile: Profile) -> str:
    for candidate in (profile.name, (profile.email or "").split("@")[0], profile.subject):
        if candidate and human_text(candidate):
            return human_text(candidate)[:200]
    return "Reader"


def person(session: Session, person_id: int) -> PersonView | None:
    row = session.get(Person, person_id)
    if row is None:
        return None
    return PersonView(
        row.id,
        row.display_name,
        row.email,
        row.researcher_id,
        row.feed_token_hash is not None,
        as_utc(row.created_at) or _now(),
    )


def identities(session: Session, person_id: int) -> list[IdentityView]:
    rows = session.execute(
        select(Identity).where(Identity.person_id == person_id).order_by(Identity.created_at, Identity.id)
    ).scalars()
    return [
        IdentityView(
            r.id,
            r.provider,
            r.issuer,
            r.subject,
            r.email,
            as_utc(r.created_at) or _now(),
            as_utc(r.last_used_at) or _now(),
        )
        for r in rows
    ]


def unlink_identity(session: Session, person_id: int, identity_id: int) -> None:
    """Remove one of a person's identities; the last one cannot go (delete the account instead)."""
    owned = (
        session.execute(select(Identity.id).where(Identity.person_id == person_id).with_for_update())
        .scalars()
        .all()
    )
    if identity_id not in owned:
        raise LookupError(identity_id)
    if len(owned) == 1:
        raise AccountError(
            "This is the only way you sign in here; link another provider first, or delete the account."
        )
    session.execute(delete(Identity).where(Identity.id == identity_id, Identity.person_id == person_id))


def delete_person(session: Session, person_id: int) -> bool:
    """Delete a person and every row of theirs (identities, tokens, follows)."""
    for table in PERSONAL_TABLES:
        session.execute(delete(table).where(table.person_id == person_id))
    return _deleted(session, delete(Person).where(Person.id == person_id))


def export(session: Session, person_id: int) -> dict[str, Any] | None:
    """Everything stored about a person, as JSON-ready data (token and feed secrets are not kept,
    so they cannot be exported)."""
    found = person(session, person_id)
    if found is None:
        return None

    def iso(value: dt.datetime | None) -> str | None:
        return value.isoformat() if value else None

    return {
        "person": {
            "id": found.id,
            "display_name": found.display_name,
            "email": found.email,
            "researcher_id": found.researcher_id,
            "private_feed": found.has_feed,
            "created_at": iso(found.created_at),
        },
        "identities": [
            {
                "provider": i.provider,
                "issuer": i.issuer,
                "subject": i.subject,
                "email": i.email,
                "created_at": iso(i.created_at),
                "last_used_at": iso(i.last_used_at),
            }
            for i in identities(session, person_id)
        ],
        "api_tokens": [
            {
                "name": t.name,
                "scopes": list(t.scopes),
                "hint": t.hint,
                "created_at": iso(t.created_at),
                "expires_at": iso(t.expires_at),
                "last_used_at": iso(t.last_used_at),
            }
            for t in tokens(session, person_id)
        ],
        "follows": [
            {"researcher_id": f.id, "name": f.name, "since": iso(f.since)}
            for f in followed(session, person_id)
        ],
    }


# -- API tokens --------------------------------------------------------------------------------


def create_token(
    session: Session, person_id: int, *, name: str, scopes: set[str], expires_at: dt.datetime | None
) -> tuple[str, TokenView]:
    """A new token: the secret (shown once, never stored) and what is stored about it."""
    name = human_text(name)
    if not name or len(name) > 100:
        raise AccountError("Give the token a name of 1 to 100 characters, e.g. the agent that will use it.")
    unknown = scopes - set(SCOPES)
    if not scopes or unknown:
        raise AccountError(f"Choose the token's scope from: {', '.join(SCOPES)}.")
    if expires_at is not None and expires_at <= _now():
        raise AccountError("The expiry date must be in the future.")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(
        person_id=person_id,
        name=name,
        scopes=" ".join(sorted(scopes)),
        token_hash=token_hash(secret),
        hint=secret[: len(TOKEN_PREFIX) + 4],
        created_at=_now(),
        expires_at=expires_at,
    )
    session.add(row)
    session.flush()
    return secret, _token_view(row)


def _token_view(row: ApiToken) -> TokenView:
    return TokenView(
        row.id,
        row.name,
        tuple(row.scopes.split()),
        row.hint,
        as_utc(row.created_at) or _now(),
        as_utc(row.expires_at),
        as_utc(row.last_used_at),
    )


def tokens(session: Session, person_id: int) -> list[TokenView]:
    rows = session.execute(
        select(ApiToken).where(ApiToken.person_id == person_id).order_by(ApiToken.created_at, ApiToken.id)
    ).scalars()
    return [_token_view(r) for r in rows]


def revoke_token(session: Session, person_id: int, token_id: int) -> bool:
    """Delete one of the person's tokens (False: they have no such token)."""
    return _deleted(session, delete(ApiToken).where(ApiToken.id == token_id, ApiToken.person_id == person_id))


def bearer(session: Session, secret: str) -> Bearer | None:
    """The owner and scopes of a valid, unexpired token; None for anything else."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 100:
        return None
    row = session.execute(
        select(ApiToken).where(ApiToken.token_hash == token_hash(secret))
    ).scalar_one_or_none()
    if row is None:
        return None
    now = _now()
    expires = as_utc(row.expires_at)
    if expires is not None and expires <= now:
        return None
    last = as_utc(row.last_used_at)
    if last is None or now - last > _LAST_USED_EVERY:
        session.execute(update(ApiToken).where(ApiToken.id == row.id).values(last_used_at=now))
    return Bearer(row.person_id, row.id, frozenset(row.scopes.split()))


# -- follows and the private feed --------------------------------------------------------------


def researcher_exists(session: Session, researcher_id: int) -> bool:
    return session.get(Researcher, researcher_id) is not None


def follow(session: Session, person_id: int, researcher_id: int) -> None:
    if not researcher_exists(session, researcher_id):
        raise LookupError(researcher_id)
    if session.get(Follow, (person_id, researcher_id)) is None:
        session.add(Follow(person_id=person_id, researcher_id=researcher_id, created_at=_now()))
        session.flush()


def unfollow(session: Session, person_id: int, researcher_id: int) -> None:
    session.execute(
        delete(Follow).where(Follow.person_id == person_id, Follow.researcher_id == researcher_id)
    )


def is_following(session: Session, person_id: int, researcher_id: int) -> bool:
    return session.get(Follow, (person_id, researcher_id)) is not None


def followed(session: Session, person_id: int) -> list[FollowedResearcher]:
    rows = session.execute(
        select(Researcher.id, Researcher.display_name, Follow.created_at)
        .join(Follow, Follow.researcher_id == Researcher.id)
        .where(Follow.person_id == person_id)
        .order_by(func.lower(Researcher.display_name), Researcher.id)
    ).all()
    return [FollowedResearcher(r.id, r.display_name, as_utc(r.created_at) or _now()) for r in rows]


def followed_papers(session: Session, person_id: int, *, limit: int) -> list[PaperSummary]:
    """The newest papers by the researchers a person follows."""
    ids = session.execute(select(Follow.researcher_id).where(Follow.person_id == person_id)).scalars().all()
    return papers_by_researchers(session, ids, limit=limit)


def new_feed_token(session: Session, person_id: int) -> str:
    """A fresh private feed token (the old one stops working); shown once, stored hashed."""
    secret = FEED_PREFIX + secrets.token_urlsafe(32)
    session.execute(update(Person).where(Person.id == person_id).values(feed_token_hash=token_hash(secret)))
    return secret


def revoke_feed(session: Session, person_id: int) -> None:
    session.execute(update(Person).where(Person.id == person_id).values(feed_token_hash=None))


def feed_owner(session: Session, secret: str) -> int | None:
    if not secret.startswith(FEED_PREFIX) or len(secret) > 100:
        return None
    return session.execute(
        select(Person.id).where(Person.feed_token_hash == token_hash(secret))
    ).scalar_one_or_none()
