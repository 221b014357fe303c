"""Metadata read from the PDFs themselves vs the hand-checked gold in ``pdfs/papers.jsonl``.

    .venv/bin/python benchmarks/pdf_metadata.py [--verbose]

Prints, over the 35 real arXiv PDFs:
- arXiv stamp: id, version and primary category agreement with the gold record;
- title exact-match rate after normalisation (``catalog.names.fold``: case folded, accents
  stripped, punctuation to spaces, whitespace collapsed);
- author-list precision/recall/F1 (names compared by the same folded key; micro over all authors
  and macro over papers), and a surname-only F1 (forgives "D. P. Kingma" vs "Diederik P. Kingma");
- abstract similarity: rapidfuzz ``ratio`` and ``token_set_ratio`` of folded texts (0-100).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rapidfuzz import fuzz

from catalog.names import fold
from ingest.pdf import ParsedPdf, PdfLimits, default_pool, parse_pdf
from people.names import from_parsed
from settings import SHARED_DATA


def _prf(found: list[str], gold: list[str]) -> tuple[int, int, int]:
    remaining = list(gold)
    hits = 0
    for name in found:
        if name in remaining:
            remaining.remove(name)
            hits += 1
    return hits, len(found), len(gold)


def _f1(hits: int, found: int, gold: int) -> float:
    if not found and not gold:
        return 1.0
    precision = hits / found if found else 0.0
    recall = hits / gold if gold else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print every paper's misses")
    args = parser.parse_args()
    folder = SHARED_DATA / "pdfs"
    gold = {r["id"]: r for r in map(json.loads, (folder / "papers.jsonl").read_text().splitlines())}
    ids = sorted(gold)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        parsed: list[ParsedPdf] = list(
            pool.map(lambda i: parse_pdf(folder / "arxiv" / f"{i}.pdf", PdfLimits()), ids)
        )
    elapsed = time.perf_counter() - started
    default_pool.close()

    stamp_ok = titles_ok = 0
    totals = [0, 0, 0]
    surname_totals = [0, 0, 0]
    macro: list[float] = []
    ratios: list[float] = []
    token_sets: list[float] = []
    for arxiv_id, result in zip(ids, parsed, strict=True):
        record = gold[arxiv_id]
        meta = result.metadata
        assert meta is not None
        version = int(record["versions"][-1]["version"].lstrip("v"))
        primary = record["categories"].split()[0]
        stamp_ok += (meta.arxiv_id, meta.version, meta.primary_category) == (arxiv_id, version, primary)
        title_ok = fold(meta.title or "") == fold(record["title"])
        titles_ok += title_ok
        gold_names = [fold(from_parsed(*p[:3])) for p in record["authors_parsed"]]
        found_names = [fold(n) for n in meta.authors]
        counts = _prf(found_names, gold_names)
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        surname = _prf([n.split()[-1] for n in found_names if n], [n.split()[-1] for n in gold_names if n])
        surname_totals = [a + b for a, b in zip(surname_totals, surname, strict=True)]
        macro.append(_f1(*counts))
        gold_abstract, found_abstract = fold(record["abstract"]), fold(meta.abstract or "")
        ratios.append(fuzz.ratio(found_abstract, gold_abstract))
        token_sets.append(fuzz.token_set_ratio(found_abstract, gold_abstract))
        if args.verbose:
            print(f"\n{arxiv_id}  title {'ok' if title_ok else 'MISS'}: {meta.title!r}")
            if not title_ok:
                print(f"    gold title: {record['title']!r}")
            print(f"    authors F1 {macro[-1]:.2f}: found {meta.authors}")
            if macro[-1] < 1:
                print(f"    gold authors: {[from_parsed(*p[:3]) for p in record['authors_parsed']]}")
            print(f"    abstract ratio {ratios[-1]:.0f}: {(meta.abstract or '')[:120]!r}")

    n = len(ids)
    pages = sum(p.page_count for p in parsed)
    print(f"\nMetadata from {n} PDFs ({pages} pages) parsed in {elapsed:.1f} s (sandboxed, 2 children)")
    print(f"arXiv stamp id+version+primary category correct: {stamp_ok}/{n} = {stamp_ok / n:.1%}")
    print(f"title exact match (folded case/accents/punctuation): {titles_ok}/{n} = {titles_ok / n:.1%}")
    hits, found, gold_count = totals
    print(
        f"authors: precision {hits / max(found, 1):.3f}, recall {hits / max(gold_count, 1):.3f}, "
        f"micro F1 {_f1(*totals):.3f}, macro F1 {statistics.mean(macro):.3f} "
        f"({hits} of {gold_count} gold names found, {found} names extracted)"
    )
    print(f"authors by surname only: micro F1 {_f1(*surname_totals):.3f}")
    mean, median = statistics.mean, statistics.median
    print(
        f"abstract similarity: ratio mean {mean(ratios):.1f} / median {median(ratios):.1f}; "
        f"token_set_ratio mean {mean(token_sets):.1f} / median {median(token_sets):.1f}; "
        f"ratio >= 90 for {sum(r >= 90 for r in ratios)}/{n}; missing for {sum(r == 0 for r in ratios)}/{n}"
    )


if __name__ == "__main__":
    main()
