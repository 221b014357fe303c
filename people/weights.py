"""The resolver's model and thresholds, read once from ``weights.json`` beside this module (which
also says how they were fitted and chosen).

P(same person) = 1 / (1 + exp(-(BIAS + Σ WEIGHTS · features))), over ``people.evidence.FEATURES``.
Refit with ``python -m evals researchers --file ../shared/data/researchers/acl-and-dev.jsonl --fit``
(it prints the bias and the weights in ``FEATURES`` order); the file's "fitted" says why the weights
kept are those fitted when the topic signature read the whole abstract."""

from __future__ import annotations

import json
from pathlib import Path

from people.evidence import FEATURES

_MODEL = json.loads(Path(__file__).with_name("weights.json").read_text(encoding="utf-8"))
if set(_MODEL["weights"]) != set(FEATURES):
    raise ValueError(f"weights.json has weights for {sorted(_MODEL['weights'])}, not {sorted(FEATURES)}")

BIAS: float = float(_MODEL["bias"])
WEIGHTS: tuple[float, ...] = tuple(float(_MODEL["weights"][name]) for name in FEATURES)
JOIN_AT: float = float(_MODEL["join_at"])  # join the best candidate at P ≥ this (found a new researcher else)
MERGE_AT: float = float(_MODEL["merge_at"])  # merge another candidate into it at P ≥ this
# A name is rare when fewer than this many people are expected to carry it by chance among arXiv's
# authors (``people.name_counts``): "Zhouhan Lin" 0.013, "Nancy Chen" 0.43, "Yang Liu" 17. Set by hand.
RARE_NAME_BELOW = 1.0
