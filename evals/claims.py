"""Claim checking (``python -m evals claims --file F.jsonl``): does the product's checker flag claims
that their cited passage does not state, and leave alone the ones it does?

Each line is ``{"id", "passage", "claim", "supported": bool, "kind": "correct" | "number_swap" |
"entity_swap" | "negation"}`` (other keys ignored). The claim is checked as the chat checks an answer's
sentence cited to that one passage (:func:`chat.claims.check_claim`, with the bundled embedder).
Figures: ``flag_recall`` over the unsupported lines, ``false_flag_rate`` over the supported ones, and
per kind the lines and how many were flagged.

``--checker citations`` runs the chat's earlier check instead (:func:`chat.citations.verify` before
claims were checked: attribution by word and embedding overlap, numbers present anywhere in the cited
passage), for the before/after comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from chat.claims import check_claim
from evals import jsonl
from retrieval.embedder import Embedder

KINDS = ("correct", "number_swap", "entity_swap", "negation")
Checker = Literal["claims", "citations"]


class ClaimsFileError(ValueError):
    """A line of the claims file is malformed; the message names the line."""


@dataclass(frozen=True, slots=True)
class Claim:
    id: str
    passage: str
    claim: str
    supported: bool
    kind: str


def _claim(record: Any, number: int) -> Claim:
    if not isinstance(record, dict):
        raise TypeError("a line is a JSON object")
    claim = Claim(
        str(record.get("id", number)),  # no id: its line number
        _text(record, "passage"),
        _text(record, "claim"),
        _flag(record["supported"]),
        str(record["kind"]),
    )
    if claim.kind not in KINDS:
        raise jsonl.Rejected(f"kind must be one of {', '.join(KINDS)}, not {claim.kind!r}")
    return claim


def load(path: Path) -> list[Claim]:
    expected = '{"id", "passage", "claim", "supported", "kind"}'
    return jsonl.load(path, _claim, expected=expected, error=ClaimsFileError, noun="claims")


def _text(record: dict[str, Any], key: str) -> str:
    value = record[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} must be non-empty text")
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError("supported must be true or false")
    return value


def product_checker(embedder: Embedder | None) -> Callable[[Claim], tuple[bool, str]]:
    def check(c: Claim) -> tuple[bool, str]:
        result = check_claim(c.claim, c.passage, embedder)
        return not result.supported, f"{result.kind}: {result.reason}" if result.kind else ""

    return check


def citations_checker(embedder: Embedder | None) -> Callable[[Claim], tuple[bool, str]]:
    """The earlier check: the claim cited to the passage is flagged when attribution finds no
    support or a number is not in the passage."""
    from chat.citations import verify
    from chat.context import KeyedPassage

    def check(c: Claim) -> tuple[bool, str]:
        passage = KeyedPassage("S1", "0000.00000", None, "", (1,), c.passage, ("x",), "body", 0.0)
        checked = verify(f"{c.claim.rstrip('.')} [1].", [passage], {"S1": 1}, embedder)
        return bool(checked.flags), "; ".join(f"{f.kind}: {f.detail}" for f in checked.flags)

    return check


def run(
    claims: list[Claim], check: Callable[[Claim], tuple[bool, str]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The figures, and one record per claim."""
    by_kind: dict[str, dict[str, int]] = {}
    details = []
    flagged_unsupported = flagged_supported = unsupported = supported = 0
    for c in claims:
        flagged, why = check(c)
        row = by_kind.setdefault(c.kind, {"n": 0, "flagged": 0})
        row["n"] += 1
        row["flagged"] += flagged
        if c.supported:
            supported += 1
            flagged_supported += flagged
        else:
            unsupported += 1
            flagged_unsupported += flagged
        details.append({"id": c.id, "kind": c.kind, "claim": c.claim, "flagged": flagged, "why": why})
    figures = {
        "n": len(claims),
        "flag_recall": round(flagged_unsupported / unsupported, 4) if unsupported else None,
        "false_flag_rate": round(flagged_supported / supported, 4) if supported else None,
        "by_kind": by_kind,
    }
    return figures, details
