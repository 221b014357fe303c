"""Admission control for CPU-heavy work (search): bounded concurrency, a bounded queue, and the
excess shed at once with ``503`` and ``Retry-After`` instead of queueing without bound.

Each :class:`WorkGate` runs its work in threads of its own ``CapacityLimiter``, so at most
``concurrency`` calls run at once, at most ``queue`` more wait for a slot, and any further request
is refused before it costs anything. Pages and the JSON API keep the default thread pool and the
event loop to themselves: a burst of searches delays searches, never ``/healthz`` or a cached page.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread
from litestar.exceptions import ServiceUnavailableException

T = TypeVar("T")


class Overloaded(ServiceUnavailableException):
    """Shed: every slot is busy and the queue is full. Carries ``Retry-After``."""


class WorkGate:
    """At most ``concurrency`` calls at once (0: one per core), at most ``queue`` waiting."""

    def __init__(self, what: str, *, concurrency: int, queue: int, retry_after: int = 1) -> None:
        self.what = what
        self.concurrency = concurrency or os.cpu_count() or 1
        self.queue = queue
        self.retry_after = retry_after
        self.shed = 0  # requests refused so far (for the benchmark and the logs)
        self._limiter: anyio.CapacityLimiter | None = None

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        # Created on first use, inside the event loop that serves the requests.
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.concurrency)
        return self._limiter

    async def run(self, work: Callable[..., T], *args: object) -> T:
        """``work(*args)`` in a thread of this gate, or :class:`Overloaded` when the gate is full."""
        stats = self.limiter.statistics()
        if stats.borrowed_tokens >= self.concurrency and stats.tasks_waiting >= self.queue:
            self.shed += 1
            raise Overloaded(
                detail=f"Too many {self.what} are running right now; try again in {self.retry_after} s.",
                headers={"Retry-After": str(self.retry_after)},
            )
        return await anyio.to_thread.run_sync(work, *args, limiter=self.limiter)
