"""The in-app queue in front of the model: at most ``concurrency`` generations, at most ``waiting``
more waiting, and anything beyond refused at once (the chat then answers with a busy notice)."""

from __future__ import annotations

import asyncio

import pytest

from chat.llm import LLMBusy, Queue


def test_beyond_the_queue_is_refused_at_once_and_waiting_ones_get_their_turn() -> None:
    async def scenario() -> list[str]:
        queue = Queue(concurrency=1, waiting=1)
        order: list[str] = []
        release = asyncio.Event()

        async def generate(name: str) -> None:
            async with queue.turn():
                order.append(name)
                await release.wait()

        first = asyncio.create_task(generate("first"))
        await asyncio.sleep(0)
        second = asyncio.create_task(generate("second"))  # waits
        await asyncio.sleep(0)
        with pytest.raises(LLMBusy):
            async with queue.turn():
                pass
        release.set()
        await asyncio.gather(first, second)
        async with queue.turn():  # free again
            order.append("third")
        return order

    assert asyncio.run(scenario()) == ["first", "second", "third"]
