"""The claim check and the table reader read any text without raising: the claims sets' passages and
claims, paired at random and mangled (cut, shuffled, stray brackets, odd numbers), as held-out
passages and model sentences may be."""

from __future__ import annotations

import json
import random
from pathlib import Path

from chat.claims import check_claim
from chat.tables import read

SETS = Path(__file__).resolve().parents[2] / "evals" / "claims"
ODD = ["0", "1", "7", "8.5", "1e9", "-3", "1M", "540b", "five-point", "(3.2)", "86.5 (78.5)", "2022b", "±"]


def _mangled(text: str, rng: random.Random) -> str:
    words = text.split()
    how = rng.choice(["cut", "shuffle", "brackets", "numbers"])
    if how == "cut":
        start = rng.randrange(len(words))
        words = words[start : start + rng.randint(1, 40)]
    elif how == "shuffle":
        rng.shuffle(words)
    elif how == "brackets":
        words = [w + rng.choice(["(", ")", "[", "]", "", ",", "."]) for w in words]
    else:
        words = [rng.choice(ODD) if rng.random() < 0.3 else w for w in words]
    return " ".join(words)


def test_any_claim_against_any_passage_is_judged_without_raising() -> None:
    rng = random.Random(24)
    records = [json.loads(line) for path in sorted(SETS.glob("*.jsonl")) for line in path.open()]
    passages = sorted({r["passage"] for r in records})
    claims = [r["claim"] for r in records]
    for _ in range(400):
        passage, claim = rng.choice(passages), rng.choice(claims)
        passage = _mangled(passage, rng) if rng.random() < 0.5 else passage
        claim = _mangled(claim, rng) if rng.random() < 0.3 else claim
        checked = check_claim(claim, passage)
        assert checked.status in ("supported", "not_stated")
        assert (
            checked.evidence == passage[checked.evidence_span[0] : checked.evidence_span[1]]
            or not checked.evidence
        )
        read(passage)
