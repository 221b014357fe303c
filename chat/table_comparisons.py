"""Two rows of a table compared by a claim ("At sequence length 8192, FlashAttention is faster than
Longformer"): the cells of the column the claim names must go the way the claim says.

Only comparisons whose direction the table's measure fixes are judged: "higher", "lower", "larger",
"smaller", "more", "fewer" on any measure, and "faster", "slower" on a measure of time (a runtime,
a latency, milliseconds), where less is faster. "Better" and "outperforms" are left alone: which way
is better depends on the measure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chat.names import fold
from chat.numbers import EMPTY
from chat.tables import Table, numbered_column

_UP = frozenset(["higher", "larger", "greater", "more", "bigger"])
_DOWN = frozenset(["lower", "smaller", "fewer", "less"])
_TIME_UP = frozenset(["slower"])
_TIME_DOWN = frozenset(["faster", "quicker"])
_COMPARATIVE = re.compile(
    r"\b(" + "|".join(sorted(_UP | _DOWN | _TIME_UP | _TIME_DOWN)) + r")\b(?:\s+[\w-]+){0,2}?\s+than\b", re.I
)  # "faster than", "a higher runtime than"
# a measure of time: less of it is faster (a speedup or a throughput is the other way round)
_TIME = re.compile(r"\b(?:runtime|run time|latency|time|ms|seconds?)\b", re.I)
_RATE = re.compile(r"\b(?:speed-?up|throughput|per second|/s)\b", re.I)


def contradicted(claim: str, tables: Sequence[Table], passage: str) -> str | None:
    """Why the claim's comparison of two rows is the other way round in a table, or None."""
    m = _COMPARATIVE.search(claim)
    if m is None:
        return None
    word = m.group(1).lower()
    if word in _TIME_UP | _TIME_DOWN and not (_TIME.search(passage) and not _RATE.search(passage)):
        return None
    up = word in _UP | _TIME_UP
    for table in tables:
        left = _row_named(claim[: m.start()], table, last=True)
        right = _row_named(claim[m.end() :], table, last=False)
        column = numbered_column(claim, table)
        if left is None or right is None or left == right or column is None:
            continue
        a, b = (table.rows[i].cells for i in (left, right))
        if column >= min(len(a), len(b)) or a[column].unit != b[column].unit or a[column].unit == EMPTY:
            continue
        x, y = a[column], b[column]
        if x.value != y.value and (x.value > y.value) != up:
            names = f"{table.rows[left].label} {x.text} against {table.rows[right].label} {y.text}"
            return f"the table gives {names} for {table.columns[column]}"
    return None


def _row_named(text: str, table: Table, *, last: bool) -> int | None:
    """The row whose label ``text`` names nearest its end (``last``) or its start; a longer label
    named at the same place wins ("Block-Sparse FlashAttention" over "FlashAttention")."""
    folded = fold(text)
    found: list[tuple[int, int, int]] = []  # (where, -length, row)
    for i, row in enumerate(table.rows):
        key = fold(row.label)
        at = folded.rfind(key) if last else folded.find(key)
        if key and at >= 0:
            found.append((at + len(key) if last else at, -len(key), i))
    if not found:
        return None
    best = max(found, key=lambda f: (f[0], -f[1])) if last else min(found)
    return best[2]
