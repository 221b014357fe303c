"""Affiliation string → ROR matching, measured on 6,000 real strings with known ROR ids.

    .venv/bin/python benchmarks/affiliations.py [--threshold 90] [--sweep] [--errors 20]

The strings (Crossref 2024-02-19 and Springer 2023-10-31 samples from ror-community/ror-api) name
institutions from all of ROR (~120k records); only 13,503 ROR records are bundled. So a string is
*evaluated* only when one of its gold ids is among the imported records. A prediction is correct when
it is one of the string's gold ids. Printed:

- precision = correct / answered, recall = correct / evaluated, abstention = unanswered / evaluated;
- on the other strings (gold not imported, or no gold institution at all) every answer is wrong by
  construction: the share answered there is the false-match rate on institutions we do not hold.

The matcher runs exactly as in ``python -m ingest ror``: records imported into a scratch SQLite
catalogue, the index built from it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.db import make_engine, migrate  # noqa: E402
from ingest.enrich.affiliations import AffiliationMatcher  # noqa: E402
from ingest.enrich.institutions import import_ror  # noqa: E402
from ingest.enrich.ror import RorRecord, read_dump  # noqa: E402
from settings import SHARED_DATA  # noqa: E402

ROR = SHARED_DATA / "enrichment" / "ror"


def load_strings() -> list[tuple[str, str, set[str]]]:
    rows = []
    for path in sorted(ROR.glob("tests_affiliations__dataset_affiliations_*.json")):
        dataset = path.stem.removeprefix("tests_affiliations__dataset_affiliations_")
        for item in json.loads(path.read_text()):
            rows.append((dataset, item["affiliation"], {g.rsplit("/", 1)[-1] for g in item["ror_ids"]}))
    return rows


def measure(matcher: AffiliationMatcher, rows: list[tuple[str, str, set[str]]], imported: set[str]) -> dict:
    evaluated = [(d, s, g) for d, s, g in rows if g & imported]
    others = [(d, s, g) for d, s, g in rows if not g & imported]
    correct = wrong = 0
    errors = []
    per_dataset: dict[str, list[int]] = {}
    for dataset, text, gold in evaluated:
        found = matcher.match(text)
        tally = per_dataset.setdefault(dataset, [0, 0, 0])  # evaluated, correct, wrong
        tally[0] += 1
        if found is None:
            continue
        if found.ror_id in gold:
            correct += 1
            tally[1] += 1
        else:
            wrong += 1
            tally[2] += 1
            errors.append((text, found, gold))
    false_matches = sum(matcher.match(text) is not None for _d, text, _g in others)
    n = len(evaluated)
    return {
        "evaluated": n,
        "all_gold_imported": sum(g <= imported for _d, _s, g in evaluated),
        "correct": correct,
        "wrong": wrong,
        "precision": correct / max(correct + wrong, 1),
        "recall": correct / max(n, 1),
        "abstention": (n - correct - wrong) / max(n, 1),
        "others": len(others),
        "others_without_gold": sum(not g for _d, _s, g in others),
        "false_matches": false_matches,
        "per_dataset": per_dataset,
        "errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threshold", type=float, default=90.0)
    parser.add_argument("--sweep", action="store_true", help="Also measure thresholds 80 … 98.")
    parser.add_argument("--errors", type=int, default=0, help="Print this many wrong matches.")
    args = parser.parse_args()

    records = [
        r
        for r in read_dump(ROR / "ror_v2_records_from_ror-records_releases.jsonl")
        if isinstance(r, RorRecord)
    ]
    imported = {r.ror_id for r in records}
    rows = load_strings()
    with tempfile.TemporaryDirectory() as scratch:
        engine = make_engine(f"sqlite:///{Path(scratch) / 'catalogue.sqlite3'}")
        migrate(engine)
        started = time.perf_counter()
        summary = import_ror(engine, records)
        import_seconds = time.perf_counter() - started
        started = time.perf_counter()
        with engine.connect() as conn:
            matcher = AffiliationMatcher.from_catalogue(conn, threshold=args.threshold)
        index_seconds = time.perf_counter() - started
        engine.dispose()

    started = time.perf_counter()
    result = measure(matcher, rows, imported)
    per_string_ms = (time.perf_counter() - started) / len(rows) * 1000

    print(f"ROR records imported: {summary.added} ({import_seconds:.1f} s)")
    print(f"name index built in {index_seconds:.1f} s")
    print(f"affiliation strings: {len(rows)}")
    print(
        f"evaluated (a gold ROR id among the imported records): {result['evaluated']} "
        f"(all gold ids imported: {result['all_gold_imported']})"
    )
    print(f"threshold {args.threshold:g}")
    answered = result["correct"] + result["wrong"]
    print(f"  precision  {result['precision']:.3f}  ({result['correct']} correct of {answered} answered)")
    print(f"  recall     {result['recall']:.3f}")
    print(f"  abstention {result['abstention']:.3f}")
    for dataset, (n, ok, bad) in sorted(result["per_dataset"].items()):
        print(
            f"  {dataset}: {n} evaluated, precision {ok / max(ok + bad, 1):.3f}, recall {ok / max(n, 1):.3f}"
        )
    print(
        f"other strings (gold not imported: {result['others'] - result['others_without_gold']}, no gold: "
        f"{result['others_without_gold']}): matched anyway {result['false_matches']} "
        f"({result['false_matches'] / max(result['others'], 1):.3f})"
    )
    print(f"time per string: {per_string_ms:.2f} ms")
    for text, found, gold in result["errors"][: args.errors]:
        how = f"{found.ror_id}, {found.method} {found.score:.0f}"
        print(f"  WRONG {text[:100]!r} → {found.name} ({how}); gold {sorted(gold)}")
    if args.sweep:
        print("threshold  precision  recall  abstention  false-match(others)")
        for threshold in (80, 85, 88, 90, 92, 95, 98):
            matcher.threshold = threshold
            r = measure(matcher, rows, imported)
            print(
                f"{threshold:9d}  {r['precision']:9.3f}  {r['recall']:6.3f}  {r['abstention']:10.3f}  "
                f"{r['false_matches'] / max(r['others'], 1):.3f}"
            )


if __name__ == "__main__":
    main()
