"""Page geometry to text: reading order for one- and two-column pages, running headers/footers,
section headings. Pure Python over plain line/block records, so it is testable without MuPDF."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from ingest.pdf.cleaning import clean, join_lines

_SENTENCE_END = ".!?:;)]\"'”’"
MARGIN_BAND = 0.1  # top and bottom fraction of the page where running headers/footers live
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(
    r"^\W*(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s*(?:of|/)\s*\d{1,4})?\W*$", re.IGNORECASE
)
_NUMBERED = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[A-H](?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.)\s+\S")
_CAPTION = re.compile(r"^(?:fig(?:ure)?|table|tab|algorithm|listing|eq|equation)\b\.?\s*\d", re.IGNORECASE)
_AFFILIATION = re.compile(r"\b(?:Universit|Institut|Research|Laborator|College|School|Inc\b|Ltd\b)", re.I)
_KNOWN_HEADINGS = re.compile(
    r"^(?:\d{1,2}\.?\s+)?(?:abstract|introduction|related work|background|conclusions?|discussion|"
    r"references|bibliography|acknowledge?ments?|appendix|appendices|limitations|"
    r"broader impacts?|ethics statement)\b",
    re.IGNORECASE,
)


@dataclass(slots=True)
class Line:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float  # the font size most of its characters have
    bold: bool
    horizontal: bool = True
    # The text with superscripts (footnote marks, affiliation numbers) replaced by "|": page 1 only,
    # where author names are read.
    marked: str | None = None


@dataclass(slots=True)
class Block:
    lines: list[Line]
    heading: bool = False

    @property
    def x0(self) -> float:
        return min(line.x0 for line in self.lines)

    @property
    def x1(self) -> float:
        return max(line.x1 for line in self.lines)

    @property
    def y0(self) -> float:
        return min(line.y0 for line in self.lines)

    @property
    def y1(self) -> float:
        return max(line.y1 for line in self.lines)


@dataclass(slots=True)
class RawPage:
    number: int
    width: float
    height: float
    blocks: list[Block] = field(default_factory=list)


def merge_rows(lines: list[Line]) -> list[Line]:
    """Join lines MuPDF split on one baseline (``3.1`` + ``Encoder and Decoder Stacks``)."""
    out: list[Line] = []
    for line in lines:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.horizontal
            and line.horizontal
            and abs(line.y0 - prev.y0) < 2
            and abs(line.y1 - prev.y1) < 2
            and line.x0 >= prev.x1 - 1
        ):
            weight_prev, weight = len(prev.text), len(line.text)
            out[-1] = Line(
                prev.x0,
                min(prev.y0, line.y0),
                line.x1,
                max(prev.y1, line.y1),
                f"{prev.text} {line.text}",
                prev.size if weight_prev >= weight else line.size,
                (prev.bold * weight_prev + line.bold * weight) * 2 > weight_prev + weight,
                True,
                None if prev.marked is None or line.marked is None else f"{prev.marked} | {line.marked}",
            )
        else:
            out.append(line)
    return out


def _key(text: str) -> str:
    return _DIGITS.sub("#", "".join(text.lower().split()))


def _in_margin(line: Line, page: RawPage) -> bool:
    return line.y1 <= page.height * MARGIN_BAND or line.y0 >= page.height * (1 - MARGIN_BAND)


def remove_running_lines(pages: list[RawPage]) -> None:
    """Drop page numbers and lines that repeat in the top/bottom band of several pages (running
    headers and footers; digits are ignored when comparing, so "Page 3" matches "Page 4")."""
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({_key(li.text) for b in page.blocks for li in b.lines if _in_margin(li, page)})
    repeats = max(2, math.ceil(0.3 * len(pages)))
    for page in pages:
        kept: list[Block] = []
        for block in page.blocks:
            block.lines = [
                li
                for li in block.lines
                if not (
                    _in_margin(li, page)
                    and (_PAGE_NUMBER.match(li.text) or (len(pages) > 1 and counts[_key(li.text)] >= repeats))
                )
            ]
            if block.lines:
                kept.append(block)
        page.blocks = kept


def _side(x0: float, x1: float, mid: float, gutter: float = 10.0) -> int:
    """-1: left of the gutter, 1: right of it, 0: across it."""
    if x1 <= mid + gutter and x0 < mid - gutter:
        return -1
    if x0 >= mid - gutter and x1 > mid + gutter:
        return 1
    return 0


def _split_columns(block: Block, mid: float) -> list[Block]:
    """A block MuPDF built from lines of both columns (written in an unusual order) becomes one
    block per run of lines on the same side."""
    out: list[Block] = []
    current: list[Line] = []
    side = None
    for line in block.lines:
        line_side = _side(line.x0, line.x1, mid)
        if current and line_side != side:
            out.append(Block(current, block.heading))
            current = []
        current.append(line)
        side = line_side
    out.append(Block(current, block.heading))
    return out


def order_blocks(page: RawPage) -> None:
    """Reading order. On a two-column page, blocks between full-width blocks (title, wide figures)
    are read left column first, then right; other pages keep MuPDF's order (the content stream's,
    which is the authoring order for most papers)."""
    mid = page.width / 2
    blocks: list[Block] = []
    for b in page.blocks:
        parts = _split_columns(b, mid) if len(b.lines) > 1 else [b]
        # Exactly one run per column: a block of the left column and one of the right, merged.
        if len(parts) == 2 and {_side(p.x0, p.x1, mid) for p in parts} == {-1, 1}:
            blocks.extend(parts)
        else:
            blocks.append(b)
    sides: dict[int, int] = {}  # id(block) -> side
    chars = {-1: 0, 0: 0, 1: 0}
    for b in blocks:
        x0, x1 = b.x0, b.x1
        side = sides[id(b)] = _side(x0, x1, mid)
        if b.lines[0].horizontal:
            # Only column-wide blocks vote for a two-column layout (author grids are narrow).
            wide = x1 - x0 >= 0.3 * page.width or side == 0
            chars[side if wide else 0] += sum(len(li.text) for li in b.lines)
    total = sum(chars.values())
    if not total or chars[-1] < 0.2 * total or chars[1] < 0.2 * total:
        return
    ordered: list[Block] = []
    band: list[tuple[bool, float, Block]] = []

    def flush() -> None:
        band.sort(key=lambda item: (item[0], item[1]))
        ordered.extend(b for _, _, b in band)
        band.clear()

    for block in sorted(blocks, key=lambda b: b.y0):
        side = sides[id(block)]
        if side == 0 and block.lines[0].horizontal:
            flush()
            ordered.append(block)
        else:
            band.append((side > 0, block.y0, block))
    flush()
    page.blocks = ordered


def body_size(pages: list[RawPage]) -> float:
    """The font size of running text: the size most characters of the document have."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for block in page.blocks:
            for line in block.lines:
                sizes[round(line.size * 2) / 2] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _is_heading(line: Line, body: float, alone: bool) -> bool:
    text = line.text.strip()
    words = text.split()
    if not (2 <= len(text) <= 120 and len(words) <= 14 and any(c.isalpha() for c in text)):
        return False
    if _CAPTION.match(text) or (text.endswith((".", ",", ";", ":")) and not _NUMBERED.match(text)):
        return False
    if "," in text and _AFFILIATION.search(text):  # "1 Facebook AI Research, Paris": a footnote
        return False
    if _KNOWN_HEADINGS.match(text) and (alone or line.bold or line.size > body + 0.5) and len(words) <= 4:
        return True
    bigger = line.size >= body + 1.0
    numbered = bool(_NUMBERED.match(text)) and words[-1][:1].isalpha()
    # Small capitals at body size ("2.1 ADAM'S UPDATE RULE", ICLR's style) are neither bold nor big.
    capitals = numbered and len(words) <= 10 and " ".join(words[1:]).isupper()
    return (
        (bigger and (alone or numbered))
        or (line.bold and (numbered or alone) and line.size >= body - 0.5)
        or (capitals and line.size >= body - 1.5)
    )


def _continues_heading(heading: Line, line: Line, body: float) -> bool:
    """The second line of a heading that wrapped ("3.4 Batch Normalization regularizes the" /
    "model"): the same distinctive font, and the heading so far does not end a sentence."""
    distinctive = (
        heading.bold or heading.size >= body + 1.0 or (heading.text.isupper() and line.text.isupper())
    )
    return (
        distinctive
        and line.bold == heading.bold
        and abs(line.size - heading.size) < 0.3
        and len(line.text) <= 60
        and heading.text[-1:] not in ".:;"
    )


def _followed_by_prose(blocks: list[Block], index: int, body: float) -> bool:
    following = blocks[index + 1] if index + 1 < len(blocks) else None
    if following is None:
        return False
    return sum(len(li.text) for li in following.lines) >= 80 and abs(following.lines[0].size - body) <= 1.0


def mark_headings(page: RawPage, body: float) -> None:
    """Split a heading line (and its wrapped second line) off the top of its block and flag it;
    the rest stays a paragraph. An unnumbered heading must be followed by prose: bold or large
    labels inside figures and tables are not sections."""
    out: list[Block] = []
    for i, block in enumerate(page.blocks):
        first = block.lines[0]
        alone = len(block.lines) == 1
        if not (first.horizontal and _is_heading(first, body, alone=alone)):
            out.append(block)
            continue
        if not (_NUMBERED.match(first.text) or _KNOWN_HEADINGS.match(first.text)) and not (
            _followed_by_prose(page.blocks, i, body) if alone else True
        ):
            out.append(block)
            continue
        lines = [first]
        rest = block.lines[1:]
        if rest and _continues_heading(first, rest[0], body):
            lines.append(rest.pop(0))
        out.append(Block(lines, heading=True))
        if rest:
            out.append(Block(rest))
    page.blocks = out


def unmark_front_matter(page: RawPage) -> None:
    """On page 1, bold author names and affiliations above the abstract are not section headings:
    nothing before the first recognisable heading ("Abstract", "1 Introduction") counts."""
    for i, block in enumerate(page.blocks):
        text = block.lines[0].text
        if block.heading and (_KNOWN_HEADINGS.match(text) or _NUMBERED.match(text)):
            for earlier in page.blocks[:i]:
                earlier.heading = False
            return


def page_text(page: RawPage) -> tuple[str, list[tuple[int, str]]]:
    """The page's text (paragraphs separated by a blank line) and its headings with their offsets.
    A paragraph MuPDF split in two (at a column break, around a footnote mark) is rejoined when the
    first part stops mid-sentence and the second goes on in lower case."""
    parts: list[str] = []
    headings: list[tuple[int, str]] = []
    offset = 0
    previous_heading = True
    for block in page.blocks:
        paragraph = clean(join_lines([line.text for line in block.lines])).strip()
        if not paragraph:
            continue
        if (
            parts
            and not block.heading
            and not previous_heading
            and parts[-1][-1] not in _SENTENCE_END
            and paragraph[0].islower()
        ):
            offset -= len(parts[-1])
            parts[-1] = join_lines([parts[-1], paragraph])
            offset += len(parts[-1])
            continue
        if parts:
            offset += 2
        if block.heading:
            headings.append((offset, paragraph))
        parts.append(paragraph)
        offset += len(paragraph)
        previous_heading = block.heading
    return "\n\n".join(parts), headings
