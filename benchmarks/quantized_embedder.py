"""The per-channel int8 MiniLM (built by ``python -m retrieval.quantize``) against the bundled int8
model and the fp32 reference (rebuilt here from the same weights): CPU seconds per 1,000 texts and
cosine agreement with fp32, on the first ``--texts`` SciFact abstracts (title + text).

    nice .venv/bin/python benchmarks/quantized_embedder.py [--texts 300]

CPU seconds (one onnxruntime thread each) rather than wall time: on this shared 2-core machine the
wall clock measures the neighbours' load as much as the model.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals import beir
from retrieval.embedder import MiniLMEmbedder, minilm_files
from retrieval.quantize import fp32_graph
from settings import SHARED_DATA


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=300)
    args = parser.parse_args()
    dataset = beir.load(SHARED_DATA / "eval" / "scifact-dev", "train")
    texts = [beir.document_text(*dataset.corpus[i]) for i in list(dataset.corpus)[: args.texts]]
    model, tokenizer = minilm_files()
    reference = MiniLMEmbedder(threads=1)
    fp32 = Path(tempfile.mkdtemp()) / "fp32.onnx"
    onnx.save(fp32_graph(model, tokenizer.parent / "model.safetensors"), str(fp32))
    reference._model, reference._sha256 = fp32, hashlib.sha256(fp32.read_bytes()).hexdigest()
    vectors = {}
    for name, embedder in [
        ("bundled int8", MiniLMEmbedder(threads=1)),
        ("per-channel int8", MiniLMEmbedder(threads=1, quantized=True)),
        ("fp32", reference),
    ]:
        embedder.embed(texts[:8])  # load the session
        cpu = time.process_time()
        vectors[name] = np.asarray(embedder.embed(texts))
        print(f"{name}: {(time.process_time() - cpu) / len(texts) * 1000:.1f} CPU-s per 1,000 texts")
    for name in ("bundled int8", "per-channel int8"):
        cosine = (vectors[name] * vectors["fp32"]).sum(axis=1)
        print(f"{name}: cosine to fp32 min {cosine.min():.4f} mean {cosine.mean():.4f}")


if __name__ == "__main__":
    main()
