"""The limiter's rules, on the real Redis (atomic across clients) and in-process (the embedded
default): counts per window, cost-weighted budgets, charges, concurrent slots that a crashed holder
frees. Both implementations must agree."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from coordination.limits import Limiter, LimitExceeded, LocalLimiter, RedisLimiter
from coordination.redis import AsyncRedis
from tests.conftest import REDIS_TEST_URL


@pytest.fixture(params=["redis", "local"])
async def limiter(request: pytest.FixtureRequest) -> AsyncIterator[Limiter]:
    if request.param == "local":
        yield LocalLimiter()
        return
    prefix = f"test-limits-{uuid.uuid4().hex[:12]}:"
    client = AsyncRedis.from_url(REDIS_TEST_URL)
    made = RedisLimiter(client, prefix)
    try:
        yield made
    finally:
        cleanup = AsyncRedis.from_url(REDIS_TEST_URL)
        async for key in cleanup.scan_iter(match=prefix + "*"):
            await cleanup.delete(key)
        await cleanup.aclose()
        await made.close()


async def test_a_burst_is_admitted_at_most_limit_times(limiter: Limiter) -> None:
    decisions = await asyncio.gather(*(limiter.hit("burst", 10, 60) for _ in range(60)))
    allowed = [d for d in decisions if d.allowed]
    assert len(allowed) == 10
    refused = [d for d in decisions if not d.allowed]
    assert all(0 < d.retry_after <= 60 for d in refused)
    assert sorted(d.remaining for d in allowed) == list(range(10))


async def test_costs_weigh_hits_and_a_refused_hit_costs_nothing(limiter: Limiter) -> None:
    assert (await limiter.hit("tokens", 10, 60, cost=7)).allowed
    refused = await limiter.hit("tokens", 10, 60, cost=4)
    assert not refused.allowed and refused.remaining == 3
    assert (await limiter.hit("tokens", 10, 60, cost=3)).allowed
    assert not (await limiter.hit("tokens", 10, 60, cost=1)).allowed


async def test_charges_count_even_past_the_limit(limiter: Limiter) -> None:
    assert await limiter.charge("spent", 60, 8) == 8
    assert await limiter.charge("spent", 60, 8) == 16
    assert not (await limiter.hit("spent", 10, 60)).allowed


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 15.0) -> float:
    """Seconds until ``check`` holds, polling; fails after ``within`` (a deadline, not a stopwatch:
    a busy machine may be slow, never wrong)."""
    started = time.monotonic()
    while not await check():
        assert time.monotonic() - started < within, "the condition never held"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def test_a_window_ends_and_the_count_starts_again(limiter: Limiter) -> None:
    started = time.monotonic()
    assert (await limiter.hit("short", 1, 2)).allowed
    assert not (await limiter.hit("short", 1, 2)).allowed
    waited = await eventually(lambda: _allowed(limiter.hit("short", 1, 2)))
    assert time.monotonic() - started >= 1.9 - 0.05  # not before the window ended
    assert waited > 0


async def test_slots_are_limited_released_and_lapse_when_a_holder_dies(limiter: Limiter) -> None:
    first, _ = await limiter.acquire("streams", 2, 30)
    second, _ = await limiter.acquire("streams", 2, 30)
    third, wait = await limiter.acquire("streams", 2, 30)
    assert first and second and third is None and 0 < wait <= 30
    await limiter.release(first)
    assert (await limiter.acquire("streams", 2, 30))[0] is not None

    crashed, _ = await limiter.acquire("crash", 1, 2)  # never released: its process died
    assert crashed is not None and (await limiter.acquire("crash", 1, 2))[0] is None
    await eventually(lambda: _acquired(limiter.acquire("crash", 1, 2)))  # the slot lapses


async def test_a_held_slot_is_kept_alive_and_freed_on_exit(limiter: Limiter) -> None:
    async with limiter.slot("held", 1, 0.6):
        await asyncio.sleep(1.5)  # longer than the ttl: the heartbeat renews it
        with pytest.raises(LimitExceeded) as refused:
            async with limiter.slot("held", 1, 0.6):
                pass
        assert int(refused.value.retry_after_header) >= 1
    async with limiter.slot("held", 1, 0.6):
        pass


async def _allowed(hit: Awaitable[Any]) -> bool:
    return bool((await hit).allowed)


async def _acquired(acquiring: Awaitable[tuple[Any, float]]) -> bool:
    return (await acquiring)[0] is not None
