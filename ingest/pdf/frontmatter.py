"""Metadata a paper carries on itself: the arXiv side stamp (id, version, primary category, date)
and page 1's front matter (title, authors, abstract), read from font sizes and positions."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from catalog.arxiv_ids import InvalidArxivId
from catalog.arxiv_ids import parse as parse_arxiv_id
from ingest.pdf.cleaning import clean, join_lines
from ingest.pdf.layout import Block, Line, RawPage

STAMP = re.compile(
    r"arXiv:\s*(?P<id>[\w./-]+?)\s*\[(?P<category>[A-Za-z-]+(?:\.[A-Za-z-]+)?)\]\s*"
    r"(?P<date>\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4})"
)
_ABSTRACT = re.compile(
    r"^\s*(?:abstract|a\s?b\s?s\s?t\s?r\s?a\s?c\s?t|summary)\b[\s.:—–-]*(?P<rest>.*)$", re.I
)
_ABSTRACT_END = re.compile(
    r"^(?:\d{1,2}\.?\s+|I\.?\s+)?(?:introduction|keywords|key\s?words|index terms|ccs concepts|"
    r"acm reference format|additional key words)\b",
    re.IGNORECASE,
)
# Words that mark an affiliation, a place or a role rather than a person's name.
_NOT_NAME_WORDS = """university universität université universidad universita università institute institut
    college school department dept laboratory laboratories lab labs research centre center
    inc ltd llc corporation corp company group team google deepmind brain facebook meta microsoft
    openai amazon apple nvidia ibm baidu alibaba tencent huawei samsung intel adobe allen ai
    technology technologies sciences science academy national foundation hospital
    usa uk china germany france canada japan korea india israel switzerland netherlands
    california cambridge oxford stanford berkeley toronto montreal seattle beijing shanghai
    london paris zurich redmond
    equal contribution corresponding author work done during internship abstract conference
    proceedings workshop preprint arxiv under review published paper"""
_NOT_NAME = frozenset(_NOT_NAME_WORDS.split())
# Places whose words are also people's names (Long, Park, View): matched as whole phrases.
_PLACE = re.compile(
    r"\b(?:new york|mountain view|menlo park|palo alto|long beach|san francisco|hong kong)\b", re.I
)
_PARTICLE_WORDS = "de van von der den da di du la le del dos bin al d’ d'"
_PARTICLES = frozenset(_PARTICLE_WORDS.split())
_SPLIT = re.compile(r"\s*(?:\||,|;|&|·|•|\band\b|\s{3,})\s*")
_MARKS = re.compile(r"[\d∗*†‡§¶♯♮♭⋆✝#]+")


@dataclass(frozen=True, slots=True)
class Stamp:
    arxiv_id: str
    version: int | None
    primary_category: str
    date: dt.date | None


def parse_stamp(text: str) -> Stamp | None:
    """``arXiv:1706.03762v5  [cs.CL]  6 Dec 2017`` → its parts; None when the text is no stamp."""
    match = STAMP.search(text)
    if match is None:
        return None
    try:
        arxiv_id = parse_arxiv_id(match["id"])
    except InvalidArxivId:
        return None
    try:
        date = dt.datetime.strptime(" ".join(match["date"].split()), "%d %b %Y").date()
    except ValueError:
        date = None
    return Stamp(arxiv_id.canonical, arxiv_id.version, match["category"], date)


def _rows(lines: list[Line]) -> list[Line]:
    """Lines in visual rows (top to bottom, each row left to right): author grids are read by rows."""
    out: list[Line] = []
    row: list[Line] = []
    for line in sorted(lines, key=lambda li: li.y0):
        if row and abs(line.y0 - row[0].y0) > 3:
            out.extend(sorted(row, key=lambda li: li.x0))
            row = []
        row.append(line)
    out.extend(sorted(row, key=lambda li: li.x0))
    return out


def _title(lines: list[Line], body: float) -> tuple[str | None, float]:
    """The title: the topmost run of clearly large lines on page 1 (a subtitle in a smaller but
    still large size belongs to it; a big logo further down does not). Returns it and its bottom."""
    candidates = [li for li in lines if sum(c.isalpha() for c in li.text) >= 3]
    if not candidates:
        return None, 0.0
    biggest = max(li.size for li in candidates)
    if biggest < body + 1.0:
        return None, 0.0
    threshold = min(body + 2.5, biggest - 0.6)
    run: list[Line] = []
    for line in _rows(candidates):
        if line.size < threshold:
            if run:
                break
            continue
        if run and (
            line.y0 - run[-1].y1 > line.size * 1.5
            or line.size < 0.8 * run[0].size
            or line.bold != run[0].bold
        ):
            break
        run.append(line)
    title = join_lines([(li.marked or li.text).replace("|", " ") for li in run])
    title = " ".join(_MARKS.sub(" ", title).split()) if title[-1:] in "∗*†‡" else " ".join(title.split())
    return title or None, max(li.y1 for li in run)


def _name_token(token: str) -> bool:
    """``Łukasz``, ``N.``, ``Meier-Hellstern``, ``d’Autume``, ``van``: a piece of a person's name."""
    if token in _PARTICLES:
        return True
    core = token.replace("’", "").replace("'", "").replace("-", "").replace(".", "")
    return bool(core) and core.isalpha() and (token[0].isupper() or token[:2] in ("d’", "d'"))


def _pieces(line: Line) -> list[str]:
    """The line cut at name separators (commas, "and", superscript marks, wide gaps)."""
    text = clean(line.marked or line.text)
    if "@" in text or "http" in text or "www." in text:
        return []
    return [" ".join(_MARKS.sub(" ", piece).split()).strip(" .,*") for piece in _SPLIT.split(text)]


def _is_name(piece: str) -> bool:
    tokens = piece.split()
    if not 2 <= len(tokens) <= 5 or len(piece) > 60:
        return False
    if any(t.lower().strip(".,") in _NOT_NAME for t in tokens) or _PLACE.search(piece):
        return False
    return all(_name_token(t) for t in tokens) and sum(t[0].isupper() for t in tokens) >= 2


def _authors(lines: list[Line]) -> list[str]:
    """Person-like pieces of the lines between title and abstract, in the style of the first line
    that has any (names and affiliations are usually set in different fonts). A name broken
    across two lines ("… Yi" / "Dai, …") is put back together."""
    style: tuple[float, bool] | None = None
    authors: list[str] = []
    carry = ""
    for line in _rows(lines):
        pieces = [p for p in _pieces(line) if p]
        if carry and pieces:
            pieces[0] = f"{carry} {pieces[0]}"
        carry = ""
        names = [p for p in pieces if _is_name(p)]
        if not names:
            continue
        line_style = (round(line.size), line.bold)
        if style is None:
            style = line_style
        if line_style != style:
            continue
        authors.extend(n for n in names if n not in authors)
        text = clean(line.marked or line.text).rstrip()
        last = pieces[-1]
        if len(last.split()) == 1 and _name_token(last) and text.endswith(last):
            carry = last
    return authors


def _abstract(blocks: list[Block], body: float) -> tuple[str | None, float | None]:
    """Text after an "Abstract" label up to the next heading, keyword line or smaller print.
    Short blocks in another font size right after the label (a figure's labels) are skipped."""
    for i, block in enumerate(blocks):
        for j, line in enumerate(block.lines):
            match = _ABSTRACT.match(line.text)
            if match is None or (j > 0 and not line.bold):
                continue
            texts = [match["rest"]] + [li.text for li in block.lines[j + 1 :]]
            size: float | None = block.lines[j + 1].size if j + 1 < len(block.lines) else None
            for following in blocks[i + 1 :]:
                first = following.lines[0]
                if (following.heading and texts != [""]) or _ABSTRACT_END.match(first.text):
                    break
                if following.heading:
                    continue
                if size is None:
                    short = sum(len(li.text) for li in following.lines) < 80
                    if short and abs(first.size - body) > 0.8:
                        continue
                    size = first.size
                elif abs(first.size - size) > 1.2:
                    break
                texts.extend(li.text for li in following.lines)
                if sum(map(len, texts)) > 6000:
                    break
            text = join_lines(texts)
            return (text or None), line.y0
    return None, None


_SENTENCE = re.compile(r"[a-z]{2}[.!?]\s+[A-Z]")


def _paragraphs(blocks: list[Block]) -> list[tuple[Block, str]]:
    """Blocks with the blocks that continue them (MuPDF makes a block of every line of some
    justified layouts): each paragraph's first block and its text."""
    out: list[tuple[Block, str, Block]] = []
    for block in blocks:
        text = join_lines([li.text for li in block.lines])
        if out and not block.heading:
            first, joined, last = out[-1]
            size = last.lines[-1].size
            if (
                not first.heading
                and abs(block.lines[0].size - size) <= 0.3
                and 0 <= block.y0 - last.y1 <= size
                and block.x0 < last.x1
                and last.x0 < block.x1
            ):
                out[-1] = (first, join_lines([joined, text]), block)
                continue
        out.append((block, text, block))
    return [(first, text) for first, text, _ in out]


def _unlabelled_abstract(blocks: list[Block], below: float) -> str | None:
    """No "Abstract" label: the first paragraph of running prose under the front matter (at least
    300 characters and three sentences), if it comes before the first section heading."""
    for first, text in _paragraphs(blocks):
        if first.heading:
            return None
        if first.y0 >= below and len(text) >= 300 and len(_SENTENCE.findall(text)) >= 2:
            return text
    return None


def front_matter(page: RawPage, body: float) -> tuple[str | None, list[str], str | None]:
    """(title, authors, abstract) from page 1, each None/empty when not found."""
    top = [li for b in page.blocks for li in b.lines if li.horizontal and li.y0 < page.height * 0.55]
    title, title_bottom = _title(top, body)
    abstract, abstract_top = _abstract(page.blocks, body)
    if abstract is None and title:
        abstract = _unlabelled_abstract(page.blocks, title_bottom)
    bottom = abstract_top if abstract_top is not None else page.height * 0.5
    between = [li for li in top if title_bottom - 1 < li.y0 < bottom]
    authors = _authors(between) if title else []
    title = clean(title) if title else None
    return title or None, [clean(a) for a in authors], (clean(abstract) if abstract else None) or None
