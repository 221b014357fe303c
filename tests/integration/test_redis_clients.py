"""The Redis clients of ``coordination.redis`` across a Redis restart: every pooled connection is
dead afterwards, and the next command on each must still succeed (redis-py alone fails it with
"Connection closed by server"), while a Redis that stays down is a quick, clear error."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from coordination.redis import RedisError, async_client, sync_client
from tests.integration.browse_catalogue import settings_for
from tests.integration.cluster_peers import RedisServer

pytestmark = pytest.mark.redis


async def test_a_restarted_redis_costs_no_command(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        settings = settings_for("sqlite://", {"WOVEPAPER_REDIS_URL": server.url})
        sync, asynchronous = sync_client(settings), async_client(settings)
        assert sync is not None and asynchronous is not None
        sync.set("kept", "1")
        assert await asynchronous.get("kept") == b"1"
        server.stop()  # written to the append-only file
        server.start()
        assert sync.get("kept") == b"1"
        assert await asynchronous.get("kept") == b"1"
        server.stop()
        started = time.monotonic()
        with pytest.raises(RedisError):
            await asynchronous.get("kept")
        with pytest.raises(RedisError):
            sync.get("kept")
        assert time.monotonic() - started < 3
        sync.close()
        await asynchronous.aclose()
    finally:
        server.stop()
