"""The page reader's view: page n of a paper's indexed PDF, drawn in the parser's sandbox, with the
cited quote highlighted where it stands, the page's text beneath for screen readers and agents,
previous/next links, and our copy and arXiv's as the originals. A paper whose PDF is not held here
gets a plain page that sends the reader to arXiv's PDF at that page (never an error)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from litestar.exceptions import NotFoundException
from sqlalchemy.orm import Session

from app.errors import PaperNotHarvested
from app.rendering import Redirect, View
from app.views.papers import parse_paper_ident
from catalog.indexing import PaperPdf, paper_pdf
from catalog.urls import paper_path, reader_path, reader_quote
from indexing.contract import PageReader, PageUnavailable, PageView

MAX_PAGE = 100_000
_PAGE_NUMBER = re.compile(r"[1-9][0-9]{0,5}", re.ASCII)


def page_number(raw: str) -> int:
    """The 1-based page number of an address segment; 404 when it is none."""
    if not _PAGE_NUMBER.fullmatch(raw) or int(raw) > MAX_PAGE:
        raise NotFoundException(detail=f"There is no page {raw[:20]!r}: pages are numbered from 1.")
    return int(raw)


def paper_of(db: Session, ident: str) -> PaperPdf:
    """The paper an address names, with its indexed PDF; 404 when it is not in the catalogue."""
    arxiv_id = parse_paper_ident(ident)
    found = paper_pdf(db, arxiv_id.canonical)
    if found is None:
        raise PaperNotHarvested(arxiv_id)
    return found


def image_path(arxiv_id: str, number: int) -> str:
    return f"/papers/{arxiv_id}/pages/{number}.png"


@dataclass(frozen=True, slots=True)
class Box:
    """A highlight rectangle in page points and in percent of the page (what the markup uses)."""

    x: float
    y: float
    width: float
    height: float
    left_pct: float
    top_pct: float
    width_pct: float
    height_pct: float


def boxes(page: PageView) -> list[Box]:
    """The quote's rectangles, clipped to the page."""
    out = []
    for x0, y0, x1, y1 in page.rects:
        x0, x1 = max(0.0, min(x0, page.width)), max(0.0, min(x1, page.width))
        y0, y1 = max(0.0, min(y0, page.height)), max(0.0, min(y1, page.height))
        if x1 <= x0 or y1 <= y0:
            continue
        out.append(
            Box(
                round(x0, 2),
                round(y0, 2),
                round(x1 - x0, 2),
                round(y1 - y0, 2),
                round(100 * x0 / page.width, 3),
                round(100 * y0 / page.height, 3),
                round(100 * (x1 - x0) / page.width, 3),
                round(100 * (y1 - y0) / page.height, 3),
            )
        )
    return out


def reader_view(
    db: Session, reader: PageReader | None, ident: str, raw_number: str, quote: str, requested: str
) -> View | Redirect:
    """Page ``raw_number`` of the paper ``ident`` names; a Redirect when ``requested`` (the path)
    is another spelling of the reader's address (a slug or a version in the id)."""
    number = page_number(raw_number)
    return page_of(paper_of(db, ident), reader, number, quote, requested)


def page_of(
    paper: PaperPdf, reader: PageReader | None, number: int, quote: str, requested: str
) -> View | Redirect:
    """:func:`reader_view` once the paper is known."""
    quote = reader_quote(quote)
    here = reader_path(paper.arxiv_id, number)
    if requested != here:
        return Redirect(reader_path(paper.arxiv_id, number, quote))
    if paper.pages and number > paper.pages:
        raise NotFoundException(
            detail=f"{paper.title} has {paper.pages} pages; there is no page {number}. "
            f"Page 1: {reader_path(paper.arxiv_id, 1)}"
        )
    arxiv_pdf = f"{paper.pdf_url}#page={number}"
    crumbs = [("Papers", "/papers"), (paper.title, paper_path(paper.arxiv_id, paper.title))]
    crumbs.append((f"Page {number}", reader_path(paper.arxiv_id, number)))
    context: dict[str, object] = {
        "paper": paper,
        "number": number,
        "quote": quote,
        "arxiv_pdf": arxiv_pdf,
        "paper_url": paper_path(paper.arxiv_id, paper.title),
        "page": None,
        "boxes": [],
        "unavailable": None,
    }
    stored = paper.stored_path
    if stored is None or reader is None or paper.sha256 is None:
        context["unavailable"] = "This archive does not hold this paper's PDF."
    else:
        try:
            page = reader.view(stored, paper.sha256, number, quote)
            whole = page.rects and not page.partial
            if quote and not whole and (moved := _neighbour(reader, paper, stored, page, quote)):
                # A quote from a passage across a page break is cited at the passage's first page.
                return Redirect(reader_path(paper.arxiv_id, moved, quote), status=302)
        except PageUnavailable as exc:
            context["unavailable"] = f"This page cannot be shown here: {exc.reason}."
        else:
            context |= {
                "page": page,
                "boxes": boxes(page),
                "image_url": image_path(paper.arxiv_id, number),
                "previous_url": reader_path(paper.arxiv_id, number - 1) if number > 1 else None,
                "next_url": reader_path(paper.arxiv_id, number + 1) if number < page.pages else None,
                "paragraphs": [p for p in re.split(r"\n\s*\n", page.text) if p.strip()],
            }
    return View(
        template="reader",
        title=f"{paper.title}, page {number}",
        description=f"Page {number} of arXiv:{paper.arxiv_id}"
        + (f", highlighting “{quote[:120]}”" if quote else ""),
        path=reader_path(paper.arxiv_id, number, quote or None),
        context=context,
        crumbs=crumbs,
        indexable=False,
    )


def _neighbour(reader: PageReader, paper: PaperPdf, stored: str, page: PageView, quote: str) -> int | None:
    """The next or the previous page when it prints the whole quote that ``page`` does not."""
    assert paper.sha256 is not None
    for other in (page.number + 1, page.number - 1):
        if 1 <= other <= page.pages:
            found = reader.view(stored, paper.sha256, other, quote)
            if found.rects and not found.partial:
                return other
    return None
