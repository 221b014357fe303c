"""Whose a number is, by what stands around it in the passage: a bracket after it labels it ("72%
(placebo)"), a name before its bracket owns it ("VGG-19 (19.6 billion FLOPs)"), a kind's numeral
names its sentence ("97.6% on Level I") and a model's name it is glued to ("Qwen2.5-3B")
(:mod:`chat.claims` holds a claim's number against them)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from chat.names import fold, names
from chat.number_binding import sentence_at, sentence_spans
from chat.numbers import Value, comparable, values
from retrieval.evidence import term_list

_NOT_LABELS = frozenset(
    ["ours", "approx", "approximately", "about", "avg", "average", "mean", "median", "total", "overall",
     "est", "estimated", "resp", "respectively", "range", "sd", "se", "std", "max", "min", "all", "each",
     "test", "val", "validation", "dev", "train", "training", "top", "best", "baseline"]
)  # fmt: skip


def other_kind(
    claim_tokens: Sequence[str],
    claim_values: Sequence[Value],
    tokens: Sequence[str],
    passage_values: Sequence[Value],
    stated_as: Sequence[Value],
) -> str | None:
    """The kind's numeral ("Level I") the sentence of each of ``stated_as`` names, where the claim
    names another numeral of that kind ("Level II") and that sentence does not; None otherwise."""
    kinds = {claim_tokens[o.start - 1].lower(): o.value for o in claim_values if o.unit == "name" and o.start}
    if not kinds:
        return None
    said = None
    for v in stated_as:
        lo, hi = sentence_at(tokens, v.start)
        named = [
            o
            for o in passage_values
            if o.unit == "name" and lo < o.start < hi and tokens[o.start - 1].lower() in kinds
        ]
        if not named or any(kinds[tokens[o.start - 1].lower()] == o.value for o in named):
            return None
        said = said or f"{tokens[named[0].start - 1]} {named[0].text}"
    return said


def beside(tokens: Sequence[str], found: Sequence[Value], v: Value) -> bool:
    """Whether the sentence of ``v`` gives another number of its kind."""
    lo, hi = sentence_at(tokens, v.start)
    return any(w.start != v.start and lo <= w.start < hi and comparable(w, v) for w in found)


def label_after(tokens: Sequence[str], at: int) -> str | None:
    """The label a bracket right after the number at word ``at`` gives it ("72% (placebo)", "(control
    group)"): one or two words, no number in them; None when there is none."""
    if at + 1 >= len(tokens) or not tokens[at + 1].startswith("(") or tokens[at].endswith((",", ";", ".")):
        return None
    words = []
    for tok in tokens[at + 1 : at + 3]:
        words.append(tok.strip("(),.;:"))
        if ")" in tok:
            break
    else:
        return None
    if any(not re.fullmatch(r"[A-Za-z][A-Za-z-]{2,}", w) for w in words) or words[0].lower() in _NOT_LABELS:
        return None
    return " ".join(words)


def bracketed_for(tokens: Sequence[str], at: int, text: str, claim_names: set[str]) -> str | None:
    """The name right before the bracket the number at word ``at`` opens ("VGG-19 (19.6 billion"),
    or None; None too when the bracket names items of its own that the claim names ("LLM (74.4% to
    82.1% on GSM8K, …)": the claim may call the model otherwise)."""
    if at < 1 or not tokens[at].startswith("("):
        return None
    named = {fold(n) for n in names(text)}
    before = tokens[at - 1].strip(".,;:\"'")
    if not before or fold(before) not in named:
        return None
    if at >= 2 and values(tokens[at - 2])[1]:
        return None  # a count's breakdown ("24 Upworkers (9 male, 1 non-binary, 14 female)")
    labels = set()  # the bracket's items, each named "on" or "for" after its number
    for prev, tok in zip(tokens[at : at + 40], tokens[at + 1 : at + 41], strict=False):
        if prev.lower() in ("on", "for"):
            labels.add(fold(tok.strip(".,;:()[]\"'")))
        if tok.rstrip(".,;:").endswith(")"):
            break
    return None if labels & named & claim_names else before


def names_model(claim: str, model: str | None) -> bool:
    """The claim names the model a size is glued to ("Qwen" for "Qwen2.5" of "Qwen2.5-3B")."""
    return bool(model) and fold(re.split(r"[\d.-]", model or "")[0]) in fold(claim)


def glued_to(tokens: Sequence[str], at: int) -> str | None:
    """The name a model size at word ``at`` is glued to ("Qwen2.5" of "Qwen2.5-3B"), or None."""
    found = re.fullmatch(r"([A-Za-z][\w.]*(?:-[\w.]+)*?)-\d[\d.]*[BMK]", tokens[at].strip(".,;:()[]"))
    return found.group(1) if found else None


def _said(tokens: Sequence[str]) -> set[str]:
    return {t for t in term_list(" ".join(tokens)) if not any(c.isdigit() for c in t)}


def parallel_for(claim: str, tokens: Sequence[str], stated_as: Sequence[Value]) -> tuple[str, str] | None:
    """Where each of ``stated_as`` stands in one of two parallel sentences, told apart by a word or
    three ("Mean endurance time in boys increased … to 14.1 minutes." beside "… in girls …"), and
    the claim says the other sentence's word and not this one's: (this word, the claim's word)."""
    spans = sentence_spans(tokens)
    said = [_said(tokens[lo:hi]) for lo, hi in spans]
    mine = set(term_list(claim))
    verdict = None
    for v in stated_as:
        at = next(i for i, (lo, hi) in enumerate(spans) if lo <= v.start < hi)
        for i, other in enumerate(said):
            own, theirs = said[at] - other, other - said[at]
            shared = len(said[at] & other)
            parallel = (
                i != at and 0 < len(own) <= 3 and 0 < len(theirs) <= 3 and shared >= max(3, 2 * len(own))
            )
            if parallel and theirs & mine and not own & mine:
                verdict = (min(own), min(theirs & mine))
                break
        else:
            return None
    return verdict
