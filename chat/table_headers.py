"""The header of a table flattened into text: the words before its first row, read as one heading per
column — a word each, with group headings over equal spans, or several words each ("Hidden size D",
"# of Heads", "PaLM 540B") after the labels' heading (see :mod:`chat.tables`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from retrieval.evidence import term_list

_GROUPS = (2, 3, 4)  # group headings over the columns
SIZE = re.compile(r"\d+(?:\.\d+)?[KMBT]")  # a model's size in its name ("PaLM 540B")
# the caption's name of a cell and its bracketed partner: "F1 (exact match)", "BLEU (chrF)"
_PAIR = re.compile(r"\b([A-Z][\w-]*)\s*\(([A-Za-z][\w -]{0,30})\)")
_BETTER = re.compile(r"\(?[↓↑→←]\)?")


def header_words(
    toks: Sequence[str], previous_end: dict[int, int], end: int, *, sizes_end_it: bool = True
) -> list[str]:
    """The words before the first row's label, back to the number before them (``previous_end`` maps
    each run of numbers' end to its start); unless ``sizes_end_it``, a model's size alone is not that
    number ("PaLM 8B PaLM 62B", "7.5B Retro")."""
    ends = (
        b
        for b, a in previous_end.items()
        if b <= end and (sizes_end_it or not (b - a == 1 and SIZE.fullmatch(toks[a])))
    )
    # "(↓)", "(↑)": which way is better, no heading
    return [t for t in toks[max(ends, default=0) : end] if not _BETTER.fullmatch(t)]


# Headings of a table's column of labels ("Task Train Development Test"). Where the words between
# such a heading and the first row are more than one per column, a heading may be of several words
# ("Frame Accuracy WER") or the first label longer than the others: nothing is read.
LABEL_HEADINGS = frozenset(
    term_list(
        "model method task dataset system approach setting setup name parser architecture benchmark "
        "language subset"
    )
)


def grouped_before(header: Sequence[str], k: int) -> tuple[str, ...]:
    """Group headings before the labels' heading and the same headings repeated under each group
    after it ("XSum SQuAD WritingPrompts Method top-p top-k top-p top-k top-p top-k", "0-shot 1-shot
    Few-shot Task PaLM 8B PaLM 62B PaLM 540B PaLM 8B …"); the first row's label may have lost a word
    or two to the header ("log" of "log p(x)")."""
    for extra in range(3):
        at = _heading_at(header[: len(header) - extra])
        if at is None:
            continue
        names = header[at + 1 : len(header) - extra]
        for g in _GROUPS:
            span = len(names) // g
            if (
                k % g
                or len(names) % g
                or at < g
                or [w.lower() for w in names] != [w.lower() for w in names[:span]] * g
            ):
                continue
            under = _segmented(names[:span], k // g)
            if under:
                groups = header[at - g : at]
                return tuple(f"{groups[i // len(under)]} {under[i % len(under)]}" for i in range(k))
    return ()


def _heading_at(header: Sequence[str]) -> int | None:
    """Where the labels' column's heading stands in a header, or None."""
    return max((i for i, w in enumerate(header) if set(term_list(w)) & LABEL_HEADINGS), default=None)


_JOINS = frozenset(["of", "per", "in", "at", "for"])  # "# of Heads", "Time per step"
_PULLS = frozenset(["#", "%", "w/o", "no."])  # a heading's first word that the next one completes


def _segmented(words: Sequence[str], k: int) -> tuple[str, ...]:
    return _segments(words, k) or _segments(words, k, acronyms_complete=True)


def _segments(words: Sequence[str], k: int, *, acronyms_complete: bool = False) -> tuple[str, ...]:
    """``k`` headings of one or more words ("Layers Hidden size D MLP size Heads Params", "Layers # of
    Heads dmodel # of Parameters (in billions)", "7B Baseline (Ours) GPT-3 … 7.5B Retro", "PaLM 8B
    PaLM 62B"), or () when the words do not give ``k``: a lower-case word or a one-letter symbol
    completes a capitalised heading, "#" and "of" take the word after them, a bracket belongs to the
    heading before it, and a model's size to its name (after it, or before it where the first word
    is a size); failing that, an acronym completes the word before it ("Prior SOTA")."""
    sizes_lead = bool(words) and bool(SIZE.fullmatch(words[0]))
    out: list[str] = []
    pull = closed = False
    depth = 0
    for word in words:
        lower = word.lower()
        if depth or (word.startswith("(") and out):
            depth = max(0, depth + word.count("(") - word.count(")"))
            out[-1] += f" {word}"
        elif pull and out:
            out[-1] += f" {word}"
            pull, closed = lower in _JOINS, lower not in _JOINS
        elif lower in _JOINS and out:
            out[-1] += f" {word}"
            pull = True
        elif SIZE.fullmatch(word) and not sizes_lead and out and not closed:
            out[-1] += f" {word}"
            closed = True
        elif out and not closed and (word.islower() or len(word) == 1) and out[-1][:1].isupper():
            out[-1] += f" {word}"
        elif acronyms_complete and out and not closed and word.isupper() and out[-1].istitle():
            out[-1] += f" {word}"
            closed = True
        else:
            out.append(word)
            pull = lower in _PULLS or bool(sizes_lead and SIZE.fullmatch(word))
            closed = False
    return tuple(out) if len(out) == k else ()


def after_heading(header: Sequence[str], k: int) -> tuple[str, ...]:
    """The header's words after the labels' heading, as ``k`` headings of one or more words, or ()."""
    at = _heading_at(header)
    if at is None or len(header) - at - 1 <= k:
        return ()
    return _segmented(header[at + 1 :], k)


def paired_columns(toks: Sequence[str], header: Sequence[str], k: int) -> tuple[str, ...]:
    """Columns of two cells each, the second in brackets ("SQuAD … 86.5 (78.5)"), named by the
    header's last ``k / 2`` words and the caption's pair ("F1 (exact match)"), or ()."""
    pair = _PAIR.search(" ".join(toks))
    if k % 2 or len(header) < k // 2 or pair is None:
        return ()
    first, second = pair.group(1), pair.group(2).strip()
    return tuple(f"{name} {metric}" for name in header[-(k // 2) :] for metric in (first, second))


def sized_columns(toks: Sequence[str], end: int, k: int) -> tuple[str, ...]:
    """Columns named by models and their sizes, before the labels' heading ("PaLM 8B PaLM 62B PaLM
    540B Chinchilla Gopher Model …"): ``k`` capitalised names, some followed by a size, or ()."""
    heading = max((i for i in range(end) if set(term_list(toks[i])) & LABEL_HEADINGS), default=None)
    if heading is None:
        return ()
    found: list[str] = []
    i = heading - 1
    while i >= 0 and len(found) < k:
        if SIZE.fullmatch(toks[i]) and i and toks[i - 1][:1].isupper():
            found.append(f"{toks[i - 1]} {toks[i]}")
            i -= 2
        elif toks[i][:1].isupper() and toks[i].isalpha():
            found.append(toks[i])
            i -= 1
        else:
            break
    sized = any(" " in name for name in found)
    return tuple(reversed(found)) if len(found) == k and sized else ()


def word_columns(header: Sequence[str], k: int, width: int) -> tuple[str, ...]:
    """A heading per column when the header has one word per column, after the labels' headings (one
    to ``width`` words) and perhaps group headings over equal spans; () when it does not fit."""
    for g in (0, *_GROUPS):
        if not 1 <= len(header) - g - k <= width or (g and k % g):
            continue
        names = header[len(header) - k :]
        if any(n.lower() in _PULLS for n in names):
            return ()  # "# layers # params": a "#" alone heads no column
        if not g:
            return tuple(names)
        groups, span = header[len(header) - k - g : len(header) - k], k // g
        if any(set(term_list(w)) & LABEL_HEADINGS for w in groups):
            continue  # the labels' heading stands between the groups and the columns
        return tuple(f"{groups[i // span]} {names[i]}" for i in range(k))
    return ()
