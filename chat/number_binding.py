"""Numbers in scientific prose (the number side of :mod:`chat.claims`): a text's words and its numbers
at their word positions, with their unit class."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

NEAR = 6  # words either side of a number that bind it

_NUMBER = re.compile(
    r"(?<![\w.'’])(?<![A-Za-z][\-/])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?(?:%|×|x\b|k\b|K\b|M\b|B\b|billion|million|thousand))?"
    r"(?![\w])",
)
NOT_A_VALUE = re.compile(
    r"\[[\d,;\s–-]+\]|(?<![\w.])\d+(?:\.\d+){2,}(?![\w])|"
    r"(?:\b(?:Table|Tab\.|Figure|Fig\.|Section|Sec\.|Eq\.|Equation|Appendix|Algorithm|Step)|§)\s*\d+(?:\.\d+)*|"
    r"(?<![\w.])\d+(?:\.\d+)*\s+(?=[A-Z]{3,}\s+[A-Z]{2,}\b)|"  # a heading: "3.1 GENERATING AND …"
    r"(?:^|(?<=[.:!?]\s))\d+(?:\.\d+)*\s+(?=[A-Z][a-z]+\s+[A-Z])"  # "… rule. 4 Results We applied"
)
# "(Wang et al., 2022b)", "(Blier & Ollivier, 2018)": an author and a year, nothing measured.
_CITATION = re.compile(r"\((?=[^()%]{0,90}\))[^()]*?(?:et al\.|[A-Z][\w&.\s-]*,\s*\d{4}[a-z]?)[^()]*\)")
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "billion": 1e9}
_WORDS_AS_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100,
}  # fmt: skip
GREEK = str.maketrans(
    {
        "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon", "θ": "theta",
        "λ": "lambda", "μ": "mu", "π": "pi", "σ": "sigma", "τ": "tau", "ψ": "psi", "ω": "omega",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Value:
    value: float
    unit: str  # "%", "x", "scale", "-" (a modifier), "word" or ""
    start: int  # token position
    text: str


def clean(text: str) -> str:
    """The text as numbers are read from it: citations, section and table references out."""
    return NOT_A_VALUE.sub(" ", _CITATION.sub(" ", text))


def tokens(text: str) -> list[str]:
    """The text's words as :func:`values` counts them, punctuation kept."""
    return re.findall(r"\S+", clean(text))


def values(text: str) -> tuple[list[str], list[Value]]:
    """The text's words (lower-cased, for binding) and its numbers at their word positions."""
    words: list[str] = []
    found_values: list[Value] = []
    for token in tokens(text):
        word = token.lower().strip(".,;:()[]\"'")
        found = [m for m in _NUMBER.finditer(token) if m.group()]
        for m in found:
            value, unit = parse(m.group())
            if token[m.end() : m.end() + 1] == "-" and token[m.end() + 1 : m.end() + 2].isalpha():
                unit = "-"  # a modifier ("8-shot", "3-layer"): compared only with its like
            found_values.append(Value(value, unit, len(words), m.group()))
        if not found and word in _WORDS_AS_NUMBERS:
            found_values.append(Value(float(_WORDS_AS_NUMBERS[word]), "word", len(words), word))
        words.append(word)
    return words, [v for v in found_values if not math.isnan(v.value)]


def parse(raw: str) -> tuple[float, str]:
    """The value and its unit class: "%", "x" (a factor), "scale" (k, M, billion…) or ""."""
    text = raw.replace(",", "").strip()
    unit = ""
    for mark in ("%", "×", "x"):
        if text.endswith(mark):
            unit, text = ("x" if mark in "×x" else mark), text[: -len(mark)].strip()
    for word, factor in _SCALE.items():
        number = text[: -len(word)].strip()
        if text.lower().endswith(word) and number.replace(".", "", 1).isdigit():
            try:
                return float(number) * factor, "scale"
            except ValueError:
                return math.nan, "scale"
    try:
        return float(text), unit
    except ValueError:
        return math.nan, unit


def same(a: Value, b: Value) -> bool:
    """The same value: "two" is 2, "1.5B" is 1.5 billion, "4" states "4×" (a unit may be left out)."""
    units = {a.unit, b.unit} - {"", "word", "-"}
    return math.isclose(a.value, b.value, rel_tol=1e-6) and len(units) <= 1


def rounds_to(a: Value, b: Value) -> bool:
    """``a`` said less precisely as ``b`` ("28.4" as "about 28", "4.94%" as "4.9%")."""
    places = len(b.text.partition(".")[2].rstrip("%×xkKMB").strip()) if "." in b.text else 0
    decimals = len(a.text.partition(".")[2].rstrip("%×xkKMB").strip()) if "." in a.text else 0
    units = {a.unit, b.unit} - {"", "word", "-"}
    return places < decimals and len(units) <= 1 and math.isclose(round(a.value, places), b.value)


def is_year(v: Value) -> bool:
    return not v.unit and v.value.is_integer() and 1900 <= v.value <= 2100 and len(v.text) == 4


def comparable(a: Value, b: Value) -> bool:
    """Numbers of one kind, either of which the passage could give for the other: years with years,
    the same unit class; words ("two stages") are never rivals."""
    if is_year(a) != is_year(b) or "word" in (a.unit, b.unit):
        return False
    return a.unit == b.unit


def in_table(found: Sequence[Value], v: Value) -> bool:
    """Whether ``v`` stands among other numbers (a table row: its label names what it counts),
    not in prose (where words around it do)."""
    return sum(abs(other.start - v.start) <= NEAR for other in found) >= 4
