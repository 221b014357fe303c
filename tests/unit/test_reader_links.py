"""Links into the page reader: its address, the sentence a search snippet opens it at, and the
highlight boxes in percent of the page."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from litestar.exceptions import NotFoundException

from app.rendering import Redirect, View
from app.views.reader import boxes, page_of
from app.views.search import snippet_quote, snippet_reader
from catalog.indexing import PaperPdf
from catalog.search_queries import ResultPaper
from catalog.urls import READER_QUOTE_CHARS, reader_path
from indexing.contract import PageView
from retrieval.search import SearchHit, Snippet

TEXT = "…of the gradient. We introduce Adam, an algorithm for first-order optimization. Next one…"


def _hit(snippet: Snippet | None, arxiv_id: str = "1412.6980") -> SearchHit:
    paper = ResultPaper(arxiv_id, "Adam", "", [], [], None, None, None)
    return SearchHit(paper, 1, None, None, None, None, snippet, [])


def test_the_reader_address_carries_the_quote_on_one_line_and_cut_at_a_word() -> None:
    assert reader_path("1412.6980", 3) == "/papers/1412.6980/pages/3"
    assert reader_path("hep-th/9901001", 1, "  a\n b ") == "/papers/hep-th/9901001/pages/1?quote=a+b"
    long = reader_path("1412.6980", 2, "word " * 200)
    quote = parse_qs(urlsplit(long).query)["quote"][0]
    assert len(quote) <= READER_QUOTE_CHARS and quote.endswith("word")


def test_a_snippet_opens_the_reader_at_the_sentence_of_its_first_match() -> None:
    at = TEXT.index("Adam")
    snippet = Snippet(TEXT, [(at, at + 4)], "body", page_start=4, page_end=5)
    assert snippet_quote(snippet) == "We introduce Adam, an algorithm for first-order optimization."
    url = snippet_reader(_hit(snippet))
    assert url == reader_path("1412.6980", 4, "We introduce Adam, an algorithm for first-order optimization.")
    assert snippet_quote(Snippet(TEXT, [(3, 6)], "body", 1)) == "of the gradient."


def test_abstract_snippets_and_pageless_ones_do_not_link_to_the_reader() -> None:
    assert snippet_reader(_hit(Snippet(TEXT, [], "abstract"))) is None
    assert snippet_reader(_hit(Snippet(TEXT, [], "body", page_start=None))) is None
    assert snippet_reader(_hit(None)) is None


def test_boxes_are_clipped_to_the_page_and_given_in_percent() -> None:
    page = PageView(
        1, 9, 600.0, 800.0, "", ((60.0, 80.0, 120.0, 96.0), (590.0, 790.0, 650.0, 900.0), (5, 5, 5, 9))
    )
    first, clipped = boxes(page)
    assert (first.left_pct, first.top_pct, first.width_pct, first.height_pct) == (10.0, 10.0, 10.0, 2.0)
    assert (clipped.x + clipped.width, clipped.y + clipped.height) == (600.0, 800.0)


def test_a_hostile_quote_keeps_only_visible_text() -> None:
    url = reader_path("1412.6980", 1, "a\x00b\u202e c\ud800 d\r\ne")
    assert url == "/papers/1412.6980/pages/1?quote=ab+c+d+e"
    assert reader_path("1412.6980", 1, "\x00\u200b") == "/papers/1412.6980/pages/1"


class FakeReader:
    """A PageReader whose pages hold the quote as ``found`` says: page → (rects, partial)."""

    zoom = 2.0

    def __init__(self, found: dict[int, tuple[int, bool]], pages: int = 5) -> None:
        self.found = found
        self.pages = pages

    def view(self, path: str, sha256: str, number: int, quote: str) -> PageView:
        count, partial = self.found.get(number, (0, False))
        rects = tuple((10.0, 10.0 * i + 10, 50.0, 10.0 * i + 18) for i in range(count))
        return PageView(number, self.pages, 600.0, 800.0, "text", rects, partial)

    def image(self, path: str, sha256: str, number: int) -> bytes:
        return b""

    def close(self) -> None:
        pass


PAPER = PaperPdf(
    "1412.6980",
    "Adam",
    "https://arxiv.org/abs/1412.6980",
    "https://arxiv.org/pdf/1412.6980",
    "done",
    "/pdfs/1412.6980.pdf",
    "ab" * 32,
    5,
)


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        ({3: (2, False)}, 3),  # whole on this page: shown here
        ({4: (1, False)}, 4),  # whole on the next page only: moved there
        ({2: (1, False)}, 2),  # on the previous page
        ({3: (1, True), 4: (2, False)}, 4),  # partly here, whole on the next: the next
        ({3: (1, True), 4: (1, True)}, 3),  # partly here and there: stays, partly marked
        ({}, 3),  # nowhere: stays and says so
    ],
)
def test_the_reader_moves_to_the_page_that_prints_the_whole_quote(
    found: dict[int, tuple[int, bool]], expected: int
) -> None:
    outcome = page_of(PAPER, FakeReader(found), 3, "the quote", "/papers/1412.6980/pages/3")
    if expected == 3:
        assert isinstance(outcome, View) and outcome.context["page"].number == 3
    else:
        assert isinstance(outcome, Redirect) and outcome.status == 302
        assert outcome.path == reader_path("1412.6980", expected, "the quote")


def test_another_spelling_redirects_and_a_page_past_the_end_is_404() -> None:
    moved = page_of(PAPER, FakeReader({}), 2, "q", "/papers/1412.6980v2/pages/2")
    assert moved == Redirect("/papers/1412.6980/pages/2?quote=q")
    with pytest.raises(NotFoundException):
        page_of(PAPER, FakeReader({}), 6, "", "/papers/1412.6980/pages/6")
