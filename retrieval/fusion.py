"""Fusing ranked lists into one ranking: reciprocal rank fusion and a normalised convex combination.

Pure functions over ``{key: score}`` maps, so they are tested alone and shared by the search service
and the evaluation harness.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Method = Literal["rrf", "convex"]
Normalisation = Literal["minmax", "zscore"]


@dataclass(frozen=True, slots=True)
class Ranked:
    """One retriever's result list: scores, best first (higher is better)."""

    scores: Mapping[str, float]
    weight: float = 1.0

    def ranks(self) -> dict[str, int]:
        return {key: rank for rank, key in enumerate(order(self.scores), start=1)}


def order(scores: Mapping[str, float]) -> list[str]:
    """Keys by descending score; ties keep a stable, deterministic order (by key)."""
    return sorted(scores, key=lambda key: (-scores[key], key))


def rrf(lists: Sequence[Ranked], *, k: float = 60.0) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack et al. 2009): ``sum(weight / (k + rank))``."""
    if k < 0:
        raise ValueError("rrf k must be >= 0")
    fused: dict[str, float] = {}
    for ranked in lists:
        for key, rank in ranked.ranks().items():
            fused[key] = fused.get(key, 0.0) + ranked.weight / (k + rank)
    return fused


def normalise(scores: Mapping[str, float], how: Normalisation = "minmax") -> dict[str, float]:
    """Scores of one list mapped to a comparable scale: min-max to [0, 1], or z-scores."""
    if not scores:
        return {}
    values = list(scores.values())
    if how == "minmax":
        low, high = min(values), max(values)
        span = high - low
        if span <= 0:
            return dict.fromkeys(scores, 1.0)
        return {key: (value - low) / span for key, value in scores.items()}
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if spread <= 0:
        return dict.fromkeys(scores, 0.0)
    return {key: (value - mean) / spread for key, value in scores.items()}


def convex(
    lists: Sequence[Ranked],
    *,
    how: Normalisation = "minmax",
    missing: Mapping[int, Mapping[str, float]] | None = None,
) -> dict[str, float]:
    """A weighted sum of each list's normalised scores. A key absent from a list scores that list's
    lowest normalised value (it ranked below everything the list returned) unless ``missing[i]``
    gives its real score in list ``i`` (e.g. an exact score computed for a candidate that list did
    not return), which is normalised on the same scale."""
    keys: set[str] = set()
    for ranked in lists:
        keys.update(ranked.scores)
    fused = dict.fromkeys(keys, 0.0)
    for i, ranked in enumerate(lists):
        if not ranked.scores:
            continue
        extra = dict(missing.get(i, {})) if missing else {}
        extra = {key: value for key, value in extra.items() if key not in ranked.scores}
        scale = normalise({**ranked.scores, **extra}, how) if how == "minmax" else None
        if scale is None:
            base = normalise(ranked.scores, how)
            mean, spread = _moments(ranked.scores)
            scale = {**base, **{key: (v - mean) / spread if spread else 0.0 for key, v in extra.items()}}
        floor = min(normalise(ranked.scores, how).values())
        for key in keys:
            fused[key] += ranked.weight * scale.get(key, floor)
    return fused


def _moments(scores: Mapping[str, float]) -> tuple[float, float]:
    values = list(scores.values())
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
