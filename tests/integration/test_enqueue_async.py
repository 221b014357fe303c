"""The web app runs on an event loop: it enqueues by awaiting, on the embedded queue and on SAQ."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import Engine

from indexing import status
from indexing.contract import PdfJob
from indexing.enqueue import enqueue_pdfs_async
from indexing.queue import EmbeddedQueue, SaqQueue
from tests.conftest import REDIS_TEST_URL, drop_saq_queue
from tests.integration.indexing_peers import import_papers

IDS = ["2405.00001", "2405.00002"]


async def test_enqueue_from_an_event_loop_on_the_embedded_queue(engine: Engine) -> None:
    import_papers(engine, IDS)
    queue = EmbeddedQueue(engine)
    report = await enqueue_pdfs_async(engine, queue, [PdfJob(i) for i in IDS], collection="c")
    again = await enqueue_pdfs_async(engine, queue, [PdfJob(i) for i in IDS], collection="c")
    assert (report.queued, again.queued, again.already_pending) == (2, 0, 2)
    assert queue.counts() == {"queued": 2}
    assert {r.arxiv_id for r in status.unfinished(engine)} == set(IDS)


@pytest.mark.redis
async def test_enqueue_from_an_event_loop_on_saq(engine: Engine) -> None:
    import_papers(engine, IDS)
    queue = SaqQueue(REDIS_TEST_URL, name=f"wovepaper-test-{uuid.uuid4().hex[:8]}")
    try:
        report = await enqueue_pdfs_async(engine, queue, [PdfJob(i) for i in IDS], collection="c")
        again = await enqueue_pdfs_async(engine, queue, [PdfJob(i) for i in IDS], collection="c")
        assert (report.queued, again.queued) == (2, 0)  # keyed: still queued in Redis, not added twice
        alive = await queue.alive_async([PdfJob(i).key for i in IDS])
        assert all(alive.values())
    finally:
        await drop_saq_queue(queue.name)
