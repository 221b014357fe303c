"""PyMuPDF text extraction, run only inside the sandboxed child (``ingest.pdf.child``).

MuPDF's structured text gives every span's font size, colour, opacity and render flags; spans a
reader cannot see are set aside as hidden text, the rest become lines and blocks that
``ingest.pdf.layout`` puts in reading order.
"""

from __future__ import annotations

import base64
import itertools
from typing import Any

import pymupdf

from ingest.pdf.cleaning import clean
from ingest.pdf.document import HiddenReason, PdfRejected
from ingest.pdf.frontmatter import STAMP, Stamp, front_matter, parse_stamp
from ingest.pdf.layout import (
    Block,
    Line,
    RawPage,
    body_size,
    mark_headings,
    merge_rows,
    order_blocks,
    page_text,
    remove_running_lines,
    unmark_front_matter,
)

# No images, no ligature forms (MuPDF expands them and spaces the words after them correctly:
# "Jeﬀ Rasley", not "JeﬀRasley"), and no clipping to the media box: text outside the page is
# collected so it can be reported as hidden instead of silently vanishing.
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE
_EVERYWHERE = pymupdf.INFINITE_RECT()  # PyMuPDF clips to the page by default, even without the flag
_PAINTED = pymupdf.mupdf.FZ_STEXT_FILLED | pymupdf.mupdf.FZ_STEXT_STROKED
_BOLD = pymupdf.TEXT_FONT_BOLD
_SUPERSCRIPT = pymupdf.TEXT_FONT_SUPERSCRIPT
TINY_POINTS = 1.0
MIN_ALPHA = 13  # of 255: below 5 % opacity nobody reads it
WHITE = 0xF0  # every channel at least this bright
_WHITE_MASK = 0xF0F0F0  # colour & mask == mask: every channel >= 0xF0


class _Hidden:
    """Hidden spans of one page, merged into runs: a run ends at visible text or a change of reason."""

    def __init__(self, page: int) -> None:
        self.page = page
        self.found: list[dict[str, Any]] = []
        self.open = False  # the last span was hidden: the next hidden span may extend its run

    def add(self, reason: HiddenReason, text: str) -> None:
        if self.open and self.found[-1]["reason"] == reason:
            self.found[-1]["text"] += text
        else:
            self.found.append({"page": self.page, "reason": reason, "text": text})
            self.open = True

    def result(self) -> list[dict[str, Any]]:
        out = []
        for item in self.found:
            text = " ".join(clean(item["text"]).split())
            if text:
                out.append({**item, "text": text})
        return out


def _is_white(color: int) -> bool:
    return color & _WHITE_MASK == _WHITE_MASK


def _dark_backgrounds(page: pymupdf.Page) -> list[pymupdf.Rect]:
    """Filled non-white shapes and images: white text on them is visible (figure labels, banners)."""
    rects = [pymupdf.Rect(info["bbox"]) for info in page.get_image_info()]
    for path in page.get_drawings():
        fill = path.get("fill")
        if (
            fill is not None
            and not all(c >= WHITE / 255 for c in fill)
            and path.get("fill_opacity", 1) > 0.05
        ):
            rects.append(pymupdf.Rect(path["rect"]))
    return rects


def _hidden_reason(
    span: dict[str, Any], width: float, height: float, ocr_layer: bool = False
) -> HiddenReason | None:
    painted = span["char_flags"] & _PAINTED
    if not painted and not ocr_layer:
        return "invisible"  # render mode 3 (or 7): drawn with neither fill nor stroke
    if painted and span["alpha"] < MIN_ALPHA:  # MuPDF gives unpainted text alpha 0
        return "transparent"
    if span["size"] < TINY_POINTS:
        return "tiny"
    x0, y0, x1, y1 = span["bbox"]
    if x1 <= 0 or y1 <= 0 or x0 >= width or y0 >= height:
        return "off-page"
    if painted and _is_white(span["color"]):
        return "white"
    return None


def read_page(
    page: pymupdf.Page, number: int, max_chars: int, *, ocr_layer: bool = False
) -> tuple[RawPage, list[dict[str, Any]], str]:
    """One page as blocks of visible lines, its hidden text, and the arXiv stamp text if present.
    With ``ocr_layer``, invisible text counts as visible (see :func:`_is_ocr_layer`).

    The span loop is the parser's hot path (~1,000 spans a page): ordinary visible spans take one
    combined test; only the rest go through :func:`_hidden_reason`.
    """
    data = page.get_text("dict", flags=TEXT_FLAGS, clip=_EVERYWHERE)
    width, height = page.rect.width, page.rect.height
    hidden = _Hidden(number)
    backgrounds: list[pymupdf.Rect] | None = None
    raw = RawPage(number=number, width=width, height=height)
    front = number == 1  # author names are read from page 1, with superscripts marked
    stamp = ""
    chars = 0
    for b in data["blocks"]:
        lines: list[Line] = []
        for li in b["lines"]:
            x0, y0, x1, y1 = li["bbox"]
            on_page = x0 >= 0 and y0 >= 0 and x1 <= width and y1 <= height
            texts: list[str] = []
            marked: list[str] = []
            size = 0.0
            longest = bold = total = 0
            for span in li["spans"]:
                text = span["text"]
                n = len(text)
                chars += n
                if not (
                    on_page
                    and span["char_flags"] & _PAINTED
                    and span["alpha"] >= MIN_ALPHA
                    and span["size"] >= TINY_POINTS
                    and span["color"] & _WHITE_MASK != _WHITE_MASK
                ) and (reason := _hidden_reason(span, width, height, ocr_layer)):
                    if reason == "white":
                        if backgrounds is None:
                            backgrounds = _dark_backgrounds(page)
                        sx0, sy0, sx1, sy1 = span["bbox"]
                        centre = pymupdf.Point((sx0 + sx1) / 2, (sy0 + sy1) / 2)
                        if any(centre in r for r in backgrounds):
                            reason = None
                    if reason is not None:
                        hidden.add(reason, text)
                        continue
                texts.append(text)
                if text.isspace():
                    if front:
                        marked.append(text)
                    continue
                hidden.open = False
                total += n
                if n > longest:
                    longest, size = n, span["size"]
                if span["flags"] & _BOLD:
                    bold += n
                if front:
                    marked.append("|" if span["flags"] & _SUPERSCRIPT else text)
            if not total:
                continue
            line_text = "".join(texts).strip()
            horizontal = -0.01 < li["dir"][1] < 0.01
            if not horizontal and STAMP.search(line_text):
                stamp = line_text
                continue
            lines.append(
                Line(
                    x0,
                    y0,
                    x1,
                    y1,
                    line_text,
                    round(size, 1),
                    bold * 2 > total,
                    horizontal,
                    "".join(marked).strip() if front else None,
                )
            )
        if lines:
            raw.blocks.append(Block(merge_rows(lines)))
    if chars > max_chars:
        raise PdfRejected(
            f"page {number} has {chars:,} characters of text; the limit is {max_chars:,} per page"
        )
    return raw, hidden.result(), stamp


def _is_ocr_layer(page: pymupdf.Page, raw: RawPage, hidden: list[dict[str, Any]]) -> bool:
    """A scanned page with OCR text: images cover at least half of it and nearly all its text is
    invisible (render mode 3 over the picture of the words). That text is what the page says, not
    something hidden from the reader."""
    invisible = sum(len(h["text"]) for h in hidden if h["reason"] == "invisible")
    visible = sum(len(li.text) for b in raw.blocks for li in b.lines)
    if invisible < 100 or visible > 0.1 * invisible:
        return False
    area = raw.width * raw.height
    covered = sum(abs(pymupdf.Rect(i["bbox"]) & page.rect) for i in page.get_image_info())
    return area > 0 and covered >= 0.5 * area


# MuPDF survives many hostile constructs by skipping what it cannot load and saying so only in a
# warning; a page would then silently lose its text. These warnings reject the document instead.
_FATAL_WARNINGS = (
    ("compression bomb", "a compressed stream inflates far beyond its size (a decompression bomb)"),
    ("stack overflow", "objects are nested too deeply to read"),
    ("malloc", "parsing needs more memory than the parser's limit"),
    ("out of memory", "parsing needs more memory than the parser's limit"),
)


def _check_warnings() -> None:
    warnings = pymupdf.TOOLS.mupdf_warnings().lower()
    for marker, reason in _FATAL_WARNINGS:
        if marker in warnings:
            raise PdfRejected(reason)


def _open(data: bytes, max_pages: int) -> pymupdf.Document:
    pymupdf.TOOLS.reset_mupdf_warnings()
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError) as error:
        raise PdfRejected(f"not a readable PDF ({error})") from error
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise PdfRejected("the PDF is encrypted and needs a password")
    try:
        count = doc.page_count
    except (RuntimeError, ValueError) as error:
        doc.close()
        raise PdfRejected(f"the PDF's page tree is broken ({error})") from error
    if count < 1:
        doc.close()
        raise PdfRejected("the PDF has no pages")
    if count > max_pages:
        doc.close()
        raise PdfRejected(f"the PDF has {count:,} pages; the limit is {max_pages:,}")
    return doc


def quiet_mupdf() -> str:
    """Keep MuPDF's own warnings off stderr (every rejected PDF says why in its reply instead);
    returns PyMuPDF's version."""
    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)
    return str(pymupdf.__version__)


def parse_document(data: bytes, *, max_pages: int, max_chars_per_page: int) -> dict[str, Any]:
    """Parse a whole document into the wire form ``ingest.pdf.document.parsed_from_wire`` reads."""
    doc = _open(data, max_pages)
    try:
        pages: list[RawPage] = []
        hidden: list[dict[str, Any]] = []
        stamp: Stamp | None = None
        for index in range(doc.page_count):
            try:
                page = doc.load_page(index)
                raw, page_hidden, stamp_text = read_page(page, index + 1, max_chars_per_page)
                if _is_ocr_layer(page, raw, page_hidden):
                    raw, page_hidden, stamp_text = read_page(
                        page, index + 1, max_chars_per_page, ocr_layer=True
                    )
            except PdfRejected:
                raise
            except (RuntimeError, ValueError) as error:
                raise PdfRejected(f"page {index + 1} cannot be read ({error})") from error
            pages.append(raw)
            hidden.extend(page_hidden)
            if stamp is None and stamp_text:
                stamp = parse_stamp(stamp_text)
        page_count = doc.page_count
        _check_warnings()
    finally:
        doc.close()
    if not any(block.lines for raw in pages for block in raw.blocks):
        raise PdfRejected(
            "no text could be extracted (scanned pages without a text layer, or a damaged file)"
        )

    remove_running_lines(pages)
    body = body_size(pages)
    out_pages = []
    for raw in pages:
        order_blocks(raw)
        mark_headings(raw, body)
        if raw.number == 1:
            unmark_front_matter(raw)
        text, headings = page_text(raw)
        out_pages.append({"number": raw.number, "text": text, "headings": headings})
    title, authors, abstract = front_matter(pages[0], body)
    metadata: dict[str, Any] = {"title": title, "authors": authors, "abstract": abstract}
    if stamp is not None:
        metadata |= {
            "arxiv_id": stamp.arxiv_id,
            "version": stamp.version,
            "primary_category": stamp.primary_category,
            "date": stamp.date.isoformat() if stamp.date else None,
        }
    return {"pages": out_pages, "hidden": hidden, "metadata": metadata, "page_count": page_count}


# search_for's defaults without TEXT_PRESERVE_LIGATURES: a quote is plain text ("first"), the page
# often prints a ligature ("ﬁrst"); hyphenated line ends still match the joined word.
_SEARCH_FLAGS = pymupdf.TEXT_DEHYPHENATE | pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
MAX_QUOTE_CHARS = 500  # a cited quote is a sentence or two; longer input is refused, not searched


def quote_rects(
    data: bytes, number: int, quote: str, max_pages: int
) -> list[tuple[float, float, float, float]]:
    """Where ``quote`` stands on 1-based page ``number``: PyMuPDF's ``search_for`` rectangles in
    page points (one per line the quote spans), empty when the page does not hold it."""
    if not quote.strip():
        raise PdfRejected(f"a quote must be 1 to {MAX_QUOTE_CHARS} characters")
    return page_view(data, number, 0, quote, max_pages, draw=False)["rects"]


def render_page(data: bytes, number: int, zoom: float, max_pages: int) -> tuple[bytes, str, int]:
    """Page ``number`` (1-based) as a PNG at ``zoom`` × 72 dpi, with its plain text (for screen
    readers) and the document's page count (for previous/next links)."""
    view = page_view(data, number, zoom, "", max_pages)
    return base64.b64decode(view["png"]), view["text"], view["pages"]


def page_view(
    data: bytes, number: int, zoom: float, quote: str, max_pages: int, *, draw: bool = True
) -> dict[str, Any]:
    """The page reader's wire answer, from one opening of the document: the page count, the page's
    size in points (``[width, height]``, what the rectangles are measured against), its text, the
    quote's rectangles in page points relative to the page's top-left corner (empty without a
    quote) and, with ``draw``, the PNG at ``zoom`` × 72 dpi (base64: the reply frame is JSON)."""
    if number < 1:
        raise PdfRejected(f"page {number} does not exist")
    text = " ".join(quote.split())
    if len(text) > MAX_QUOTE_CHARS:
        raise PdfRejected(f"a quote must be 1 to {MAX_QUOTE_CHARS} characters")
    doc = _open(data, max_pages)
    try:
        if number > doc.page_count:
            raise PdfRejected(f"page {number} is past the last page ({doc.page_count})")
        page = doc[number - 1]
        box = page.rect  # what get_pixmap draws (the crop box, rotation applied)
        view: dict[str, Any] = {
            "pages": doc.page_count,
            "size": [box.width, box.height],
            "text": clean(page.get_text("text")),
            "rects": [],
        }
        if text:
            found = page.search_for(text, flags=_SEARCH_FLAGS)
            if not found:  # printed otherwise somewhere (a formula, a reordered column): its ends
                found = _quote_ends(page, text)
                view["partial"] = bool(found)
            view["rects"] = [(r.x0 - box.x0, r.y0 - box.y0, r.x1 - box.x0, r.y1 - box.y0) for r in found]
        if draw:
            png = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False).tobytes("png")
            view["png"] = base64.b64encode(png).decode("ascii")
        return view
    finally:
        doc.close()


QUOTE_END_WORDS = 6  # a quote not found whole is looked for by its first and last six words


def _quote_ends(page: Any, text: str) -> list[Any]:
    """The rectangles of the quote's first and last QUOTE_END_WORDS words, each only where it is
    printed exactly once on the page (a phrase found twice would mark the wrong place)."""
    words = text.split()
    if len(words) < 2 * QUOTE_END_WORDS:
        return []
    found: list[Any] = []
    for phrase in (" ".join(words[:QUOTE_END_WORDS]), " ".join(words[-QUOTE_END_WORDS:])):
        rects = page.search_for(phrase, flags=_SEARCH_FLAGS)
        lines = {round(r.y0) for r in rects}
        if len(lines) == 1 or (rects and _one_run(rects)):
            found += rects
    return found


def _one_run(rects: list[Any]) -> bool:
    """Rectangles of one occurrence across a line break: consecutive lines, a few points apart."""
    return all(0 < b.y0 - a.y0 < 2.5 * (a.y1 - a.y0) for a, b in itertools.pairwise(rects))
