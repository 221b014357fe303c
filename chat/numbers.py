"""Numbers as scientific prose writes them: a text's words and its numbers at their word positions,
with their unit class — the reading every claim check shares (:mod:`chat.number_binding` binds them).

Text is read as papers write it: in compatibility form (:func:`normalise`), a unit written onto its
number ("300GB/sec"), a scale word ("21 thousand"), an error bar ("85 ± 3%", "σ= 1.78": the spread
of the value before it, no rival value), a spelled number ("twenty-four"), a power of ten
("13.6 · 10⁶"), thousands set apart by a space ("1 000").
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

NEAR = 6  # words either side of a number that bind it

# A unit written onto its number ("300GB/sec", "8GB", "10ms"): the number is read, the unit is a word.
_GLUED_UNIT = (
    r"(?:[KMGTP]i?B|[KMGTP]b|ms|us|μs|ns|sec|secs|min|mins|hrs?|h|[kMG]?Hz|[TPG]?FLOPS|[TPG]?FLOPs|"
    r"[mkMGμ]?W|[mkM]?V|[kMGT]?eV|[mμn]A|[mμnp]M|[mμ]L|[KMG]bps|mm|cm|km|nm|kg|mg|px|dB|fps|bits?|pp|GPUs?|"
    r"TPUs?)(?:/\w+)?(?![A-Za-z])"
)
# "540b" is 540B as PaLM's authors write it; "2022b" (a cited year) and "Figure 4b" are not sizes.
NUMBER = re.compile(
    r"(?<![\w.'’@])(?<![A-Za-z][\-/])(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:e-?\d{1,2})?(?:\s?(?:%|×|x\b|k\b|K\b|M\b|B\b|T\b|billion|million|thousand)|X\b|(?<!(?:19|20)\d\d)b\b)?"
    rf"(?!\.\d)(?:(?![\w])|(?={_GLUED_UNIT}))",  # never the head of a longer number
)
NOT_A_VALUE = re.compile(
    r"\[[\d,;\s–-]+\]|(?<![\w.])\d+(?:\.\d+){2,}(?![\w])|"
    r"(?:\b(?:Table|Tab\.|Figure|Fig\.|[Ss]ection|[Ss]ec\.|[Cc]hapter|Eqs?\.|Equation|Appendix|Algorithm|Step|Task"
    r"|Lemma|Theorem|Proposition|Corollary|Definition|[Ll]ines?)|§)\s*\d+(?:\.\d+)*|"
    # a heading: "3.1 GENERATING AND …" (not a row's last cell: "90.01 90.41 JNLPBA NER")
    r"(?<![\w.])(?<!\d\s)\d+(?:\.\d+)*\s+(?=[A-Z]{3,}\s+[A-Z]{2,}\b)|"
    r"(?:^|(?<=[.:!?]\s))\d+(?:\.\d+)*\s+(?=[A-Z][a-z]+\s+[A-Z])|"  # "… rule. 4 Results We applied"
    r"(?:^|(?<=[\s:]))\(\d{1,2}\)(?=\s+[A-Z])|"  # an enumeration: "(3) A controlled lab study"
    r"(?:(?<=\bin )|(?<=\bsee ))\d{1,2}(?:\.\d)?(?=\.(?:\s|$))|"  # a section without its "§": "in 3."
    r"(?<![\w.])\d{1,2}h\d{1,2}m[\d.s]*|[−+-]?\d{1,3}\s?[◦°]\s?\d{1,2}\s?[′'][\d.′'″\"]*|"  # sky coordinates
    r"(?:(?<=[A-Za-z]{2})|(?<=\s[smg]))−\d(?!\w)|"  # a unit's power: "μJy beam−1", "km s−1" (not "k−1")
    r"(?<=[A-Za-z])\^\{?-?\d+\}?|"  # a letter's power in LaTeX: "$R^2 > 0.85$"
    # a confidence interval's level: "95% CI"
    r"(?<![\w.])\d{2}(?:\.\d)?\s?(?:%|percent)(?=\s*(?:CI\b|confidence interval|credible interval))"
)
# "(Wang et al., 2022b)", "(Blier & Ollivier, 2018)": an author and a year, nothing measured.
_CITATION = re.compile(r"\((?=[^()%]{0,90}\))[^()]*?(?:et al\.|[A-Z][\w&.\s-]*,\s*\d{4}[a-z]?)[^()]*\)")
# The year of a work a claim cites in its text ("117M parameters in Radford et al. (2018)"): the
# passage cites it in brackets, which are dropped; a table's row may be named so, and is kept.
CITED_YEAR = re.compile(r"(?<=et al\.)\s?\(\d{4}[a-z]?\)")


# A word broken at a line's end ("parame- ter", "out- performs"; "English- to-German" keeps its hyphen),
# not a suspended hyphen ("single- or multi-doc").
_BROKEN = re.compile(
    r"(?<![\w-])([A-Za-z]+)- (?:(?!(?:and|or|to|nor|as|vs|but)\s)([a-z][\w-]*)|(\d+[A-Za-z][\w-]*))"
)  # … or a name's size broken off ("LLaMA- 13B")
# Powers of ten, read as one number ("5e−5", "5 × 10^-5", "13.6 · 10⁶"); in PDF text a superscript
# exponent loses its place ("13.6 · 106"), so a single digit glued to "10" after a multiplication sign
# is one, and "2 × 1024" is not.
_SCIENTIFIC = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)(?:[eE]([−+-]?\d{1,2})"
    r"|\s?[·×⋅*x]\s?10\^\{?([−+-]?\d{1,2})\}?|\s?[·×⋅*]\s?10(?:([−-]\d{1,2})|([2-9])))(?!\w|\.\d)"
)
# "10−6" with a minus sign (not a hyphen or a dash, which a range takes) is a power whose exponent
# lost its place in the PDF's text: "a learning rate from 10−6 to 10−7".
_MINUS_POWER = re.compile(r"(?<![\w.×·⋅*])10−(\d{1,2})(?!\w|\.\d)")
_BARE_POWER = re.compile(r"(?<![\w.^])10\^\{?([−+-]?\d{1,2})\}?(?!\w|\.\d)")  # "10^6" alone: 1e6
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "billion": 1e9, "t": 1e12}
_WORDS_AS_NUMBERS = {
    "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
}  # fmt: skip
_SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
SCALE_NAMES = frozenset([*_SCALE_WORDS, "hundred"])  # words that scale the number before them
# A dispersion of the value before it: "85 ± 3%", "(μ= 3.67, σ= 1.78)", "SD = 0.4", "std 1.2".
_DISPERSION = re.compile(
    r"(?:±|\+/-|\+-|(?:^|[\s(\[,;])"
    r"(?:σ|sd|s\.d\.|std\.?|stdev|standard deviation(?: of| was| is)?)\s*[=:]?)\s*$",
    re.IGNORECASE,
)
# A confidence interval's bounds follow this ("95% CI 1.01-1.35", "(CI=0.58–1.16)", "95 percent
# confidence interval [CI]=0.61–1.23"): they are the spread of the value before, no rival values.
_INTERVAL = re.compile(
    r"(?:\bCI\]?|\bconfidence intervals?(?: \[CI\])?)\s*(?:of|from|was|is|were)?\s*[=:]?\s*\(?$",
    re.IGNORECASE,
)
# "(1.16; 0.98-1.62)": a value and, after its semicolon, the interval the text gave its first one.
_ELIDED_INTERVAL = re.compile(r"^\(?[\d.,]+%?;$")
_ROMAN = {"i": 1.0, "ii": 2.0, "iii": 3.0, "iv": 4.0, "v": 5.0, "vi": 6.0}
KINDS = frozenset(["type", "phase", "stage", "grade", "tier", "class", "level", "wave", "generation"])
# A time of day, "18:36:42" or "20:15": one value (in hours), of its own kind.
_CLOCK = re.compile(r"\(?(\d{1,2}):([0-5]\d)(?::([0-5]\d(?:\.\d+)?))?[,.;:)]*")
RANGE = re.compile(r"(\d[\d,.]*)\s?[-–]\s?\d[\d,.]*\s?([%×x]?)")  # "67-73%": the low end is a % too
GREEK = str.maketrans(
    {
        "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon", "θ": "theta",
        "λ": "lambda", "μ": "mu", "π": "pi", "σ": "sigma", "τ": "tau", "ψ": "psi", "ω": "omega",
    }
)  # fmt: skip


# LaTeX as arXiv abstracts keep it ("12.5\\%", "5\\,km", "$2\\times$", "HoloLens~2") and unarXive's
# placeholders ("{{formula:<uuid>}}", whose digits are no numbers; "{{cite:<hex>}}", a citation mark).
_TEX = re.compile(
    r"\{\{formula:[^}]*\}\}|\{\{cite:[^}]*\}\}"
    r"|\\(?:(?:times|pm|approx|sim|leq?|geq?)(?![A-Za-z])|[%&$#_,;: ])"
    r"|(?<=[A-Za-z\d])~(?=[A-Za-z\d])"
)
_TEX_SAID = {
    "\\times": "×", "\\pm": "±", "\\approx": "≈", "\\sim": "~", "\\le": "≤", "\\leq": "≤", "\\ge": "≥",
    "\\geq": "≥", "\\,": " ", "\\;": " ", "\\:": " ", "\\ ": " ", "~": " ",
}  # fmt: skip


def _tex(m: re.Match[str]) -> str:
    said = m.group()
    if said.startswith("{{"):
        return " formula " if said.startswith("{{formula") else " "  # never glued to a number
    return _TEX_SAID.get(said, said[1:])  # "\\%" is "%"


def normalise(text: str) -> tuple[str, list[int]]:
    """``text`` in compatibility form (NFKC: "𝜇" is "μ", "ﬁ" is "fi", a no-break space a space; a
    math letter glued to the next word gets its space back; "n’t" is "n't"; LaTeX's symbols and
    unarXive's placeholders as read, a stray closing brace out: "R2}" is "R2"),
    superscripts, subscripts and fractions left as written ("10²" is not 102); and, for each of its
    characters and its end, the offset in ``text`` it comes from."""
    out: list[str] = []
    at: list[int] = []
    tex = {m.start(): m for m in _TEX.finditer(text)}
    skip = 0  # the rest of a LaTeX command or placeholder, read at its start
    word = 0  # where the current word starts
    for i, char in enumerate(text):
        if char.isspace():
            word = i + 1
        if i < skip:
            continue
        if i in tex:
            said = _tex(tex[i])
            skip = tex[i].end()
            out.append(said)
            at.extend([i] * len(said))
            continue
        if char == "}" and "{" not in text[word:i] and i > word:
            continue  # "(R2} falling …": a brace its word never opened
        kept = unicodedata.decomposition(char).startswith(("<super>", "<sub>", "<fraction>"))
        folded = char if kept or char.isascii() else unicodedata.normalize("NFKC", char)
        if char == "’" and text[i - 1 : i] == "n" and text[i + 1 : i + 2] == "t":
            folded = "'"  # "doesn’t" is a negation as "doesn't" is
        if (char == "{" and text[i : i + 3] == "{,}") or (char == "}" and text[i - 2 : i + 1] == "{,}"):
            folded = ""  # LaTeX's thousands separator: "2{,}200" is "2,200"
        if "\U0001d400" <= char <= "\U0001d7ff" and text[i + 1 : i + 2].isalpha():
            folded += " "  # a math letter set against the word after it ("19𝑀parameters")
        out.append(folded)
        at.extend([i] * len(folded))
    at.append(len(text))
    return "".join(out), at


EMPTY = "empty"  # the unit of a table's empty cell ("-"), whose value is NaN


@dataclass(frozen=True, slots=True)
class Value:
    value: float
    # "%", "x", "scale", "-" (a modifier), "±" (a spread), "ci" (an interval's bound), "per" (a rate's
    # base), "time", "name" (a kind's: "type 2"), "word" or ""
    unit: str
    start: int  # token position
    text: str


def _join(m: re.Match[str]) -> str:
    head, tail = m.group(1), m.group(2) or m.group(3)
    if m.group(2) and not tail.islower() and "-" not in tail:
        return head + tail  # a name broken inside ("Trivi- aQA")
    return f"{head}-{tail}" if not head.islower() or "-" in tail or m.group(3) else head + tail


def _power(m: re.Match[str]) -> str:
    exponent = next(e for e in m.groups()[1:] if e is not None).replace("−", "-").lstrip("+")
    return f"{m.group(1)}e{exponent}"


def _powers(text: str) -> str:
    """Powers of ten as one number: "13.6 · 10⁶" and "5e−5" are read "13.6e6" and "5e-5"."""
    text = re.sub(r"10([⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,2})", lambda m: "10^" + m.group(1).translate(_SUPERSCRIPT), text)
    text = _SCIENTIFIC.sub(_power, text)
    text = _MINUS_POWER.sub(r"1e-\1", text)
    return _BARE_POWER.sub(lambda m: "1e" + m.group(1).replace("−", "-").lstrip("+"), text)


# A section's heading and its first subsection's, as a chunk of a PDF starts: "6 Results 6.1 Machine
# Translation On the WMT …" (the numbers are no values).
_HEADINGS = re.compile(r"(^|[.:!?]\s)\d{1,2}(\s+(?:[A-Z][a-z]+\s+){1,3})\d{1,2}\.\d{1,2}(?=\s+[A-Z])")


# Thousands set apart by a (thin) space, as typeset papers write them: "using 1 000 training examples".
# Only a lone pair: in a flattened table's row ("ViT-Base 12 768 3072") each number is a cell.
_THOUSANDS = re.compile(r"(?<![\d.,]\s)(?<![\w.,])(\d{1,3}) (\d{3})(?![\w.,%]|\s+\d)")


# Short forms of what a number measures, read as the word a claim would use ("10.7 ppl").
_SHORT_FORMS = {"ppl": "perplexity", "params": "parameters", "acc": "accuracy"}
_SHORT_FORM = re.compile(rf"\b({'|'.join(_SHORT_FORMS)})\b(?!\.\w)")


# A footnote's letter on a table's cells ("71.3a 76.9 75.8a"): where two cells carry one, none is a size.
_FOOTNOTED = re.compile(r"(?<![\w.])(\d+\.\d+)[a-f](?=[\s),;]|$)")


# Seconds written onto a number ("812.9s"), spelled out so that the number binds to "seconds" as
# "25,200 seconds" does; never a decade ("1990s").
_SECONDS = re.compile(r"(?<![\w.])(?!(?:19|20)\d0s)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?s(?=[\s,.;:)\]]|$)")


# "74.4%→82.1%" is a change from one to the other, read "74.4% to 82.1%"; "k ∈{5, 10}" is a set
# whose braces are not part of its numbers.
_ARROW = re.compile(r"(?<=[\d%])\s*(?:→|->|⟶)\s*(?=\d)")
_BRACES = re.compile(r"\{(?=\d)|(?<=\d)\}")
# A scale letter set apart from its number, as tables and typeset text do ("a 7.5 B parameter model",
# "14 B 40 5120"), and a range's dash followed by a space ("110M– 1.5B"): one number, one range.
_SPACED_SCALE = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?) ([MB])(?=\s+(?:\d|[a-z])|[,;:)]|\s*$)")
_SPACED_DASH = re.compile(r"(?<=\d[KMBT])([–—])\s+(?=\d)")
# "25 %", as typeset with a thin space, is 25% in prose; a table's "… 713,387.37 11,424.9 %" is left
# as its columns were read
_SPACED_PERCENT = re.compile(r"(\S+ )(\d[\d,.]*) %(?=[\s,;:.)]|$)")


def _percent(m: re.Match[str]) -> str:
    return m.group() if NUMBER.fullmatch(m.group(1).strip("( ")) else f"{m.group(1)}{m.group(2)}%"


# "one in a million" is a chance of 1e-6, not a million.
_ONE_IN = re.compile(r"\b(?:one|1) in (?:a |one )?(thousand|million|billion)\b", re.IGNORECASE)
_ONE_IN_POWERS = {"thousand": "1e-3", "million": "1e-6", "billion": "1e-9"}


def clean(text: str) -> str:
    """The text as numbers are read from it: citations, section and table references out, words
    broken at a line's end joined, powers of ten written as one number, short forms spelled out,
    footnote letters off."""
    if len(_FOOTNOTED.findall(text)) >= 2:
        text = _FOOTNOTED.sub(r"\1", text)
    text = _SHORT_FORM.sub(lambda m: _SHORT_FORMS[m.group(1)], _SECONDS.sub(r"\1\2 seconds", text))
    text = _HEADINGS.sub(r"\1 \2 ", _CITATION.sub(" ", text))
    text = _THOUSANDS.sub(r"\1,\2", NOT_A_VALUE.sub(" ", text))
    text = _BRACES.sub(" ", _ARROW.sub(" to ", text))
    text = _SPACED_DASH.sub(r"\1", _SPACED_SCALE.sub(r"\1\2", _SPACED_PERCENT.sub(_percent, text)))
    text = _ONE_IN.sub(lambda m: _ONE_IN_POWERS[m.group(1).lower()], text)
    return _powers(_BROKEN.sub(_join, text))


def tokens(text: str) -> list[str]:
    """The text's words as :func:`values` counts them, punctuation kept."""
    return re.findall(r"\S+", clean(text))


def number_word(word: str) -> float | None:
    """ "four" is 4, "twenty-four" 24, "five-point" 5 (a count glued to what it counts)."""
    head, _, tail = word.partition("-")
    if tail and head in _WORDS_AS_NUMBERS and tail in _WORDS_AS_NUMBERS:
        tens, ones = _WORDS_AS_NUMBERS[head], _WORDS_AS_NUMBERS[tail]
        return float(tens + ones) if tens % 10 == 0 and 20 <= tens <= 90 and ones < 10 else None
    if tail.isalpha() and head in _WORDS_AS_NUMBERS and head not in ("one", "single"):
        return float(_WORDS_AS_NUMBERS[head])
    return float(_WORDS_AS_NUMBERS[word]) if word in _WORDS_AS_NUMBERS else None


def values(text: str) -> tuple[list[str], list[Value]]:
    """The text's words (lower-cased, for binding) and its numbers at their word positions: a scale
    word after a number is its scale ("21 thousand" is 21k); a dispersion ("± 3%", "σ= 1.78") is
    of unit "±" (compared only with its like), and its unit is the value's before it ("85 ± 3%")."""
    words: list[str] = []
    found_values: list[Value] = []
    toks = tokens(text)
    skip = -1  # a scale word read with the number word before it
    interval = False  # within a confidence interval's bounds
    for i, token in enumerate(toks):
        word = token.lower().strip(".,;:()[]\"'")
        if clock := _CLOCK.fullmatch(token):
            hours, minutes, seconds = clock.groups()
            at = int(hours) + int(minutes) / 60 + float(seconds or 0) / 3600
            found_values.append(Value(at, "time", len(words), token.strip("(),.;:")))
            words.append(word)
            continue
        found = [m for m in NUMBER.finditer(token) if m.group()]
        ranged = RANGE.fullmatch(token.strip(".,;:()[]"))
        nxt = toks[i + 1].lower().strip(".,;:()[]") if i + 1 < len(toks) else ""
        before = " ".join(toks[max(0, i - 3) : i])
        for m in found:
            raw = m.group()
            value, unit = parse(raw)
            joined = re.match(r"-([a-z]+)", token[m.end() :])
            if joined and joined.group(1) in _SCALE_WORDS and not unit:  # "21-million passages"
                value, unit, raw = value * _SCALE_WORDS[joined.group(1)], "scale", f"{raw} {joined.group(1)}"
            elif token[m.end() : m.end() + 1] == "-" and token[m.end() + 1 : m.end() + 2].isalpha():
                unit = "-"  # a modifier ("8-shot", "3-layer"): compared only with its like
            if ranged and m is found[0] and ranged.group(2):
                value, unit = parse(raw + ranged.group(2))
            if not unit and m.end() == len(token.rstrip(".,;:)]")) and nxt in _SCALE_WORDS:
                value, unit, raw = value * _SCALE_WORDS[nxt], "scale", f"{raw} {nxt}"
            elif not unit and m.end() == len(token) and (shared := shared_scale(toks, i)):
                value, unit, raw = value * _SCALE_WORDS[shared], "scale", f"{raw} {shared}"
            prefix = f"{before} {token[: m.start()]}"
            if (
                _INTERVAL.search(prefix)
                or (ranged and i and _ELIDED_INTERVAL.match(toks[i - 1]) and toks[i - 1].startswith("("))
                or (m is found[0] and _bounds_of(toks, i, found_values, len(words)))
            ):
                interval = True
            if interval:
                unit = "ci"
            elif words and words[-1] == "per" and not unit:
                unit = "per"  # a rate's base ("2.3 obese adults per 100"): compared only with its like
            elif (
                words and words[-1] in KINDS and not unit and m is found[0] and re.fullmatch(r"\d{1,2}", raw)
            ):
                unit = "name"  # "type 2 diabetes", "phase 3 trials": a kind's name, not a quantity
            elif _DISPERSION.search(prefix):
                previous = found_values[-1] if found_values else None
                if previous and not previous.unit and unit in ("%", "x") and previous.start >= len(words) - 2:
                    found_values[-1] = Value(previous.value, unit, previous.start, previous.text + raw[-1])
                unit = "±"
            found_values.append(Value(value, unit, len(words), raw))
        if interval and ((not found and word not in ("to", "-", "–")) or re.search(r"[)\]]|;$", token)):
            interval = False  # the interval closes with its bracket (or with words)
        if not found and words and words[-1] in KINDS and word in _ROMAN and token[:1].isupper():
            found_values.append(Value(_ROMAN[word], "name", len(words), token.strip(".,;:()[]\"'")))
            words.append(word)
            continue  # "Level II", "Phase III": a kind's name, as "type 2" is
        spelled = None if found or skip == i else number_word(word)
        if spelled is None and word == "a" and nxt in _SCALE_WORDS and skip != i:
            # "more than a thousand layers", "a million tokens", "half a million iterations"
            spelled = 0.5 if words and words[-1] == "half" else 1.0
        if spelled is not None and (nxt in _SCALE_WORDS or nxt == "hundred"):  # "two thousand": 2000
            scale, said = _SCALE_WORDS.get(nxt, 100.0), f"{'half ' if spelled == 0.5 else ''}{word} {nxt}"
            then = toks[i + 2].lower().strip(".,;:()[]") if i + 2 < len(toks) else ""
            if nxt == "hundred" and then in _SCALE_WORDS:  # "one hundred thousand": 100,000
                scale, said = scale * _SCALE_WORDS[then], f"{said} {then}"
            found_values.append(Value(spelled * scale, "scale", len(words), said))
            skip = i + 1
        elif spelled is not None:
            # a count glued to what it counts ("five-point") is a modifier, compared only with its like
            glued = "-" in word and number_word(word.partition("-")[2]) is None
            found_values.append(Value(spelled, "-" if glued else "word", len(words), word))
        words.append(word)
    return words, [v for v in found_values if not math.isnan(v.value)]


def _bounds_of(toks: Sequence[str], i: int, found: Sequence[Value], at: int) -> bool:
    """A bracketed range right after a number that lies within it ("0.27 [0.14-0.55]", "0.59 (0.23
    to 1.47, …)"): that number's interval, as if "95% CI" stood before it."""
    if not toks[i].startswith(("(", "[")) or not found or found[-1].start != at - 1:
        return False
    text = toks[i] if RANGE.search(toks[i]) else " ".join(toks[i : i + 3])
    if not RANGE.search(text) and not re.fullmatch(r"\S+ to \S+", text):
        return False
    bounds = [float(b.replace(",", "")) for b in re.findall(r"\d[\d,]*(?:\.\d+)?", text)[:2]]
    return len(bounds) == 2 and bounds[0] < found[-1].value < bounds[1]


def shared_scale(toks: Sequence[str], i: int) -> str | None:
    """The scale word a pair's second number carries for both: "24 and 26 billion", "3 to 5 million"."""
    pair = [t.lower().strip(".,;:()[]") for t in toks[i + 1 : i + 4]]
    if (
        len(pair) == 3
        and pair[0] in ("and", "or", "to")
        and NUMBER.fullmatch(pair[1])
        and pair[2] in _SCALE_WORDS
    ):
        return pair[2]
    return None


# A heading that gives its numbers' scale once: "Model Size (Billions of Parameters) 8 62 540", "(in M)".
_SCALED_HEADING = re.compile(r"\((?:in )?(billions|millions|thousands|B|M|K)\b", re.IGNORECASE)
_HEADING_SCALES = {"billions": 1e9, "b": 1e9, "millions": 1e6, "m": 1e6, "thousands": 1e3, "k": 1e3}


def heading_scale(text: str) -> float | None:
    """The scale a heading in ``text`` gives the numbers under it, or None."""
    found = _SCALED_HEADING.search(text)
    return _HEADING_SCALES[found.group(1).lower()] if found else None


def parse(raw: str) -> tuple[float, str]:
    """The value and its unit class: "%", "x" (a factor), "scale" (k, M, billion…) or ""."""
    text = raw.replace(",", "").strip()
    unit = ""
    for mark in ("%", "×", "x", "X"):
        if text.endswith(mark):
            unit, text = ("x" if mark in "×xX" else mark), text[: -len(mark)].strip()
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
    if units & _OWN_KINDS and a.unit != b.unit:  # a spread, a time or a kind's name is only its like
        return False
    return math.isclose(a.value, b.value, rel_tol=1e-6) and len(units) <= 1


def rounds_to(a: Value, b: Value) -> bool:
    """``a`` said less precisely as ``b`` ("28.4" as "about 28", "4.94%" as "4.9%")."""
    places = len(b.text.partition(".")[2].rstrip("%×xkKMBT").strip()) if "." in b.text else 0
    decimals = len(a.text.partition(".")[2].rstrip("%×xkKMBT").strip()) if "." in a.text else 0
    units = {a.unit, b.unit} - {"", "word", "-"}
    if (
        b.unit == "scale" and not places and a.unit in ("", "scale")
    ):  # "4K tokens" for 4096, "1M" for 1,048,576
        return not same(a, b) and math.isclose(a.value, b.value, rel_tol=0.05)
    mantissa = re.match(r"\d+\.\d+", b.text)
    if b.unit == "scale" and mantissa and a.unit in ("", "scale"):  # "2.68 million" for 2,681,468
        said = float(mantissa.group())
        digits = len(mantissa.group().partition(".")[2])
        return not same(a, b) and math.isclose(round(a.value / (b.value / said), digits), said)
    # Within half a unit of the last place rather than round(): 88.55 is a float just under 88.55,
    # and "88.6" is as fair a rounding of it as "88.5".
    half = 0.5 * 10.0**-places
    return places < decimals and len(units) <= 1 and abs(a.value - b.value) <= half * (1 + 1e-9)


def is_year(v: Value) -> bool:
    return not v.unit and v.value.is_integer() and 1900 <= v.value <= 2100 and len(v.text) == 4


def comparable(a: Value, b: Value) -> bool:
    """Numbers of one kind, either of which the passage could give for the other: years with years,
    the same unit class; words ("two stages") are never rivals."""
    if is_year(a) != is_year(b):
        return False
    units = {a.unit, b.unit}
    if "word" in units:  # "twenty-two people" against "24 Upworkers (… 22)"; never "one" (an article)
        # "a single hidden layer" counts one against another count in words ("two layers")
        single = units == {"word"} and "single" in (a.text.lower(), b.text.lower())
        return units <= {"word", ""} and (min(a.value, b.value) >= 2 or single)
    return a.unit == b.unit or units == {"", "scale"}  # "20k" and "3,000" are both counts


# Units of measurement written after a number, each spelling read as one symbol: a number in
# "mm" is no rival of one in "nm" ("a 70 mm telescope behind a filter centred at 734 nm").
_MEASURE_SPELLINGS = {
    "s": ("s", "sec", "secs", "second", "seconds"),
    "ms": ("ms", "millisecond", "milliseconds"),
    "min": ("min", "mins", "minute", "minutes"),
    "h": ("h", "hr", "hrs", "hour", "hours"),
    "d": ("day", "days"),
    "wk": ("week", "weeks"),
    "mo": ("month", "months"),
    "yr": ("yr", "yrs", "year", "years"),
    "nm": ("nm", "nanometre", "nanometres", "nanometer", "nanometers"),
    "μm": ("μm", "um", "micron", "microns"),
    "mm": ("mm", "millimetre", "millimetres", "millimeter", "millimeters"),
    "cm": ("cm",),
    "km": ("km", "kilometre", "kilometres", "kilometer", "kilometers"),
    "m": ("metre", "metres", "meter", "meters"),
    "hz": ("hz",), "khz": ("khz",), "mhz": ("mhz",), "ghz": ("ghz",), "k": ("kelvin",),
    "ev": ("ev",), "kev": ("kev",), "mev": ("mev",), "gev": ("gev",), "tev": ("tev",),
    "mg": ("mg",), "g": ("gram", "grams"), "kg": ("kg",), "μg": ("μg", "ug"),
    "ml": ("ml",), "l": ("litres", "liters"),
    "kb": ("kb",), "mb": ("mb",), "gb": ("gb",), "tb": ("tb",),
    "px": ("px", "pixel", "pixels"),
    "arcsec": ("arcsec", "arcseconds", "″"), "arcmin": ("arcmin", "arcminutes"),
    "deg": ("deg", "degrees", "°"),
    "db": ("db",), "w": ("w", "watts"), "kw": ("kw",), "v": ("v", "volts"), "mjy": ("mjy",), "μjy": ("μjy",),
}  # fmt: skip
_MEASURES = {spelling: unit for unit, spellings in _MEASURE_SPELLINGS.items() for spelling in spellings}


def measure(tokens: Sequence[str], at: int) -> str | None:
    """The unit of measurement written after the number at word ``at`` ("734 nm", "70mm"), or None."""
    glued = re.match(r"[\d.,]+([A-Za-zμ″°]+)$", tokens[at].strip(".,;:()[]"))
    word = glued.group(1) if glued else _word_after(tokens, at)
    return _MEASURES.get(word.strip(".,;:()[]").lower())


def _word_after(tokens: Sequence[str], at: int) -> str:
    """The word after the number at ``at``, past a bracket of numbers ("68 (16-156) weeks")."""
    after = at + 1
    if after < len(tokens) and re.fullmatch(r"\([\d.,\s–-]+\)", tokens[after]):
        after += 1
    return tokens[after] if after < len(tokens) else ""


def other_measures(a_tokens: Sequence[str], a: Value, b_tokens: Sequence[str], b: Value) -> bool:
    """Whether the two numbers are given in different units of measurement, or one in a unit and
    the other as a count of things ("68 weeks in 43 patients")."""
    unit_a, unit_b = measure(a_tokens, a.start), measure(b_tokens, b.start)
    if unit_a is not None and unit_b is not None:
        return unit_a != unit_b
    if unit_a is not None:
        return counts_a_thing(b_tokens, b.start)
    return unit_b is not None and counts_a_thing(a_tokens, a.start)


_NOT_COUNTED = frozenset(["was", "has", "does", "this", "thus", "its", "less", "plus", "across", "versus"])


def counts_a_thing(tokens: Sequence[str], at: int) -> bool:
    """The number at ``at`` counts the thing named after it ("43 patients")."""
    word = _word_after(tokens, at).strip(".,;:()[]")
    plural = re.fullmatch(r"[a-z]{3,}s", word) or word in ("people", "children", "men", "women")
    return bool(plural) and word not in _NOT_COUNTED and word not in _MEASURES


def statistic(tokens: Sequence[str], at: int) -> bool:
    """The number at word ``at`` is a test's statistic or a correlation, not a measure of a group:
    a P value, "r=0.28", "z = -0.22", "t = 2.1", "F = 4.3"."""
    said = " ".join(tokens[max(0, at - 3) : at + 1]).lower()
    return p_value(tokens, at) or bool(re.search(r"(?:^|[\s(,;])(?:r|z|t|f|ρ|rho)\s?=\s?[(\d.−-]+\S*$", said))


def p_value(tokens: Sequence[str], at: int) -> bool:
    """The number at word ``at`` is a P value ("P = 0.657", "p<0.001", "a p-value of 0.03")."""
    said = " ".join(tokens[max(0, at - 3) : at + 1]).lower()
    return bool(re.search(r"(?:^|[\s(,;])p(?:[- ]values?)?(?: of| was| is)?\s?[=<>≤≥]?\s?[(\d.]+\S*$", said))


_OWN_KINDS = frozenset(["±", "ci", "time", "name"])
_BESIDE = frozenset(["ci", "per"])  # numbers that stand beside a value, not cells of their own


def in_table(found: Sequence[Value], v: Value) -> bool:
    """Whether ``v`` stands among other numbers (a table row: its label names what it counts),
    not in prose (where words around it do). A slash pair ("69.9/86.3") is one cell of a row."""
    near = [
        other.start for other in found if abs(other.start - v.start) <= NEAR and other.unit not in _BESIDE
    ]
    return len(near) >= 4 and len(set(near)) >= 3
