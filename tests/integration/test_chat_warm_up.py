"""The chat's warm-up: the app gathers the evidence for one question when it starts, so the first
reader's key quotes do not wait for the indexes and the embedder to load; a failure is logged, never
raised, and the first question then pays for the loading itself."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Sequence

import pytest

from app.main import create_app
from app.services import Services
from chat.pipeline import Chat
from retrieval.evidence import EvidenceChunk, EvidenceRanking
from tests.integration.browse_catalogue import served
from tests.integration.chat_corpus import ChatCorpus, build, environment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chat_corpus(tmp_path_factory: pytest.TempPathFactory) -> ChatCorpus:
    return build(tmp_path_factory.mktemp("chat-corpus"))


def test_the_app_warms_the_chat_up_when_it_starts_but_not_in_tests_by_default(
    chat_corpus: ChatCorpus,
) -> None:
    with environment({**chat_corpus.env, "WOVEPAPER_CHAT_WARM_UP": "true"}) as settings:
        application = create_app(settings)
        with served(settings, app=application):
            services: Services = application.state.services
            assert services.warming is not None
            services.warming.join(timeout=60)
            assert not services.warming.is_alive()
    with environment(chat_corpus.env) as settings:
        assert settings.chat_warm_up is False  # tests start many apps: only this one warms up


class _Broken:
    def evidence(self, question: str, papers: Collection[str] | None, *, depth: int = 30) -> EvidenceRanking:
        raise OSError("the lexical index is not there")

    def chunks(self, like: EvidenceChunk, chunk_ids: Sequence[str]) -> dict[str, EvidenceChunk]:
        raise AssertionError("not reached")


def test_a_warm_up_gathers_evidence_and_a_failing_one_is_logged_not_raised(
    chat_corpus: ChatCorpus, caplog: pytest.LogCaptureFixture
) -> None:
    with environment(chat_corpus.env) as settings:
        services = Services.open(settings)
        try:
            started = time.perf_counter()
            assert services.chat.warm_up() is True
            assert time.perf_counter() - started < 60
            broken = Chat(settings, services.engine, _Broken(), services.chat.models, services.embedder)
            with caplog.at_level(logging.WARNING, logger="chat.pipeline"):
                assert broken.warm_up() is False
            assert "warm-up failed" in caplog.text
        finally:
            services.close()
