"""Fixtures the unit tests share."""

from __future__ import annotations

import pytest

from retrieval.embedder import Embedder, MiniLMEmbedder


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    """The bundled embedder, as the search (and so the chat) uses it: loaded once for the session."""
    return MiniLMEmbedder(threads=1)
