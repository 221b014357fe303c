"""Rate limits that hold across processes: counts per window, cost-weighted budgets and
concurrent slots.

With Redis configured every decision is one Lua script, so it is atomic across any number of web
processes (Litestar's own limiter reads, then writes, per process: N workers admit up to N times
the limit). Without Redis (the embedded single-process default) the same rules run in-process.

- :meth:`Limiter.hit` — at most ``limit`` units per window; the window starts at the first hit of
  a key and lasts ``window`` seconds, so a burst shorter than the window is admitted at most
  ``limit`` times. ``cost`` weighs a hit (tokens per day: ``hit(key, 200_000, 86_400, cost=n)``).
  A refused hit costs nothing and tells when the window ends (``retry_after``).
- :meth:`Limiter.charge` — record usage that already happened (the tokens an answer took), refused
  or not; later hits see it.
- :meth:`Limiter.slot` — at most ``limit`` holders at once (open chat streams per person). A slot
  lives ``ttl`` seconds unless refreshed, and the context manager refreshes it while held, so a
  process that crashes frees its slots within ``ttl``.

Keys are free-form (``"chat:person:12"``); :class:`LimitExceeded` carries ``retry_after`` for a 429.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from coordination.redis import AsyncRedis, async_client
from settings import Settings


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    remaining: int  # units left in this window after this hit (0 when refused)
    retry_after: float  # seconds until the window ends (when refused: when to try again)


class LimitExceeded(Exception):
    """A limit refused a request; ``retry_after`` seconds until it may succeed."""

    def __init__(self, what: str, retry_after: float) -> None:
        super().__init__(what)
        self.what = what
        self.retry_after = retry_after

    @property
    def retry_after_header(self) -> str:
        return str(max(1, math.ceil(self.retry_after)))


@dataclass(slots=True)
class Slot:
    key: str
    id: str
    ttl: float


class Limiter:
    """What callers use; :class:`RedisLimiter` and :class:`LocalLimiter` implement it."""

    async def hit(self, key: str, limit: int, window: float, cost: int = 1) -> Decision:
        raise NotImplementedError

    async def charge(self, key: str, window: float, cost: int) -> int:
        raise NotImplementedError

    async def acquire(self, key: str, limit: int, ttl: float) -> tuple[Slot | None, float]:
        """A slot, or None and the seconds until the oldest holder's slot lapses."""
        raise NotImplementedError

    async def refresh(self, slot: Slot) -> bool:
        raise NotImplementedError

    async def release(self, slot: Slot) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    @contextlib.asynccontextmanager
    async def slot(self, key: str, limit: int, ttl: float, what: str = "concurrent") -> AsyncIterator[Slot]:
        held, retry_after = await self.acquire(key, limit, ttl)
        if held is None:
            raise LimitExceeded(what, retry_after)

        async def heartbeat() -> None:
            while True:
                await asyncio.sleep(ttl / 3)
                await self.refresh(held)

        beating = asyncio.create_task(heartbeat())
        try:
            yield held
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating
            await self.release(held)


# -- Redis -------------------------------------------------------------------------------------

# KEYS[1] counter; ARGV cost, limit, window (ms). Refuses without counting when over the limit.
_HIT = """
local cost = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used + cost > limit then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then ttl = window end
  return {0, limit - used, ttl}
end
used = redis.call('INCRBY', KEYS[1], cost)
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], window)
  ttl = window
end
return {1, limit - used, ttl}
"""

# KEYS[1] counter; ARGV cost, window (ms). Counts unconditionally; returns the new total.
_CHARGE = """
local used = redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]))
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
return used
"""

# KEYS[1] sorted set of slot ids scored by expiry (ms, Redis's clock); ARGV ttl (ms), limit, id.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2]) - now}
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
return {1, 0}
"""

# KEYS[1] slot set; ARGV ttl (ms), id. Extends a held slot; 0 when it had already lapsed.
_REFRESH = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[2])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"""


class RedisLimiter(Limiter):
    def __init__(self, client: AsyncRedis, prefix: str = "wovepaper:limits:") -> None:
        self._client = client
        self._prefix = prefix
        self._hit = client.register_script(_HIT)
        self._charge = client.register_script(_CHARGE)
        self._acquire = client.register_script(_ACQUIRE)
        self._refresh = client.register_script(_REFRESH)

    async def hit(self, key: str, limit: int, window: float, cost: int = 1) -> Decision:
        allowed, remaining, ttl_ms = await self._hit(
            keys=[self._prefix + key], args=[cost, limit, _ms(window)]
        )
        return Decision(bool(allowed), max(0, int(remaining)), int(ttl_ms) / 1000)

    async def charge(self, key: str, window: float, cost: int) -> int:
        return int(await self._charge(keys=[self._prefix + key], args=[cost, _ms(window)]))

    async def acquire(self, key: str, limit: int, ttl: float) -> tuple[Slot | None, float]:
        slot = Slot(self._prefix + "slots:" + key, secrets.token_hex(8), ttl)
        ok, wait_ms = await self._acquire(keys=[slot.key], args=[_ms(ttl), limit, slot.id])
        return (slot, 0.0) if ok else (None, max(0, int(wait_ms)) / 1000)

    async def refresh(self, slot: Slot) -> bool:
        return bool(await self._refresh(keys=[slot.key], args=[_ms(slot.ttl), slot.id]))

    async def release(self, slot: Slot) -> None:
        await self._client.zrem(slot.key, slot.id)

    async def close(self) -> None:
        await self._client.aclose()


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


# -- in-process --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Window:
    ends: float
    used: int = 0


@dataclass(slots=True)
class _SlotSet:
    holders: dict[str, float] = field(default_factory=dict)  # id -> expiry (monotonic)


class LocalLimiter(Limiter):
    """The same rules in one process (a lock, not an event loop: safe from any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: dict[str, _Window] = {}
        self._slots: dict[str, _SlotSet] = {}

    def _window(self, key: str, window: float, now: float) -> _Window:
        current = self._windows.get(key)
        if current is None or current.ends <= now:
            current = self._windows[key] = _Window(now + window)
            if len(self._windows) > 10_000:  # forget finished windows now and then
                self._windows = {k: w for k, w in self._windows.items() if w.ends > now}
                self._windows[key] = current
        return current

    async def hit(self, key: str, limit: int, window: float, cost: int = 1) -> Decision:
        now = time.monotonic()
        with self._lock:
            current = self._window(key, window, now)
            if current.used + cost > limit:
                return Decision(False, max(0, limit - current.used), current.ends - now)
            current.used += cost
            return Decision(True, limit - current.used, current.ends - now)

    async def charge(self, key: str, window: float, cost: int) -> int:
        with self._lock:
            current = self._window(key, window, time.monotonic())
            current.used += cost
            return current.used

    async def acquire(self, key: str, limit: int, ttl: float) -> tuple[Slot | None, float]:
        now = time.monotonic()
        with self._lock:
            held = self._slots.setdefault(key, _SlotSet())
            held.holders = {i: until for i, until in held.holders.items() if until > now}
            if len(held.holders) >= limit:
                return None, min(held.holders.values()) - now
            slot = Slot(key, secrets.token_hex(8), ttl)
            held.holders[slot.id] = now + ttl
            return slot, 0.0

    async def refresh(self, slot: Slot) -> bool:
        with self._lock:
            held = self._slots.get(slot.key)
            if held is None or slot.id not in held.holders:
                return False
            held.holders[slot.id] = time.monotonic() + slot.ttl
            return True

    async def release(self, slot: Slot) -> None:
        with self._lock:
            if (held := self._slots.get(slot.key)) is not None:
                held.holders.pop(slot.id, None)

    async def close(self) -> None:
        return None


def make_limiter(settings: Settings, prefix: str = "wovepaper:limits:") -> Limiter:
    """Redis when configured (shared by every process), otherwise in-process."""
    client = async_client(settings)
    return RedisLimiter(client, prefix) if client is not None else LocalLimiter()
