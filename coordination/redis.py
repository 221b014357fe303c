"""The one module that imports ``redis``: clients for the configured ``WOVEPAPER_REDIS_URL``.

Everything that keeps state across processes (sessions, rate limits, the politeness gap to one
host, caches) asks here for its client, so connection settings live in one place. Returns None
when no Redis is configured: callers then use their documented in-process or file fallback.
"""

from __future__ import annotations

from typing import Any

from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as BrokenConnection
from redis.exceptions import RedisError
from redis.retry import Retry

from settings import Settings

__all__ = ["AsyncRedis", "Redis", "RedisError", "async_client", "sync_client"]

# Short timeouts: a Redis that stopped answering must turn into a clear error, not a hung request.
_TIMEOUT = 5.0
# After Redis restarts, every pooled connection is dead and redis-py (8.x) fails the next command on
# each one ("Connection closed by server"): retry a broken connection at once on a new one (twice,
# a few ms apart) so a restart costs no request. Timeouts are not retried: they stay one clear error.
_BACKOFF = {"cap": 0.2, "base": 0.02}


def _options(retry: Retry | AsyncRetry) -> dict[str, Any]:
    """What both clients are made with: the short timeouts and the retry of a broken connection."""
    return {
        "socket_timeout": _TIMEOUT,
        "socket_connect_timeout": _TIMEOUT,
        "retry": retry,
        "retry_on_error": [BrokenConnection],
    }


def sync_client(settings: Settings) -> Redis | None:
    url = settings.redis.redis_url
    if not url:
        return None
    return Redis.from_url(url, **_options(Retry(ExponentialBackoff(**_BACKOFF), 2)))


def async_client(settings: Settings) -> AsyncRedis | None:
    url = settings.redis.redis_url
    if not url:
        return None
    return AsyncRedis.from_url(url, **_options(AsyncRetry(ExponentialBackoff(**_BACKOFF), 2)))
