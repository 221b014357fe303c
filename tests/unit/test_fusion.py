"""Fusion of ranked lists: reciprocal rank fusion and the normalised convex combination."""

from __future__ import annotations

import math

import pytest

from retrieval.fusion import Ranked, convex, normalise, order, rrf


def test_rrf_adds_reciprocal_ranks_with_weights() -> None:
    lexical = Ranked({"a": 9.0, "b": 5.0, "c": 1.0})
    dense = Ranked({"b": 0.9, "d": 0.8}, weight=2.0)
    fused = rrf([lexical, dense], k=60)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 2 / 61)
    assert fused["d"] == pytest.approx(2 / 62)
    assert order(fused) == ["b", "d", "a", "c"]


def test_rrf_rejects_a_negative_k() -> None:
    with pytest.raises(ValueError, match="k"):
        rrf([Ranked({"a": 1.0})], k=-1)


def test_order_breaks_ties_by_key_so_rankings_are_deterministic() -> None:
    assert order({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]


def test_minmax_and_zscore_normalisation() -> None:
    assert normalise({"a": 10.0, "b": 5.0, "c": 0.0}) == {"a": 1.0, "b": 0.5, "c": 0.0}
    z = normalise({"a": 3.0, "b": 1.0}, "zscore")
    assert z["a"] == pytest.approx(1.0) and z["b"] == pytest.approx(-1.0)
    assert normalise({"a": 2.0, "b": 2.0}) == {"a": 1.0, "b": 1.0}  # no spread: all equal
    assert normalise({"a": 2.0, "b": 2.0}, "zscore") == {"a": 0.0, "b": 0.0}
    assert normalise({}) == {}


def test_convex_weighs_normalised_scores_and_floors_missing_keys() -> None:
    lexical = Ranked({"a": 10.0, "b": 0.0}, weight=0.5)
    dense = Ranked({"b": 0.9, "c": 0.3}, weight=0.5)
    fused = convex([lexical, dense], how="minmax")
    # a: lexical 1.0, absent from dense → dense's floor 0.0; b: 0.0 + 1.0; c: floor 0.0 + 0.0
    assert fused == {"a": 0.5, "b": 0.5, "c": 0.0}
    heavier_dense = convex([Ranked(lexical.scores, 0.3), Ranked(dense.scores, 0.7)], how="minmax")
    assert order(heavier_dense)[0] == "b"


def test_convex_zscore_sums_standardised_scores() -> None:
    lexical = Ranked({"x": 3.0, "y": 1.0}, weight=0.6)
    dense = Ranked({"x": 0.2, "y": 0.4}, weight=0.4)
    fused = convex([lexical, dense], how="zscore")
    # z-scores: lexical x +1, y -1; dense x -1, y +1
    assert fused["x"] == pytest.approx(0.6 - 0.4)
    assert fused["y"] == pytest.approx(-0.6 + 0.4)
    assert all(math.isfinite(v) for v in fused.values())


def test_convex_uses_exact_scores_for_missing_keys_when_given() -> None:
    lexical = Ranked({"a": 10.0, "b": 2.0})
    dense = Ranked({"b": 0.9, "c": 0.2})
    floor = convex([lexical, dense], how="minmax")
    exact = convex([lexical, dense], how="minmax", missing={1: {"a": 0.85}})
    assert exact["a"] > floor["a"]
