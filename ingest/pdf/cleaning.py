"""Character-level clean-up of extracted PDF text: ligatures, TeX spacing accents, hyphenated line
breaks, and everything :func:`catalog.text.scrub` removes (NUL bytes, lone surrogates, controls)."""

from __future__ import annotations

import re
import unicodedata

from catalog.text import scrub

# MuPDF expands most ligatures when asked not to preserve them; fonts without a ToUnicode entry
# still leave the presentation forms behind. Soft hyphens, zero-width characters and U+FFFD
# (MuPDF's "unknown glyph") carry nothing a reader sees.
_TRANSLATE = str.maketrans(
    {
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
        "\u00ad": None,
        "\u200b": None,
        "\u200c": None,
        "\u200d": None,
        "\u2060": None,
        "\ufeff": None,
        "\ufffd": None,
        "\u00a0": " ",
    }
)
# TeX sets accents as separate spacing glyphs (``O˘guz``); MuPDF reports them before the letter.
_SPACING_TO_COMBINING = {
    "\u00b4": "\u0301",  # acute
    "\u02c6": "\u0302",  # circumflex
    "\u02dc": "\u0303",  # tilde
    "\u00af": "\u0304",  # macron
    "\u02d8": "\u0306",  # breve
    "\u02d9": "\u0307",  # dot above
    "\u00a8": "\u0308",  # diaeresis
    "\u02da": "\u030a",  # ring
    "\u02dd": "\u030b",  # double acute
    "\u02c7": "\u030c",  # caron
    "\u00b8": "\u0327",  # cedilla
}
_ACCENT = re.compile("([" + "".join(_SPACING_TO_COMBINING) + r"])\s?([A-Za-zıȷ])")
_HYPHENS = "-\u2010\u00ad"  # hyphen-minus, hyphen, soft hyphen


def _compose(match: re.Match[str]) -> str:
    accent, letter = match[1], match[2]
    letter = {"ı": "i", "ȷ": "j"}.get(letter, letter)
    composed = unicodedata.normalize("NFC", letter + _SPACING_TO_COMBINING[accent])
    return composed if len(composed) == 1 else match[0]


def clean(text: str) -> str:
    """Safe, normalised text for one line: no ligature forms, accents composed, no NUL/surrogates."""
    text = scrub(text).translate(_TRANSLATE)
    if not text.isascii():
        text = unicodedata.normalize("NFC", _ACCENT.sub(_compose, text))
    return text


def join_lines(lines: list[str]) -> str:
    """Lines of one paragraph as one string: a word hyphenated across a line break is joined
    (``trans-`` + ``formation``), any other break becomes a space. Like every dehyphenator it
    also joins a true compound broken after its hyphen (``state-of-the-`` + ``art``)."""
    out = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if out and out[-1] in _HYPHENS and out[-2:-1].isalpha() and line[0].isalpha():
            # "English-" + "to-German" is a compound chain and "Berkeley-" + "Parser" a compound:
            # keep their hyphen; "trans-" + "formation" is one word broken across lines.
            keep = line[0].isupper() or "-" in line.split(maxsplit=1)[0]
            out = out + line if keep else out[:-1] + line
        elif out:
            out += " " + line
        else:
            out = line
    return out
