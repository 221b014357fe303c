"""Which numbers of a table's flattened text are its cells: notes on a cell (a bracketed count, a
spread), works cited in a row and headings broken at a hyphen are taken out of the text first;
runs of numbers are then its rows' cells, whole numbers at a long run's end the next row's name, and
empty cells ("-") counted where a row has them."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from itertools import groupby

from chat.numbers import EMPTY, Value

EMPTY_CELLS = frozenset(["-", "–", "—"])  # how a table writes an empty cell

# A bracketed count after a measured cell ("81.4 (1)": the shots it took) is a note on it, not a cell;
# a bracketed measure ("86.5 (78.5)") is one.
_ANNOTATION = re.compile(r"(\d\.\d+[a-f]?)\s+\(\d+\)(?=\s|$)")

# A cell's spread ("90.41 ± 0.06") is a note on it, and a work cited in a row ("BC5CDR Li et al. (2016)
# NER") is a column of references: neither is a cell, and a year would break the row's run of cells.
_SPREAD = re.compile(r"(\d)\s+±\s+(?:\d+(?:\.\d+)?|\?)(?=\s|$)")
_REFERENCE = re.compile(
    r"(?<=[A-Za-z]\s)[A-Z][\w'-]*(?:\s+[^\s\w(]\w*)?"  # "Do ˘gan": a mark the PDF set apart
    r"(?:\s+et al\.|\s+and\s+[A-Z][\w'-]*)\s+\((?:19|20)\d\d[a-z]?\)\s*"
)

# A heading broken at its hyphen ("S2ORC- SCIBERT"), which a header must read as one.
_BROKEN_NAME = re.compile(r"(?<=[A-Z0-9])- (?=[A-Z]{2,}\b)")


def plain(text: str) -> str:
    """The table's text with the notes on its cells, the works its rows cite and its broken headings
    taken out."""
    text = _REFERENCE.sub("", _SPREAD.sub(r"\1", _ANNOTATION.sub(r"\1", text)))
    return _BROKEN_NAME.sub("-", text)


def runs_of(n: int, at: dict[int, Value]) -> list[tuple[int, int]]:
    """Maximal runs of number tokens, as (start, end) word positions."""
    runs = (list(g) for number, g in groupby(range(n), key=at.__contains__) if number)
    return [(run[0], run[-1] + 1) for run in runs]


def numbered_labels(
    at: dict[int, Value], runs: list[tuple[int, int]]
) -> tuple[dict[int, Value], list[tuple[int, int]]]:
    """Rows named by whole numbers ("6 6 OTSL 0.965 … 2.73 HTML 0.969 … 5.39 4 4 OTSL"): where most
    runs hold ``k`` cells and a longer one ends in one to three whole numbers after its ``k`` cells of
    another kind, those are the next row's label, not cells."""
    lengths = Counter(b - a for a, b in runs if b - a >= 3)
    if not lengths:
        return at, runs
    k = lengths.most_common(1)[0][0]
    labels: set[int] = set()
    for a, b in runs:
        tail = [at[i] for i in range(a + k, b)]
        whole = all(v.value.is_integer() and not v.unit for v in tail)
        if 1 <= b - a - k <= 3 and whole and not all(at[i].value.is_integer() for i in range(a, a + k)):
            labels.update(range(a + k, b))
    if not labels:
        return at, runs
    kept = {i: v for i, v in at.items() if i not in labels}
    return kept, runs_of(max(at) + 1, kept)


def with_empty_cells(
    toks: Sequence[str], at: dict[int, Value], runs: list[tuple[int, int]]
) -> tuple[dict[int, Value], list[tuple[int, int]]] | None:
    """The cells and runs again with empty cells counted ("67.77 - - -": a method that ran out of
    memory), in runs of two numbers or more; None where the text has none."""
    empty = {i: Value(math.nan, EMPTY, i, t) for i, t in enumerate(toks) if t in EMPTY_CELLS}
    if not empty:
        return None
    both = {**empty, **at}
    merged: list[tuple[int, int]] = []
    for a, b in runs_of(len(toks), both):
        inside = [r for r in runs if a <= r[0] < b]
        merged.extend([(a, b)] if sum(i in at for i in range(a, b)) >= 2 else inside)
    return (both, merged) if merged != runs else None
