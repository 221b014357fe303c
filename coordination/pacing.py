"""Pacing requests to one outside service across every process of a deployment.

A *reservation* is a time slot. :meth:`Pacer.reserve` atomically takes the next free slot of a key
(now, or ``interval`` seconds after the slot before it, whichever is later) and returns how long the
caller must sleep until its slot begins. So the slots of one key are at least ``interval`` apart
whichever process or thread holds them, and callers that wait queue in the order they reserved.
The interval runs from the start of one request to the start of the next.

A holder that crashes between reserving and sending leaves its slot unused: the next caller waits
at most one interval longer than it had to, and nothing is left to clean up (no lock is held across
the wait or the request).

Where the slots are kept:

- **Redis**, when ``WOVEPAPER_REDIS_URL`` is set: one key per pace key, taken by a Lua script that
  reads Redis's own clock, so processes on different machines agree however their clocks drift.
  The key expires a second after its slot has passed.
- otherwise **a small file per key** under ``<data_dir>/pacing/``, read and rewritten under an
  exclusive ``flock``: every process on one machine that shares the data dir shares the slots (the
  web app, its worker thread, the CLI, a second worker). The kernel drops the lock of a process
  that dies, so a crash never blocks the others.
"""

from __future__ import annotations

import fcntl
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from coordination.redis import Redis, RedisError, sync_client
from settings import Settings

REDIS_PREFIX = "wovepaper:pace:"
# Microseconds throughout: Lua numbers are doubles, exact for integers up to 2^53 (~285 years of µs
# since 1970), and Lua's tostring would round a large one to 14 digits, hence the %.0f.
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local free = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local slot = math.max(now, free)
local after = slot + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%.0f', after), 'PX', math.ceil((after - now) / 1000) + 1000)
return string.format('%.0f', slot - now)
"""


class PacingUnavailable(RuntimeError):
    """The place that keeps the slots (Redis, or the pacing folder) cannot be used right now."""


class Pacer(Protocol):
    def reserve(self, key: str, interval: float) -> float:
        """Take the next free slot of ``key``; the seconds to wait until it begins (0 or more)."""
        ...


class RedisPacer:
    """Slots kept on Redis (see the module docstring)."""

    def __init__(self, client: Redis, prefix: str = REDIS_PREFIX) -> None:
        self.prefix = prefix
        self._reserve = client.register_script(_RESERVE)

    def reserve(self, key: str, interval: float) -> float:
        try:
            wait = self._reserve(keys=[self.prefix + key], args=[round(interval * 1_000_000)])
        except RedisError as exc:
            raise PacingUnavailable(f"cannot reserve a request slot on Redis: {exc}") from exc
        return int(wait) / 1_000_000


class FilePacer:
    """Slots kept in files under ``folder``, one per key (see the module docstring). Each file holds
    the next free slot and when it was written, in seconds of ``clock`` (wall-clock time, which every
    process of the machine shares)."""

    def __init__(self, folder: Path, clock: Callable[[], float] = time.time) -> None:
        self.folder = folder
        self.clock = clock

    def reserve(self, key: str, interval: float) -> float:
        path = self.folder / (re.sub(r"[^A-Za-z0-9._-]", "_", key) or "_")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            with os.fdopen(fd, "r+", encoding="ascii") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed
                now = self.clock()
                slot = max(now, _next_free(handle.read(), now))
                handle.seek(0)
                handle.truncate()
                handle.write(f"{slot + interval!r} {now!r}\n")
        except OSError as exc:
            raise PacingUnavailable(f"cannot reserve a request slot in {path}: {exc}") from exc
        return slot - now


def _next_free(text: str, now: float) -> float:
    """The stored next free slot; none when the file is new or unreadable, or when it was written
    in what is now the future (the clock was set back: waiting for that slot could take hours)."""
    try:
        free, written = map(float, text.split())
    except ValueError:
        return 0.0
    return free if written <= now else 0.0


def pacer(settings: Settings) -> Pacer:
    """Redis when it is configured, else the pacing folder under the data dir."""
    client = sync_client(settings)
    if client is not None:
        return RedisPacer(client)
    return FilePacer(settings.core.data_dir / "pacing")
