"""The one module that imports ``redis``: clients for the configured ``WOVEPAPER_REDIS_URL``.

Everything that keeps state across processes (sessions, rate limits, the politeness gap to one
host, caches) asks here for its client, so connection settings live in one place. Returns None
when no Redis is configured: callers then use their documented in-process or file fallback.
"""

from __future__ import annotations

from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import RedisError

from settings import Settings

__all__ = ["AsyncRedis", "Redis", "RedisError", "async_client", "sync_client"]

# Short timeouts: a Redis that stopped answering must turn into a clear error, not a hung request.
_TIMEOUT = 5.0


def sync_client(settings: Settings) -> Redis | None:
    url = settings.redis.redis_url
    return Redis.from_url(url, socket_timeout=_TIMEOUT, socket_connect_timeout=_TIMEOUT) if url else None


def async_client(settings: Settings) -> AsyncRedis | None:
    url = settings.redis.redis_url
    return AsyncRedis.from_url(url, socket_timeout=_TIMEOUT, socket_connect_timeout=_TIMEOUT) if url else None
