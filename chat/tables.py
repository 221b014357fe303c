"""A table flattened into text, read back into rows and columns, so that a claim's number can be
held against the cell of the row and column the claim names.

PDF text gives a table as its header words, then each row: a label and its cells ("Model Layers …
ViT-Base 12 768 3072 12 86M ViT-Large 24 …"), or the label as the row's first number ("Model #L #H
… 125M 12 12 768 6.0e−4 0.5M 350M 24 …"). Rows are found by their shape (runs of as many numbers,
each after its label); columns where the header has one word for each column (and for each
column of labels), with group headings over equal spans ("Top-20 Top-100" over ten dataset
columns), or where the words after the labels' heading make exactly as many headings of several
words ("Hidden size D", "# of Heads", "PaLM 540B", "7B Baseline (Ours)"), perhaps repeated under
group headings before it ("0-shot 1-shot Task PaLM 8B PaLM 62B PaLM 8B PaLM 62B"); a caption's
words for a bracketed heading ("attention heads (#H)") name it too. Where the shape is not that
clear, nothing is read: the claim is then judged by the words around its number, as prose is.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from chat.numbers import EMPTY, Value, comparable, heading_scale, number_word, rounds_to, same, tokens, values
from chat.table_cells import EMPTY_CELLS, numbered_labels, plain, runs_of, with_empty_cells
from chat.table_headers import (
    LABEL_HEADINGS,
    SIZE,
    after_heading,
    grouped_before,
    header_words,
    paired_columns,
    sized_columns,
    word_columns,
)
from retrieval.evidence import term_list, terms

_MAX_LABEL = 4  # words of a row's label
_NO_LABEL = frozenset(["none", "n/a"])  # "None" (no retriever, no training) names no row
_SCALES = frozenset(terms("billions millions thousands"))  # "(Billions of Tokens)": a unit, no name
_MAX_HEADER = 12  # words of a header whose first word names the labels' column
_ENDS_ROW = re.compile(r"[^\w\s(]+\d")  # "→512": a mark before a number
_BREAKS = frozenset(["and", "while", "whereas", "but", "than", "versus", "vs"])  # a clause's ends
_SPANS = _BREAKS | {"against", "compared", "over", "to", "from"}  # … or a claim's turn to another row
_LONG_ROW = 6  # numbers a row of a two-row table holds at the least
_ONE_COLUMN_ROWS = 5  # rows of one number each that make a table, not a sentence's list
_PROSE_WORDS = frozenset(["the", "a", "an", "is", "are", "was", "were", "and", "than", "that", "which", "to"])
_MARKS = "*†‡§¶⋆∗★☆♠♣♦♥"  # footnote marks a cell may carry ("0.498⋆")
# words that lead a caption's name of a column without naming it ("and the number of layers")
_CAPTION_FILLER = frozenset(["and", "the", "a", "an", "number", "of", "we", "report", "list", "is", "are"])


@dataclass(frozen=True, slots=True)
class Row:
    label: str
    cells: tuple[Value, ...]
    key: Value | None = None  # the label, when it is a number ("13B" in a table of model sizes)


@dataclass(frozen=True, slots=True)
class Table:
    rows: tuple[Row, ...]
    columns: tuple[str, ...]  # a heading per cell; empty when the header could not be read
    spelled: tuple[str, ...] = ()  # a heading's words in the caption ("attention heads" for "#H"), or ""


# A cell of two measures ("94.9/96.4": accuracy and F1, "86.3/-") is read as its first, the second kept
# in its text for a claim that states it.
_SLASHED = re.compile(r"(?<!\S)(\d+(?:\.\d+)?)/(?:\d+(?:\.\d+)?|[-–])(?!\S)")


@lru_cache(maxsize=256)
def read(text: str) -> Table | None:
    """The table in ``text``, or None when no row shape is clear."""
    text = plain(text)
    slashed = {i: t for i, t in enumerate(tokens(text)) if _SLASHED.fullmatch(t)}
    text = _SLASHED.sub(r"\1", text) if slashed else text
    words, found = values(text)
    toks = tokens(text)
    at = {v.start: v for v in found if v.unit != "word" and _whole(toks, v) and not _in_label(toks, v)}
    at = {i: Value(v.value, v.unit, v.start, slashed.get(i, v.text)) for i, v in at.items()}
    at, runs = numbered_labels(at, runs_of(len(words), at))
    table = _labelled(toks, at, runs)
    filled = with_empty_cells(toks, at, runs)
    full = _labelled(toks, *filled) if filled else None
    if full is not None and all(_spaced_range(row) for row in full.rows):
        full = None  # "currents of 20 – 40 pA … range of 80 – 200 mrad": ranges, not empty cells
    if full is not None and table is not None and _same_shape(full, table):
        # rows with empty cells too, under the header read without them (a longer first row may take
        # a group's name for a heading)
        table = Table(full.rows, table.columns)
    elif full is not None and (table is None or _cells(full) > _cells(table)):
        table = full
    table = table or _numbered(toks, at, runs) or _one_column(toks, at, runs)
    if table is None:
        return None
    table = Table(_scaled(toks, table.rows), table.columns, table.spelled)
    if not table.columns:
        return table
    return Table(table.rows, table.columns, tuple(_spelled_out(text, c) for c in table.columns))


def _spaced_range(row: Row) -> bool:
    """A row that reads as a range with a spaced dash ("20 – 40"): a low, an empty cell, a high."""
    cells = row.cells
    return len(cells) == 3 and cells[1].unit == "empty" and cells[0].value < cells[2].value


def _scaled(toks: Sequence[str], rows: Sequence[Row]) -> tuple[Row, ...]:
    """Rows whose heading gives their cells' scale ("Model Size (Billions of Parameters) 8 62 540"),
    their bare cells scaled: 70 there is 70B."""
    out, end = [], 0
    for row in rows:
        first = row.cells[0].start if row.cells else end
        scale = heading_scale(" ".join(toks[end:first]))
        if scale:
            cells = tuple(
                Value(c.value * scale, "scale", c.start, c.text) if not c.unit else c for c in row.cells
            )
            row = Row(row.label, cells, row.key)
        out.append(row)
        end = row.cells[-1].start + 1 if row.cells else end
    return tuple(out)


def _spelled_out(text: str, heading: str) -> str:
    """What the caption calls a column it names in brackets ("the number of attention heads (#H)":
    "attention heads"), or "": up to four words back to a comma or an "and"."""
    found = re.search(r"([^,;:()]{1,80})\(\s*" + re.escape(heading) + r"\s*\)", text)
    if found is None:
        return ""
    words = found.group(1).split()[-_MAX_LABEL:]
    while words and words[0].lower() in _CAPTION_FILLER:
        words = words[1:]
    return " ".join(words)


def verdict(claim: str, table: Table, value: Value) -> tuple[bool, str]:
    """(decided, problem): whether the table decides the claim's ``value``, and why it is not stated
    there ("" when it is). Undecided when the claim names no one row, or names a row whose cells do
    not hold the value while no other row does either."""
    toks = tokens(claim)
    factor = value.unit == "word" and toks[value.start + 1 : value.start + 2] == ["times"]
    if not _whole(toks, value) or factor:
        return False, ""  # a number inside a name ("COCO+07+12"); a factor in words ("fifty times")
    if _SETTING.search(claim[: _offset(claim, value)]):
        return False, ""  # a setting the claim states ("with p set to 0.96"), not a cell
    if any(c.isdigit() and _states([value], c) for c in table.columns):
        return True, ""  # a column's name ("at sequence length 128")
    if any(_states([value], part) for r in table.rows for part in re.findall(r"\(([^()]*)\)", r.label)):
        return True, ""  # … or a row's in brackets ("C4 Eval bpb (900B)": a database of 900B tokens)
    sizes = _column_sizes(table)
    if any(same(size, value) for size in sizes.values()):
        return True, ""  # … or a column's size ("PaLM 540B")
    mine, near = _said(claim), _near(claim, value)
    # a row's number-name the claim states names it before its words do ("1792B" over "MassiveText")
    row = _keyed(claim, table)
    labels = [r.label for r in table.rows]
    aligned = _aligned(claim, labels, value) if row is None else None
    if aligned is not None:  # "BERT beats TextBlob by five points, 62.77 against 57.50": in order
        held = _held_by_named(table, value, mine, near)
        if held is not None:  # … unless the column they are compared at is known
            return held
        row = aligned
    if row is None:  # the row named in the number's clause, else in the claim
        row = _pick(labels, near, whole=True)
    if row is None:  # … or most of it, by a name ("intersective SEAL's" for "SEAL (LM+FM, intersective)")
        row = _pick(labels, near)
        row = row if row is not None and _terms(labels[row]) & near & _names_said(claim) else None
    if row is None:
        row = _pick(labels, mine)
    if row is None:
        row = _by_cell(claim, table, value)
    if row is None:  # several rows named ("ELMo does better than BERT, 60.2 against 55.3")
        held = _held_by_named(table, value, mine, near)
        if held is not None:
            return held
    if row is None:  # the label named last before the number; of its rows, one that holds it
        named = _named_before(claim, labels, value)
        twins = [i for i, label in enumerate(labels) if named is not None and label == labels[named]]
        row = next((i for i in twins if any(_holds(c, value) for c in table.rows[i].cells)), named)
    if row is None:
        return False, ""
    cells = table.rows[row].cells
    key = table.rows[row].key
    if key is not None and same(key, value):
        return True, ""  # the row's name
    # "0.32 and 0.35 … with top-p and top-k, respectively": the columns are named in a list of their own
    listed = bool(re.search(r"\brespectively\b", claim, re.IGNORECASE))
    column = _pick(list(table.columns), near, then=mine) if table.columns and not listed else None
    if column is None and not listed:
        column = numbered_column(claim, table)
    if column is None and any(table.spelled) and not listed:  # "attention heads" for "#H"
        column = _pick(list(table.spelled), near)
    if column is None and table.columns and len(values(claim)[1]) == 1:
        # the claim's one number: its whole sentence names the column ("Under top-k sampling on
        # SQuAD, DetectGPT obtains 0.94")
        column = _pick(list(table.columns), mine)
    if column is None:  # the one column whose size the claim states
        column = _sized_column(claim, table, sizes, mine, near)
    # a count in words is a cell's only in the column of what it counts ("seven models" in "Models"),
    # else it may count rows ("the two FlashAttention variants")
    counted = set(term_list(toks[value.start + 1])) if value.start + 1 < len(toks) else set()
    if column is not None and column < len(cells) and _kin(cells[column], value):
        cell = cells[column]
        if _holds(cell, value):
            return True, ""
        if value.unit == "word" and not _terms(table.columns[column]) & counted:
            return False, ""
        label, header = _name(table, row), table.columns[column]
        if table.spelled and table.spelled[column]:
            header = f"{header} ({table.spelled[column]})"
        return True, f"the table gives {cell.text} for {label}, {header}, not {value.text}"
    if any(_holds(c, value) for c in cells):
        return True, ""
    if value.unit == "word":
        return False, ""
    this = _name(table, row)  # rows the reader cannot tell from this one decide nothing
    others = [
        i
        for i, r in enumerate(table.rows)
        if any(_holds(c, value) for c in r.cells) and _name(table, i) != this
    ]
    if others:
        return True, f"the table gives {value.text} for {_name(table, others[0])}, not {this}"
    return False, ""


def _held_by_named(table: Table, value: Value, mine: set[str], near: set[str]) -> tuple[bool, str] | None:
    """Where the claim (its words ``mine``, its number's clause ``near``) names several rows and one
    column: whether one of those rows holds the value in that column; None when it names fewer rows
    or no one column."""
    named = [i for i, r in enumerate(table.rows) if terms(r.label) - _NO_LABEL <= mine and terms(r.label)]
    if len(named) < 2 or not table.columns:
        return None
    column = _pick(list(table.columns), near)
    if column is None:
        column = _pick(list(table.columns), mine)
    cells = [
        table.rows[i].cells[column] for i in named if column is not None and column < len(table.rows[i].cells)
    ]
    if column is None or len(cells) < len(named) or not all(_kin(c, value) for c in cells):
        return None
    if any(_holds(c, value) for c in cells):
        return True, ""
    said = ", ".join(f"{_name(table, i)} {c.text}" for i, c in zip(named, cells, strict=True))
    return True, f"the table gives {said} for {table.columns[column]}, not {value.text}"


def _sized_column(
    claim: str, table: Table, sizes: dict[int, Value], mine: set[str], near: set[str]
) -> int | None:
    """The column whose size the claim states; of several ("0-shot PaLM 540B", "Few-shot PaLM
    540B"), the one the number's clause names, else the one the claim names."""
    sized = sorted({i for i, size in sizes.items() for v in values(claim)[1] if same(size, v)})
    if len(sized) <= 1:
        return sized[0] if sized else None
    headings = [table.columns[i] for i in sized]
    among = _pick(headings, near)
    if among is None:
        among = _pick(headings, mine)
    return None if among is None else sized[among]


# a one-letter symbol given a value just before the number: "p set to", "k =", "with n of"
_SETTING = re.compile(r"\b[A-Za-zα-ωΑ-Ω]\s*(?:=|set to|equal to|equals)\s*$")


def _offset(claim: str, value: Value) -> int:
    """Where the claim's ``value`` starts, in characters (its word position counted over tokens)."""
    at = 0
    for i, token in enumerate(tokens(claim)):
        found = claim.find(token, at)
        if i == value.start:
            return max(found, 0)
        at = found + len(token) if found >= 0 else at
    return len(claim)


def _column_sizes(table: Table) -> dict[int, Value]:
    """The sizes that name columns ("PaLM 540B"), by column."""
    sized = ((i, values(name)[1]) for i, name in enumerate(table.columns) if SIZE.search(name))
    return {i: found[-1] for i, found in sized if found and found[-1].unit == "scale"}


def _near(claim: str, value: Value) -> set[str]:
    """The claim's words about ``value``: its clause, between the numbers before and after it ("a
    peak learning rate of 1e-4 and a global batch of 4M": "global batch" is the 4M's)."""
    words, found = values(claim)
    starts = sorted(v.start for v in found)
    lo = max((s for s in starts if s < value.start), default=-1) + 1
    hi = min((s for s in starts if s > value.start), default=len(words))
    toks = tokens(claim)
    cut = [i for i in range(lo, value.start) if words[i] in _BREAKS or toks[i].endswith((",", ";"))]
    lo = cut[-1] + 1 if cut else lo
    stop = next(
        (i for i in range(value.start, hi) if words[i] in _BREAKS or toks[i].endswith((",", ";"))), hi
    )
    return _said(" ".join(words[lo : value.start] + words[value.start + 1 : stop + 1]))


def _in_full(label: str, words: set[str]) -> bool:
    """Every word of the row's label is among ``words``."""
    mine = terms(label) - _NO_LABEL
    return bool(mine) and mine <= words


def _named_before(claim: str, labels: Sequence[str], value: Value) -> int | None:
    """Of the labels the number's clause names in full, the one named last before the number
    ("Primer needed 3.8K hours to match the original T5's perplexity": Primer's), or None."""
    words = values(claim)[0]
    near = _near(claim, value)
    best: tuple[int, int] | None = None
    for i, label in enumerate(labels):
        if not _in_full(label, near):
            continue
        mine = terms(label) - _NO_LABEL
        at = max((j for j in range(value.start) if set(term_list(words[j])) & mine), default=-1)
        if at >= 0 and (best is None or at > best[0]):  # the first of a repeated label
            best = (at, i)
    return best[1] if best else None


_AGAINST = re.compile(r"^\s*(?:against|vs\.?|versus|compared (?:to|with)|to)\s*$", re.IGNORECASE)


def _aligned(claim: str, labels: Sequence[str], value: Value) -> int | None:
    """The row of a number in a closing pair ("…, 62.77 against 57.50") whose rows the claim names by
    name once each before it, in the same order; None otherwise."""
    words, found = values(claim)
    pair = [v for v in found if v.unit != "word"][-2:]
    if value not in pair or len(pair) < 2:
        return None
    between = " ".join(words[pair[0].start + 1 : pair[1].start])
    if not _AGAINST.match(between):
        return None
    said = _names_said(claim[: _offset(claim, pair[0])]) - _NO_LABEL - _SCALES
    hits = {i: _terms(label) & said for i, label in enumerate(labels)}
    if any(sum(t in h for h in hits.values()) > 1 for t in said):
        return None  # a name of several rows ("NLL" of "DP NLL" and "L2 NLL") names none
    first = {
        i: min(j for j in range(pair[0].start) if set(term_list(words[j])) & mine)
        for i, mine in hits.items()
        if any(set(term_list(words[j])) & mine for j in range(pair[0].start))
    }
    if len(first) == 1:  # "A reaches 0.61 against 0.47 for B": the second's row is named after it
        after = _FOR_NAME.match(" ".join(tokens(claim)[pair[1].start + 1 :]))
        said = _names_said(f"x {after.group(1)}") - _NO_LABEL - _SCALES if after else set()
        named = [i for i, label in enumerate(labels) if _terms(label) & said and i not in first]
        return [*first, named[0]][pair.index(value)] if len(named) == 1 else None
    if len(first) != 2:
        return None
    order = sorted(first, key=first.__getitem__)
    return order[pair.index(value)]


# "… against 0.47 for MultiVers-FEVER", "… for the runner-up, MultiVers-FEVER": whose the second is
_FOR_NAME = re.compile(r"(?:for|of|by|from)\s+(?:[a-z][a-z\s-]*,\s+)?([^,;.]+)")


def _named(label: str) -> bool:
    # "& CS SciCite": a group's name run into the row's; "Inline cite spans (body)": a qualifier
    words = [w for w in label.lstrip("&+-–|/ ").split() if not re.fullmatch(r"\(\w+\)", w)]
    return len(words) <= 3 and any(w[:1].isupper() or any(c.isdigit() for c in w) for w in words)


def _keyed(claim: str, table: Table) -> int | None:
    """The one row whose number-name ("62B") the claim states."""
    toks = tokens(claim)
    mine = [v for v in values(claim)[1] if _whole(toks, v)]
    hits = {i for i, r in enumerate(table.rows) if r.key is not None for v in mine if same(r.key, v)}
    return hits.pop() if len(hits) == 1 else None


def _by_cell(claim: str, table: Table, value: Value) -> int | None:
    """The one row, among those whose label the claim names (all, if it names none), that holds
    another of the claim's numbers: where labels repeat, a cell names the row ("ResNet 110 1.7M
    6.43", "the 110-layer ResNet")."""
    toks = tokens(claim)
    words = values(claim)[0]
    mine = terms(claim)
    named = [i for i, r in enumerate(table.rows) if terms(r.label) and terms(r.label) <= mine]

    def together(v: Value) -> bool:  # one clause: "76.4 … against 73.2" names two rows
        lo, hi = sorted((v.start, value.start))
        return not any(words[i] in _SPANS or toks[i].endswith((",", ";")) for i in range(lo, hi))

    others = [
        v
        for v in values(claim)[1]
        if (_whole(toks, v) or v.unit == "-") and v.unit != "word" and not same(v, value) and together(v)
    ]
    hits = {
        i
        for i in named or range(len(table.rows))
        for v in others
        if any(same(c, v) for c in table.rows[i].cells)
    }
    return hits.pop() if len(hits) == 1 else None


def _name(table: Table, row: int) -> str:
    """A row's label, with its first cell where other rows share the label ("ResNet 110")."""
    label = table.rows[row].label
    shared = sum(r.label == label for r in table.rows) > 1
    return f"{label} {table.rows[row].cells[0].text}" if shared and table.rows[row].cells else label


def _kin(cell: Value, value: Value) -> bool:
    """Of one kind; a table's cells leave out the unit its caption or header gives ("59.1" for 59.1%)."""
    return comparable(cell, value) or (cell.unit == "" and value.unit in ("%", "x"))


def _holds(cell: Value, value: Value) -> bool:
    first, _, second = cell.text.partition("/")
    if second:  # either measure of a two-measure cell
        return any(
            _holds(Value(float(t), cell.unit, cell.start, t), value)
            for t in (first, second)
            if t[0].isdigit()
        )
    return same(cell, value) or rounds_to(cell, value)


def _whole(toks: Sequence[str], v: Value) -> bool:
    """The number is its token's whole ("59.1", "86M", "1.4 trillion"), not part of a word ("Top-20",
    "BM25")."""
    first, _, scale = v.text.partition(" ")
    if scale and (v.start + 1 >= len(toks) or toks[v.start + 1].strip(".,;:()[]").lower() != scale):
        return False
    if v.start >= len(toks):
        return False
    token = toks[v.start].lstrip(",;:()[]").rstrip(".,;:()[]").rstrip(_MARKS)
    # "101093*": a footnote; ".628": a leading point is the number's; "-6.7", "+0.5": a sign is too
    return token == first or (token[:1] in "+-−" and token[1:] == first)


def _in_label(toks: Sequence[str], v: Value) -> bool:
    """A bracketed number after a word is part of a row's label ("Retro MassiveText (10%) 179B …"),
    not a cell; after a number it is one ("86.5 (78.5)")."""
    token = toks[v.start]
    before = toks[v.start - 1] if v.start else ""
    return token.startswith("(") and token.rstrip(".,;:").endswith(")") and not re.search(r"\d\W*$", before)


def _cells(table: Table) -> int:
    return sum(c.unit != EMPTY for r in table.rows for c in r.cells)


def _same_shape(a: Table, b: Table) -> bool:
    return len(a.rows[0].cells) == len(b.rows[0].cells)


def _labelled(toks: Sequence[str], at: dict[int, Value], runs: list[tuple[int, int]]) -> Table | None:
    """Rows of a label and ``k`` numbers each, ``k`` the run length most runs share (three or more)."""
    lengths = Counter(b - a for a, b in runs if b - a >= 2)
    if not lengths:
        return None
    k = lengths.most_common(1)[0][0]
    rows = [(a, b) for a, b in runs if b - a == k]
    # two rows make a table only when long (prose does not run ten numbers together), or when a
    # caption follows them and a header names their columns ("IMDB SUBJQA Word-based 61.90 57.50 BERT
    # 88.20 62.77 Table 8: …")
    # (the caption's "Table 8" is no value, and its colon is all that stays of it)
    captioned = rows[-1][1] < len(toks) and toks[rows[-1][1]] in (":", "|")
    if k < 2 or len(rows) < (2 if k >= _LONG_ROW or captioned else 3):
        return None
    short = len(rows) == 2 and k < _LONG_ROW
    labels: list[tuple[int, int]] = []
    previous_end = {b: a for a, b in runs}
    for n, (a, _) in enumerate(rows):
        start = max(a - _MAX_LABEL, *(e for e in previous_end if e <= a), 0) if n else a
        # a mark before a number ("256 →512") ends the row before, not this one's label
        start = max([start, *(i + 1 for i in range(start, a) if _ENDS_ROW.match(toks[i]))])
        while start < a - 1 and toks[start] in EMPTY_CELLS:  # the row before's empty cells
            start += 1
        labels.append((start, a))
    # the first row's label is as long as the others' (its words before are the header's)
    widths = Counter(a - s for s, a in labels[1:])
    width = min(widths, key=lambda w: (-widths[w], w)) if widths else 1
    if width < 1:
        return None
    first = max(0, rows[0][0] - width)
    if toks[first].startswith("(") and first:  # "TriviaQA (EM)": a bracket alone names no row
        first -= 1
    # … unless a narrower one leaves a header of the labels' heading and a word a column ("Setup
    # Davinci OPT-175B Zero-shot .628 .667 … Few-shot (binary) .354 .759")
    for narrow in range(1, rows[0][0] - first):
        header = header_words(toks, previous_end, rows[0][0] - narrow)
        if len(header) > k and set(term_list(header[-k - 1])) & LABEL_HEADINGS:
            first = rows[0][0] - narrow
            break
    labels[0] = (first, rows[0][0])
    built = tuple(
        Row(" ".join(toks[s:a]), tuple(at[i] for i in range(a, b)))
        for (s, a), (_, b) in zip(labels, rows, strict=True)
    )
    if any(not r.label for r in built):
        return None
    # two numbers a row is also how prose lists a schedule ("512 (1M tokens) until … then double it
    # to 1024 (2M tokens)"): only rows named as tables name them ("Baseline", "10xEnsemble")
    if k == 2 and not all(_named(r.label) for r in built[1:]):
        return None
    if _numbers_header(built[0]) and len(built) > 2:  # "Attention Method 128 256 … 65536" heads the rows
        return Table(built[1:], tuple(c.text for c in built[0].cells))
    sizes = [all(c.unit == "scale" for c in r.cells) for r in built]
    if len(built) > 2 and sizes[0] and not any(sizes[1:]):  # "Baseline Retro 172M 425M … 7.5B": models
        return Table(built[1:], _grouped_sizes(toks, built[0]))
    if all(r.cells[0].unit == "scale" for r in built):  # "PaLM 8B …": the size names the row
        built = tuple(Row(r.label, r.cells, r.cells[0]) for r in built)
    header = header_words(toks, previous_end, labels[0][0])
    columns = word_columns(header, k, width)
    if not columns and len(header) > k and set(term_list(header[-k - 1])) & LABEL_HEADINGS:
        # a caption before the header: the labels' heading ends it, perhaps after group headings
        columns = grouped_before(header, k) or tuple(header[-k:])
    if not columns and len(header) == k and labels[0][0] == k:  # the text opens with the header
        columns = tuple(header)
    if (
        not columns
        and len(header) > k
        and header[-k - 1].endswith(".")
        and all(w[:1].isupper() for w in header[-k:])
    ):
        columns = tuple(header[-k:])  # "… a continual learning setup. SQuAD Trivia QuAC": after prose
    if not columns:
        columns = sized_columns(toks, labels[0][0], k)
    if not columns:
        # headings of several words, sizes among them ("PaLM 8B PaLM 62B", "7.5B Retro")
        wide = header_words(toks, previous_end, labels[0][0], sizes_end_it=False)
        columns = grouped_before(wide, k) or after_heading(wide, k)
    if not columns and all(toks[i].startswith("(") for a, b in rows for i in range(a + 1, b, 2)):
        columns = paired_columns(toks, header, k)
    if any(not any(ch.isalnum() for ch in c) for c in columns):
        columns = ()  # a caption's words and stops ("… correspond to Fig. 1, last set …"): no header
    if not columns and short:
        return None
    if not columns:
        return _wider_first(toks, previous_end, built, labels[0][0], k)
    return Table(built, columns)


def _grouped_sizes(toks: Sequence[str], row: Row) -> tuple[str, ...]:
    """The headings of a header of sizes, under the groups named before them when the sizes repeat
    once for each ("Baseline Retro [Off] Retro[On] 172M 1.5B 172M 1.5B 172M 1.5B": "Retro[On] 1.5B")."""
    said = [c.text for c in row.cells]
    width = next((i for i in range(1, len(said)) if said[i] == said[0]), len(said))
    groups = len(said) // width
    words: list[str] = []
    for token in toks[max(0, row.cells[0].start - _MAX_HEADER) : row.cells[0].start]:
        if token.startswith("[") and words:  # "Retro [Off]": a bracket qualifies the word before
            words[-1] = f"{words[-1]} {token}"
        else:
            words.append(token)
    if groups < 2 or len(said) % width or said != said[:width] * groups or len(words) < groups:
        return tuple(said)
    return tuple(f"{group} {size}" for group in words[-groups:] for size in said[:width])


def _wider_first(
    toks: Sequence[str], previous_end: dict[int, int], built: Sequence[Row], first: int, k: int
) -> Table:
    """A table whose header is read once its first label is a word longer than the others' ("Dataset
    (↓) BM25 DeepCT … MS MARCO 0.658 …"): the labels' heading then stands right before the header.
    Only where every cell is one measure: columns of systems are named in a word each, columns of
    measures often in two ("Model Steps TPU Hours PPLX Baseline 1M 12.0K 9.40" has no "PPLX
    Baseline"); and two words longer takes such a heading for a label."""
    units = {c.unit for r in built for c in r.cells}
    header = header_words(toks, previous_end, first - 1) if first > 1 and len(units) == 1 else []
    if len(header) > k and set(term_list(header[-k - 1])) & LABEL_HEADINGS:
        label = Row(" ".join(toks[first - 1 : built[0].cells[0].start]), built[0].cells, built[0].key)
        return Table((label, *built[1:]), tuple(header[-k:]))
    return Table(tuple(built), ())


def numbered_column(claim: str, table: Table) -> int | None:
    """The one column whose heading is a number the claim states ("at sequence length 65536")."""
    stated = values(claim)[1]
    numbered = [i for i, c in enumerate(table.columns) if c.isdigit() and _states(stated, c)]
    return numbered[0] if len(numbered) == 1 else None


def _states(stated: Sequence[Value], heading: str) -> bool:
    """Whether one of the numbers ``stated`` is the number a column's heading is."""
    return any(same(v, h) for v in stated for h in values(heading)[1])


def _numbers_header(row: Row) -> bool:
    """A first row named by the labels' heading whose cells rise as whole numbers: the columns'
    headings (sequence lengths, sizes, shots), not a row of measures."""
    named = term_list(row.label)
    rising = all(a.value < b.value for a, b in pairwise(row.cells))
    whole = all(c.value.is_integer() and not c.unit for c in row.cells)
    return bool(named) and named[-1] in LABEL_HEADINGS and rising and whole


def _one_column(toks: Sequence[str], at: dict[int, Value], runs: list[tuple[int, int]]) -> Table | None:
    """Rows of a short label and one number each ("Retro 0.822 No query conditioning 0.829 …"): five
    or more in a row, no label wider than ``_MAX_LABEL`` words or holding a sentence's punctuation or
    small words (prose lists its numbers with commas, articles and verbs between them)."""
    stretch: list[tuple[int, int]] = []
    best: list[tuple[int, int]] = []
    for (_, end), (a, b) in zip([(0, 0), *runs], runs, strict=False):
        gap = toks[end:a]
        label_like = (
            1 <= len(gap) <= _MAX_LABEL
            and not any(t[-1] in ".,;:!?" for t in gap)
            and not {t.lower() for t in gap} & _PROSE_WORDS
        )
        if b - a == 1 and label_like and stretch:
            stretch.append((end, a))
        else:
            best = max(best, stretch, key=len)
            stretch = [(max(end, a - 1), a)] if b - a == 1 else []  # a first label: width fixed below
    best = max(best, stretch, key=len)
    if len(best) < _ONE_COLUMN_ROWS:
        return None
    widths = Counter(a - s for s, a in best[1:])
    width = min(widths, key=lambda w: (-widths[w], w))
    first = best[0][1]
    best[0] = (max(0, first - width), first)
    return Table(tuple(Row(" ".join(toks[s:a]), (at[a],)) for s, a in best), ())


def _numbered(toks: Sequence[str], at: dict[int, Value], runs: list[tuple[int, int]]) -> Table | None:
    """A header of ``h`` words, then rows of ``h`` numbers whose first is the row's label."""
    for a, b in runs:
        h = 0  # the header: every word back to the previous number
        while h < a and (a - h - 1) not in at:
            h += 1
        if not 3 <= h <= _MAX_HEADER or (b - a) % h or (b - a) // h < 2:
            continue
        header = list(toks[a - h : a])
        rows = tuple(
            Row(at[r].text, tuple(at[i] for i in range(r + 1, r + h)), at[r]) for r in range(a, b, h)
        )
        return Table(rows, tuple(header[1:]))
    return None


_ARROW = re.compile(r"\s*(?:→|->)\s*")


def _terms(text: str) -> set[str]:
    """A text's terms, and its hyphened words whole: "top-k" and "top-p" are told apart, and
    "zero-shot" is "0-shot"."""
    text = _ARROW.sub("→", text)  # "D →S" is "D→S"
    text = unicodedata.normalize("NFKC", text)  # a PDF's ligatures: "Retro [Oﬀ]" is "Retro [Off]"
    out = terms(text)
    for word in text.split():
        if "→" in word:  # "D→S" and "D→T" are told apart
            out.add(word.lower().strip(".,;:()"))
        word = re.sub(r"['’]s$", "", word.strip(".,;:()")).lower()
        head, dash, tail = word.partition("-")
        if not (dash and head and tail):
            continue
        out.add(word)
        n = 0.0 if head == "zero" else number_word(head)
        if n is not None:
            out.add(f"{int(n)}-{tail}")
    return out


def _said(claim: str) -> set[str]:
    """A claim's terms, and the initials of each run of two to four of its words, which a heading's
    acronym may stand for ("state of the art": "SOTA", "exact match": "EM")."""
    words = re.findall(r"[A-Za-z]+", claim)
    runs = (words[i : i + n] for n in (2, 3, 4) for i in range(len(words) - n + 1))
    return _terms(claim) | {"".join(w[0] for w in run).lower() for run in runs}


def _names_said(claim: str) -> set[str]:
    """The terms of the claim's words written with a capital after its first word, or with one after
    their own first letter ("SuperPAL gives …"): names."""
    words = claim.split()
    return {
        t for i, w in enumerate(words) if any(c.isupper() for c in (w if i else w[1:])) for t in _terms(w)
    }


def _abbreviates(short: str, word: str) -> bool:
    """ "multi" for "multiple" (the word's start, four letters or more); "avg" for "average", "acc"
    for "accuracy" (three of its letters in order, from its first)."""
    if len(short) < 3 or len(word) <= len(short) or short[0] != word[0] or not short.isalpha():
        return False
    if len(short) >= 4:
        return word.startswith(short)
    rest = iter(word)
    return all(c in rest for c in short)


def _pick(
    labels: Sequence[str], mine: set[str], *, whole: bool = False, then: set[str] | None = None
) -> int | None:
    """The one label whose words the claim says most of (all, for a label of one word, or when
    ``whole``), or None; of labels tied, the one whose words ``then`` (the whole claim) says most of
    ("against 71.3 for the prior state of the art" in a zero-shot claim: "0-shot Prior SOTA")."""
    scored = []
    for i, label in enumerate(labels):
        words = _terms(label) - _NO_LABEL - _SCALES
        if not words:
            continue
        # "Multi" is said "multiple"
        said = {w for w in words if w in mine or any(_abbreviates(w, m) for m in mine)}
        scored.append((len(said) / len(words), len(said), i))
    if not scored:
        return None
    best = max(scored)
    if best[0] < (1.0 if whole else 0.5) or best[1] == 0:
        return None
    tied = [i for *score, i in scored if tuple(score) == best[:2]]
    if len(tied) == 1:
        return best[2]
    if then is None:
        return None
    settled = _pick([labels[i] for i in tied], then)
    return tied[settled] if settled is not None else None


def confirms(claim: str, tables: Sequence[Table]) -> bool:
    """Whether the tables state every number of the claim in the row (and column) the claim names."""
    found = [v for v in values(claim)[1] if v.unit != "word"]
    return bool(found) and all(verdict_of_any(claim, tables, v) == (True, "") for v in found)


# Where a passage holds more than one table, each is read from its own part: a caption starts one.
_CAPTION = re.compile(r"(?=\b(?:Table|Tab\.)\s*\d+\s*[:.|])")


@lru_cache(maxsize=256)
def read_all(text: str) -> tuple[Table, ...]:
    """The tables in ``text``: one per part between captions when several parts read as tables,
    else the one the whole text reads as (or none)."""
    parts = [part for part in _CAPTION.split(text) if part.strip()]
    if len(parts) > 1:
        found = tuple(table for part in parts if (table := read(part)) is not None)
        if len(found) > 1:
            return found
    whole = read(text)
    return (whole,) if whole is not None else ()


def verdict_of_any(claim: str, tables: Sequence[Table], value: Value) -> tuple[bool, str]:
    """:func:`verdict` where any of several tables may state the value: stated when one states it,
    else the first table's problem, else undecided."""
    found = [(verdict(claim, table, value), table) for table in tables]
    # a table with a row the number's clause names in full ("ahead of ST-MoE-32B at 78.8") speaks
    # for that number over one without it
    near = _near(claim, value)
    named = [v for v, t in found if v[0] and any(_in_full(r.label, near) for r in t.rows)]
    decided = named or [v for v, _ in found if v[0]]
    if any(not why for _, why in decided):
        return True, ""
    return decided[0] if decided else (False, "")
