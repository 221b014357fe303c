"""PyMuPDF text extraction, run only inside the sandboxed child (``ingest.pdf.child``).

MuPDF's structured text gives every span's font size, colour, opacity and render flags; spans a
reader cannot see are set aside as hidden text, the rest become lines and blocks that
``ingest.pdf.layout`` puts in reading order.
"""

from __future__ import annotations

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

# No ligature forms, no images, and no clipping to the media box: text outside the page is
# collected so it can be reported as hidden instead of silently vanishing.
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE
_FILLED = pymupdf.mupdf.FZ_STEXT_FILLED
_STROKED = pymupdf.mupdf.FZ_STEXT_STROKED
_BOLD = pymupdf.TEXT_FONT_BOLD
_SUPERSCRIPT = pymupdf.TEXT_FONT_SUPERSCRIPT
TINY_POINTS = 1.0
MIN_ALPHA = 13  # of 255: below 5 % opacity nobody reads it
WHITE = 0xF0  # every channel at least this bright


class _Hidden:
    """Hidden spans of one page, merged into runs: a run ends at visible text or a change of reason."""

    def __init__(self, page: int) -> None:
        self.page = page
        self.found: list[dict[str, Any]] = []
        self._open = False

    def add(self, reason: HiddenReason, text: str) -> None:
        if self._open and self.found[-1]["reason"] == reason:
            self.found[-1]["text"] += text
        else:
            self.found.append({"page": self.page, "reason": reason, "text": text})
            self._open = True

    def interrupt(self) -> None:
        self._open = False

    def result(self) -> list[dict[str, Any]]:
        out = []
        for item in self.found:
            text = " ".join(clean(item["text"]).split())
            if text:
                out.append({**item, "text": text})
        return out


def _is_white(color: int) -> bool:
    return (color >> 16) & 0xFF >= WHITE and (color >> 8) & 0xFF >= WHITE and color & 0xFF >= WHITE


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


def _hidden_reason(span: dict[str, Any], width: float, height: float) -> HiddenReason | None:
    flags = span["char_flags"]
    if not flags & (_FILLED | _STROKED):
        return "invisible"  # render mode 3 (or 7): drawn with neither fill nor stroke
    if span["alpha"] < MIN_ALPHA:
        return "transparent"
    if span["size"] < TINY_POINTS:
        return "tiny"
    x0, y0, x1, y1 = span["bbox"]
    if x1 <= 0 or y1 <= 0 or x0 >= width or y0 >= height:
        return "off-page"
    if _is_white(span["color"]):
        return "white"
    return None


def read_page(page: pymupdf.Page, number: int, max_chars: int) -> tuple[RawPage, list[dict[str, Any]], str]:
    """One page as blocks of visible lines, its hidden text, and the arXiv stamp text if present."""
    data = page.get_text("dict", flags=TEXT_FLAGS)
    blocks = data["blocks"]
    chars = sum(len(s["text"]) for b in blocks for li in b["lines"] for s in li["spans"])
    if chars > max_chars:
        raise PdfRejected(
            f"page {number} has {chars:,} characters of text; the limit is {max_chars:,} per page"
        )
    page_rect = page.rect
    hidden = _Hidden(number)
    backgrounds: list[pymupdf.Rect] | None = None
    raw = RawPage(number=number, width=page_rect.width, height=page_rect.height)
    stamp = ""
    for b in blocks:
        lines: list[Line] = []
        for li in b["lines"]:
            texts: list[str] = []
            marked: list[str] = []
            sizes: dict[float, int] = {}
            bold = 0
            for span in li["spans"]:
                text = span["text"]
                reason = _hidden_reason(span, raw.width, raw.height)
                if reason == "white":
                    if backgrounds is None:
                        backgrounds = _dark_backgrounds(page)
                    x0, y0, x1, y1 = span["bbox"]
                    centre = pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2)
                    if any(centre in r for r in backgrounds):
                        reason = None
                if reason is not None:
                    hidden.add(reason, text)
                    continue
                if not text.strip():
                    texts.append(text)
                    marked.append(text)
                    continue
                hidden.interrupt()
                texts.append(text)
                size = round(span["size"], 1)
                sizes[size] = sizes.get(size, 0) + len(text)
                if span["flags"] & _BOLD:
                    bold += len(text)
                marked.append("|" if span["flags"] & _SUPERSCRIPT else text)
            line_text = clean("".join(texts)).strip()
            if not line_text:
                continue
            horizontal = abs(li["dir"][1]) < 0.01
            if not horizontal and STAMP.search(line_text):
                stamp = line_text
                continue
            size = max(sizes, key=lambda s: sizes[s])
            x0, y0, x1, y1 = li["bbox"]
            lines.append(
                Line(
                    x0,
                    y0,
                    x1,
                    y1,
                    line_text,
                    size,
                    bold * 2 > sum(sizes.values()),
                    horizontal,
                    clean("".join(marked)).strip() if number == 1 else None,
                )
            )
        if lines:
            raw.blocks.append(Block(merge_rows(lines)))
    return raw, hidden.result(), stamp


def _open(data: bytes, max_pages: int) -> pymupdf.Document:
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError) as error:
        raise PdfRejected(f"not a readable PDF ({error})") from error
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise PdfRejected("the PDF is encrypted and needs a password")
    count = doc.page_count
    if count < 1:
        doc.close()
        raise PdfRejected("the PDF has no pages")
    if count > max_pages:
        doc.close()
        raise PdfRejected(f"the PDF has {count:,} pages; the limit is {max_pages:,}")
    return doc


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
            except PdfRejected:
                raise
            except (RuntimeError, ValueError) as error:
                raise PdfRejected(f"page {index + 1} cannot be read ({error})") from error
            pages.append(raw)
            hidden.extend(page_hidden)
            if stamp is None and stamp_text:
                stamp = parse_stamp(stamp_text)
        page_count = doc.page_count
    finally:
        doc.close()

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
