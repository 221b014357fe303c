"""The per-channel int8 MiniLM built at install time (``python -m retrieval.quantize``): it is
checked against its recorded hash, names the index after that hash, and embeds like the bundled
model (same 384-d normalised space)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from indexing.wiring import index_name
from retrieval import embedder as embedder_module
from retrieval.embedder import MINILM_NAME, EmbedderError, MiniLMEmbedder, make_embedder, quantized_model_path
from settings import Settings

TEXTS = [
    "Adam: a method for stochastic optimization with adaptive moment estimates.",
    "We trained the base models for a total of 100,000 steps or 12 hours on eight P100 GPUs.",
    "Retrieval-augmented generation combines a dense passage retriever with a seq2seq generator.",
]


def test_the_built_model_embeds_like_the_bundled_one() -> None:
    quantized, bundled = MiniLMEmbedder(quantized=True), MiniLMEmbedder(quantized=False)
    digest = quantized_model_path().with_name(quantized_model_path().name + ".sha256").read_text().strip()
    assert quantized.name == f"{MINILM_NAME}-pc-{digest[:12]}" != bundled.name
    a, b = np.asarray(quantized.embed(TEXTS)), np.asarray(bundled.embed(TEXTS))
    assert a.shape == b.shape == (3, 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-4)
    assert (a * b).sum(axis=1).min() > 0.98  # per-channel int8 stays close (per-tensor: ~0.93)
    # The nearest neighbours agree: each text is closest to itself across the two models.
    assert ((a @ b.T).argmax(axis=1) == np.arange(3)).all()


def test_it_is_the_default_and_its_index_is_not_the_bundled_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WOVEPAPER_EMBEDDING_QUANTIZED", raising=False)
    settings = Settings()
    default = make_embedder(settings)
    assert isinstance(default, MiniLMEmbedder) and default.quantized
    monkeypatch.setenv("WOVEPAPER_EMBEDDING_QUANTIZED", "false")
    bundled = make_embedder(Settings())
    # Vectors of two models never share a Chroma collection: the index name carries the model hash.
    assert index_name(settings, default) != index_name(settings, bundled)


def test_a_model_that_does_not_match_its_hash_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = quantized_model_path()
    copy = tmp_path / built.name
    shutil.copy(built, copy)
    copy.with_name(copy.name + ".sha256").write_text("0" * 64 + "\n")
    monkeypatch.setattr(embedder_module, "quantized_model_path", lambda: copy)
    with pytest.raises(EmbedderError, match="sha256"):
        MiniLMEmbedder(quantized=True).embed(["a text"])
    copy.unlink()
    with pytest.raises(EmbedderError, match="make install"):
        MiniLMEmbedder(quantized=True)
