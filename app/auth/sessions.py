"""Server-side sessions: Litestar's session middleware with a stricter backend.

Litestar's ``ServerSideSessionBackend`` adopts whatever session id a cookie carries and writes a
session (and a cookie) for every response. This backend keeps Litestar's middleware and stores and
changes four things:

- **No adoption.** A cookie whose id the store does not know gives an empty session, and if the
  request then stores anything it goes under a *new* random id (a planted id never becomes a
  session); the stale cookie is expired.
- **A fresh id at sign-in.** :func:`begin_session` asks for rotation: the old id is deleted from
  the store and the session is written under a new one.
- **Idle and absolute expiry.** The store entry lives ``session_idle_minutes`` and every read
  renews it (atomically on Redis; one ``UPDATE`` on SQLite); the session records when it began
  and is dropped ``session_absolute_days`` later, however active. The cookie's Max-Age is the
  absolute lifetime.
- **Nothing for nobody.** An empty session writes nothing and sets no cookie, so anonymous pages
  carry no ``Set-Cookie`` (and the store does not fill up with crawlers); an unchanged session is
  not written back, so a request that raced a logout cannot bring the session back.

Ids are 256-bit random; the store key is an HMAC of the id under ``secret_key``, so a copy of the
store holds no usable cookie. The store is Redis (``RedisStore``) when configured, otherwise
:class:`SQLiteStore` at ``<data_dir>/sessions.sqlite3`` — a restart signs nobody out.
Cookies: ``HttpOnly``, ``SameSite=Lax``, and ``Secure`` with the ``__Host-`` prefix whenever the
public URL is https (everywhere but local development).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from litestar.concurrency import sync_to_thread
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie, MutableScopeHeaders
from litestar.middleware.session.server_side import ServerSideSessionBackend, ServerSideSessionConfig
from litestar.stores.base import Store
from litestar.stores.redis import RedisStore
from litestar.types import Empty, Message, ScopeSession

from coordination.redis import RedisError, async_client
from settings import Settings

log = logging.getLogger(__name__)
STORE_NAME = "sessions"
COOKIE = "wovepaper_session"
_STATE = "wovepaper.session"
_ID = re.compile(r"[0-9a-f]{64}")
# Keys of the session dict that the backend itself manages.
CREATED = "_created"


@dataclass(slots=True)
class _Incoming:
    """What the request came with, kept in the scope between load and store."""

    id: str | None = None  # a session id the store knew
    snapshot: bytes | None = None  # its stored bytes, to skip writing an unchanged session
    stale_cookie: bool = False  # a session cookie the store did not know (planted or expired)
    rotate: bool = False


class StrictSessionBackend(ServerSideSessionBackend):
    config: SessionConfig

    _secret: bytes | None = None

    def _key(self, session_id: str) -> str:
        if self._secret is None:
            assert self.config.settings is not None
            self._secret = secret_key(self.config.settings)
        return hmac.new(self._secret, session_id.encode(), hashlib.sha256).hexdigest()

    async def get(self, session_id: str, store: Store) -> bytes | None:
        return await store.get(self._key(session_id), renew_for=self.config.idle_seconds)

    async def set(self, session_id: str, data: bytes, store: Store) -> None:
        await store.set(self._key(session_id), data, expires_in=self.config.idle_seconds)

    async def delete(self, session_id: str, store: Store) -> None:
        await store.delete(self._key(session_id))

    async def load_from_connection(self, connection: ASGIConnection[Any, Any, Any, Any]) -> dict[str, Any]:
        incoming = _Incoming()
        connection.scope.setdefault("state", {})[_STATE] = incoming
        session_id = connection.cookies.get(self.config.key)
        if not session_id:
            return {}
        store = self.config.get_store_from_app(connection.scope["app"])
        data = await self.get(session_id, store) if _ID.fullmatch(session_id) else None
        if data is None:
            incoming.stale_cookie = True
            return {}
        session = self.deserialize_data(data)
        if time.time() - float(session.get(CREATED, 0)) > self.config.absolute_seconds:
            await self.delete(session_id, store)
            incoming.stale_cookie = True
            return {}
        incoming.id, incoming.snapshot = session_id, data
        return session

    def get_session_id(self, connection: ASGIConnection[Any, Any, Any, Any]) -> str:
        incoming = connection.scope.get("state", {}).get(_STATE)
        return incoming.id if incoming is not None and incoming.id else self.generate_session_id()

    async def store_in_message(
        self, scope_session: ScopeSession, message: Message, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> None:
        try:
            await self._store_in_message(scope_session, message, connection)
        except (RedisError, OSError, sqlite3.Error) as error:
            # The answer is already on its way: keep nothing rather than fail it. A request that
            # needs the session later gets a clear 503 when the store cannot be read.
            log.error("session not stored: %s", error)

    async def _store_in_message(
        self, scope_session: ScopeSession, message: Message, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> None:
        incoming: _Incoming | None = connection.scope.get("state", {}).get(_STATE)
        if incoming is None:
            return
        store = self.config.get_store_from_app(connection.scope["app"])
        headers = MutableScopeHeaders.from_message(message)
        current = incoming.id
        if incoming.rotate and current is not None:
            await self.delete(current, store)
            current = None
        if scope_session is Empty or not scope_session:
            if current is not None:
                await self.delete(current, store)
            if incoming.id is not None or incoming.stale_cookie:
                headers.add("Set-Cookie", self._cookie("null", max_age=0))
            return
        session: dict[str, Any] = dict(scope_session)  # type: ignore[arg-type]  # a dict here
        session.setdefault(CREATED, time.time())
        data = self.serialize_data(session, connection.scope)
        if current is not None and data == incoming.snapshot:
            return  # unchanged: reading it already renewed the idle timeout
        session_id = current or self.generate_session_id()
        await self.set(session_id, data, store)
        if session_id != incoming.id:
            lifetime = self.config.absolute_seconds - int(time.time() - float(session[CREATED]))
            headers.add("Set-Cookie", self._cookie(session_id, max_age=max(1, lifetime)))

    def _cookie(self, value: str, max_age: int) -> str:
        return Cookie(
            key=self.config.key,
            value=value,
            max_age=max_age,
            path="/",
            secure=self.config.secure,
            httponly=True,
            samesite="lax",
        ).to_header(header="")


@dataclass
class SessionConfig(ServerSideSessionConfig):
    """Litestar's config plus what the strict backend needs."""

    settings: Settings | None = None  # the secret is read (or made) on first use, not at app creation
    absolute_seconds: int = 30 * 86_400
    idle_seconds: int = 7 * 86_400
    _backend_class = StrictSessionBackend


def rotate_session(connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Store this request's session under a new id and delete the old one (at sign-in)."""
    incoming: _Incoming | None = connection.scope.get("state", {}).get(_STATE)
    if incoming is not None:
        incoming.rotate = True


def session_id(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """The id of the session the request came with, when the store knew it."""
    incoming: _Incoming | None = connection.scope.get("state", {}).get(_STATE)
    return incoming.id if incoming is not None else None


# -- the embedded store ------------------------------------------------------------------------


class SQLiteStore(Store):
    """A process-safe key/value store in one SQLite file (WAL): the embedded mode's session store.

    Renewing on read is one ``UPDATE … WHERE expires_at > now``, so a session deleted by a
    concurrent logout is never written back. Expired rows are purged now and then."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._writes = 0

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA busy_timeout=30000")
            db.execute(
                "CREATE TABLE IF NOT EXISTS store "
                "(key TEXT PRIMARY KEY, value BLOB NOT NULL, expires_at REAL)"
            )
            self._local.db = db
        return db

    @staticmethod
    def _seconds(value: int | timedelta | None) -> float | None:
        if value is None:
            return None
        return value.total_seconds() if isinstance(value, timedelta) else float(value)

    def _set(self, key: str, value: bytes, expires_in: float | None) -> None:
        now = time.time()
        expires = now + expires_in if expires_in is not None else None
        db = self._db()
        db.execute(
            "INSERT INTO store (key, value, expires_at) VALUES (?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at",
            (key, value, expires),
        )
        self._writes += 1
        if self._writes % 500 == 0:
            db.execute("DELETE FROM store WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,))

    def _get(self, key: str, renew_for: float | None) -> bytes | None:
        now = time.time()
        db = self._db()
        if renew_for is not None:
            db.execute(
                "UPDATE store SET expires_at = ? WHERE key = ? AND expires_at IS NOT NULL AND expires_at > ?",
                (now + renew_for, key, now),
            )
        row = db.execute(
            "SELECT value FROM store WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)", (key, now)
        ).fetchone()
        return bytes(row[0]) if row else None

    def _expires_in(self, key: str) -> int | None:
        row = self._db().execute("SELECT expires_at FROM store WHERE key = ?", (key,)).fetchone()
        if row is None or row[0] is None:
            return None
        left = int(row[0] - time.time())
        return left if left > 0 else None

    async def set(self, key: str, value: str | bytes, expires_in: int | timedelta | None = None) -> None:
        data = value.encode() if isinstance(value, str) else value
        await sync_to_thread(self._set, key, data, self._seconds(expires_in))

    async def get(self, key: str, renew_for: int | timedelta | None = None) -> bytes | None:
        return await sync_to_thread(self._get, key, self._seconds(renew_for))

    async def delete(self, key: str) -> None:
        await sync_to_thread(self._db().execute, "DELETE FROM store WHERE key = ?", (key,))

    async def delete_all(self) -> None:
        await sync_to_thread(self._db().execute, "DELETE FROM store")

    async def exists(self, key: str) -> bool:
        return await self.get(key) is not None

    async def expires_in(self, key: str) -> int | None:
        return await sync_to_thread(self._expires_in, key)


# -- wiring ------------------------------------------------------------------------------------


def secret_key(settings: Settings) -> bytes:
    """The configured secret, or (development) a random one kept in ``<data_dir>/secret_key`` so a
    restart keeps everyone signed in. Production refuses to start without a real one
    (:func:`settings.production_problems`)."""
    if settings.auth.secret_key:
        return settings.auth.secret_key.encode()
    path = settings.core.data_dir / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with path.open("x") as handle:  # only the first process to get here writes it
                handle.write(secrets.token_hex(32))
            path.chmod(0o600)
        except FileExistsError:
            pass
    return path.read_text().strip().encode()


def secure_cookies(settings: Settings) -> bool:
    """Secure (and ``__Host-``) cookies whenever the site is served over https."""
    return settings.public_url.startswith("https://")


def session_store(settings: Settings) -> Store:
    client = async_client(settings)
    if client is not None:
        namespace = f"{settings.worker.worker_queue}_sessions"  # the deployment's name on a shared Redis
        return RedisStore(client, namespace=namespace, handle_client_shutdown=True)
    return SQLiteStore(settings.core.data_dir / "sessions.sqlite3")


def session_config(settings: Settings) -> SessionConfig:
    secure = secure_cookies(settings)
    absolute = max(1, int(settings.auth.session_absolute_days * 86_400))
    idle = max(1, int(settings.auth.session_idle_minutes * 60))
    return SessionConfig(
        key=("__Host-" if secure else "") + COOKIE,
        secure=secure,
        httponly=True,
        samesite="lax",
        max_age=min(idle, absolute),
        store=STORE_NAME,
        settings=settings,
        absolute_seconds=absolute,
        idle_seconds=min(idle, absolute),
        # The MCP endpoint accepts no cookies: no session is read or written there (app/mcp.py).
        exclude=["^/static/", "^/mcp$"],
    )
