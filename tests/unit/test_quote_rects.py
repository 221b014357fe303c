"""Locating a cited quote on a PDF page (the page reader's highlight)."""

from __future__ import annotations

import base64

import pytest

from ingest.pdf import PdfLimits
from ingest.pdf.document import PdfRejected
from ingest.pdf.extract import quote_rects, render_page
from ingest.pdf.sandbox import PdfParserPool, _Child
from tests.integration.pdf_samples import text_pdf

PDF = text_pdf(["First page about cats.", "Transformers attend to every token at once."])


def test_the_quote_is_found_on_its_own_page_only() -> None:
    rects = quote_rects(PDF, 2, "attend to  every\ntoken", max_pages=10)
    assert len(rects) == 1
    x0, y0, x1, y1 = rects[0]
    assert 0 <= x0 < x1 and 0 <= y0 < y1
    assert quote_rects(PDF, 1, "attend to every token", max_pages=10) == []


@pytest.mark.parametrize(("number", "quote"), [(0, "cats"), (3, "cats"), (1, ""), (1, "x" * 501)])
def test_bad_pages_and_quotes_are_refused(number: int, quote: str) -> None:
    with pytest.raises(PdfRejected):
        quote_rects(PDF, number, quote, max_pages=10)


def test_a_page_renders_as_png_with_its_text_and_the_page_count() -> None:
    png, text, count = render_page(PDF, 2, 1.0, max_pages=10)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert "Transformers attend" in text and "cats" not in text
    assert count == 2
    with pytest.raises(PdfRejected):
        render_page(PDF, 3, 1.0, max_pages=10)


def test_the_sandboxed_child_draws_a_page_and_locates_the_quote() -> None:
    limits = PdfLimits()
    child = _Child(limits.memory_bytes)
    try:
        reply = child.parse(PDF, limits, {"page": 2, "zoom": 1.0, "quote": "every token"})
    finally:
        child.close()
    assert reply["ok"], reply
    result = reply["result"]
    assert base64.b64decode(result["png"]).startswith(b"\x89PNG")
    assert result["pages"] == 2 and "Transformers" in result["text"]
    assert [tuple(r) for r in result["rects"]] == quote_rects(PDF, 2, "every token", max_pages=10)


def test_the_pool_draws_pages_and_refuses_a_page_past_the_end() -> None:
    pool = PdfParserPool()
    try:
        view = pool.page(PDF, PdfLimits(), 1, 1.0, "cats")
        assert view["pages"] == 2 and len(view["rects"]) == 1
        with pytest.raises(PdfRejected, match="past the last page"):
            pool.page(PDF, PdfLimits(), 3, 1.0, "")
    finally:
        pool.close()


def test_a_page_read_without_drawing_gives_its_size_text_and_the_quote_inside_it() -> None:
    pool = PdfParserPool()
    try:
        view = pool.page(PDF, PdfLimits(), 2, 1.0, "every token", draw=False)
    finally:
        pool.close()
    assert "png" not in view and "Transformers" in view["text"] and view["pages"] == 2
    width, height = view["size"]
    [(x0, y0, x1, y1)] = view["rects"]
    assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height
