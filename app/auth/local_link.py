"""The local sign-in link of the embedded single-machine default (as Jupyter's token URL).

When no provider is configured and the server listens on a loopback address, start-up prints a
URL with a random one-time token; opening it signs in "the local reader" (one account, keyed by
the issuer ``urn:wovepaper:local``) and the token is gone. It expires after
``local_signin_minutes``; a restart prints a new one. It is off whenever a provider is configured
or the server binds another address, and production refuses to start with it switched on.
The token lives hashed in the session store with its expiry; redeeming it is single-use across
processes (a limit of one hit per key).
"""

from __future__ import annotations

import hashlib
import secrets

from litestar.stores.base import Store

from coordination.limits import Limiter
from settings import Settings, is_loopback

ISSUER = "urn:wovepaper:local"
SUBJECT = "local"
PATH = "/signin/local"
_PREFIX = "local-link:"


def available(settings: Settings, providers_configured: bool) -> bool:
    return (
        settings.auth.local_signin
        and not providers_configured
        and is_loopback(settings.server.host)
        and settings.core.environment != "production"
    )


def _key(token: str) -> str:
    return _PREFIX + hashlib.sha256(token.encode()).hexdigest()


async def mint(store: Store, minutes: int) -> str:
    """A new one-time token, valid ``minutes``."""
    token = secrets.token_urlsafe(32)
    await store.set(_key(token), b"1", expires_in=minutes * 60)
    return token


async def redeem(store: Store, limiter: Limiter, token: str, minutes: int) -> bool:
    """True once for a valid, unexpired token; False for anything else (and ever after)."""
    if not token or len(token) > 100:
        return False
    key = _key(token)
    if await store.get(key) is None:
        return False
    first = await limiter.hit(key, 1, minutes * 60)
    await store.delete(key)
    return first.allowed
