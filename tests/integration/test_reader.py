"""The page reader over a real catalogue and real demo PDFs: ``/papers/<id>/pages/<n>`` in HTML and
markdown, the page image, the quote's highlight against what PyMuPDF's ``search_for`` finds, the
fallback to arXiv for a paper whose PDF is not held here, and 404s for pages that do not exist."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient
from sqlalchemy import select

from app.main import create_app
from catalog.db import make_engine, transaction
from catalog.models import FullText, Paper
from catalog.urls import reader_path
from ingest.pdf.extract import quote_rects, render_page
from settings import SHARED_DATA
from tests.integration.browse_catalogue import built
from tests.integration.chat_corpus import build as build_chat_corpus
from tests.integration.chat_corpus import environment
from tests.integration.page_parsing import parse_html

ADAM = "1412.6980"
ADAM_PDF = SHARED_DATA / "pdfs" / "arxiv" / f"{ADAM}.pdf"
CHANGED = "1502.03167"  # its recorded file is replaced after indexing
NO_PDF = "astro-ph/0601001"  # in the catalogue, never indexed from a PDF
# Printed with a ligature ("ﬁrst") and a hyphenated line end ("mo-ments"): both must still match.
QUOTE = (
    "We introduce Adam, an algorithm for first-order gradient-based optimization of stochastic "
    "objective functions, based on adaptive estimates of lower-order moments."
)
MD = {"accept": "text/markdown"}


@dataclass
class Reader:
    client: TestClient[Any]
    pages: int


def _record(url: str, arxiv_id: str, path: Path, sha256: str, pages: int) -> None:
    engine = make_engine(url)
    try:
        with transaction(engine) as db:
            paper_id = db.scalar(select(Paper.id).where(Paper.arxiv_id == arxiv_id))
            assert paper_id is not None, arxiv_id
            db.add(
                FullText(
                    paper_id=paper_id,
                    status="done",
                    attempts=1,
                    source_path=str(path),
                    sha256=sha256,
                    pages=pages,
                    hidden_text=[],
                )
            )
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    work = tmp_path_factory.mktemp("reader")
    with built("sqlite", SHARED_DATA, work) as (settings, _facts):
        data = ADAM_PDF.read_bytes()
        pages = render_page(data, 1, 0.1, max_pages=500)[2]
        _record(settings.database_url, ADAM, ADAM_PDF, hashlib.sha256(data).hexdigest(), pages)
        changed = work / "changed.pdf"
        shutil.copyfile(SHARED_DATA / "pdfs" / "arxiv" / f"{CHANGED}.pdf", changed)
        _record(settings.database_url, CHANGED, changed, "0" * 64, 10)
        with TestClient(create_app(settings)) as client:
            yield Reader(client, pages)


def test_the_page_shows_the_image_the_highlight_and_the_text(reader: Reader) -> None:
    response = reader.client.get(reader_path(ADAM, 1, QUOTE))
    assert response.status_code == 200, response.text[:500]
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    page = parse_html(response.text)
    [image] = page.find("img", **{"class": "reader-image"})
    assert image.attrs["src"] == f"/papers/{ADAM}/pages/1.png"
    [svg] = page.find("svg", **{"class": "reader-marks"})
    width, height = (float(v) for v in svg.attrs["viewbox"].split()[2:])
    assert (round(width), round(height)) == (595, 842)  # A4 in points
    marks = page.find("rect", **{"class": "reader-mark"})
    expected = quote_rects(ADAM_PDF.read_bytes(), 1, QUOTE, max_pages=500)
    assert len(expected) == 3  # the quote's three printed lines
    assert len(marks) == len(expected)
    for mark, (x0, y0, x1, y1) in zip(marks, expected, strict=True):
        x, y, w, h = (float(mark.attrs[k]) for k in ("x", "y", "width", "height"))
        assert 0 <= x <= x + w <= width and 0 <= y <= y + h <= height
        assert (x, y, x + w, y + h) == pytest.approx((x0, y0, x1, y1), abs=0.01)
        assert float(mark.attrs["data-left"]) == pytest.approx(100 * x0 / width, abs=0.001)
        assert float(mark.attrs["data-top"]) == pytest.approx(100 * y0 / height, abs=0.001)
    assert "We introduce Adam" in page.text and "Text of page 1" in page.text
    hrefs = page.hrefs()
    assert f"https://arxiv.org/pdf/{ADAM}#page=1" in hrefs or any(h.endswith(f"{ADAM}#page=1") for h in hrefs)
    assert f"/papers/{ADAM}/pages/2" in hrefs and f"/papers/{ADAM}/pages/0" not in hrefs
    last = parse_html(reader.client.get(reader_path(ADAM, reader.pages)).text).hrefs()
    assert f"/papers/{ADAM}/pages/{reader.pages - 1}" in last
    assert f"/papers/{ADAM}/pages/{reader.pages + 1}" not in last


def test_a_quote_on_the_next_or_previous_page_moves_the_reader_there(reader: Reader) -> None:
    response = reader.client.get(reader_path(ADAM, 2, QUOTE), follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == reader_path(ADAM, 1, QUOTE)


def test_a_quote_not_on_the_page_says_so(reader: Reader) -> None:
    response = reader.client.get(reader_path(ADAM, 5, QUOTE))
    assert response.status_code == 200
    assert not parse_html(response.text).find("rect", **{"class": "reader-mark"})
    assert "was not found on this page" in response.text


def test_the_page_image_is_a_cached_png(reader: Reader) -> None:
    services = reader.client.app.state.services
    before = services.page_reader.rendered
    response = reader.client.get(f"/papers/{ADAM}/pages/3.png")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    assert response.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert response.headers["cache-control"].startswith("public, max-age=")
    etag = response.headers["etag"]
    again = reader.client.get(f"/papers/{ADAM}/pages/3.png")
    assert again.content == response.content
    assert services.page_reader.rendered == before + 1  # the second came from the cache
    unchanged = reader.client.get(f"/papers/{ADAM}/pages/3.png", headers={"if-none-match": etag})
    assert unchanged.status_code == 304 and not unchanged.content


def test_the_page_in_markdown_for_agents(reader: Reader) -> None:
    response = reader.client.get(reader_path(ADAM, 1, QUOTE), headers=MD)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    text = response.text
    assert text.startswith("# Adam") and "found on this page (3 lines)" in text
    assert f"/papers/{ADAM}/pages/1.png" in text and "## Text of page 1" in text
    assert "We introduce Adam" in text
    suffix = reader.client.get(f"/papers/{ADAM}/pages/1.md", params={"quote": QUOTE})
    assert suffix.status_code == 200 and suffix.text == text


@pytest.mark.parametrize("page", ["0", "16", "999999", "abc", "1.5", "-1", "01"])
def test_pages_that_do_not_exist_are_404(reader: Reader, page: str) -> None:
    response = reader.client.get(f"/papers/{ADAM}/pages/{page}")
    assert response.status_code == 404, page
    assert "text/html" in response.headers["content-type"]
    assert "This page isn’t here" in response.text and "Where to look next" in response.text
    if page.isdigit():
        assert reader.client.get(f"/papers/{ADAM}/pages/{page}.png").status_code == 404


def test_unknown_papers_and_image_markdown_are_404(reader: Reader) -> None:
    assert reader.client.get("/papers/2999.99999/pages/1").status_code == 404
    assert reader.client.get(f"/papers/{ADAM}/pages/1.png.md").status_code == 404


def test_other_spellings_redirect_to_the_reader_address(reader: Reader) -> None:
    response = reader.client.get(f"/papers/{ADAM}v2/pages/2", params={"quote": "a b"}, follow_redirects=False)
    assert response.status_code == 301
    assert response.headers["location"] == f"/papers/{ADAM}/pages/2?quote=a+b"


@pytest.mark.parametrize("arxiv_id", [NO_PDF, CHANGED])
def test_without_a_usable_pdf_the_page_links_to_arxiv(reader: Reader, arxiv_id: str) -> None:
    response = reader.client.get(reader_path(arxiv_id, 3, "some quote"))
    assert response.status_code == 200, response.text[:300]
    page = parse_html(response.text)
    assert any(h.endswith(f"{arxiv_id}#page=3") for h in page.hrefs())
    assert not page.find("img", **{"class": "reader-image"})
    assert "some quote" in page.text
    if arxiv_id == CHANGED:
        assert "changed since it was indexed" in page.text
    markdown = reader.client.get(reader_path(arxiv_id, 3), headers=MD)
    assert markdown.status_code == 200 and f"{arxiv_id}#page=3" in markdown.text
    assert reader.client.get(f"/papers/{arxiv_id}/pages/3.png").status_code == 404


def test_a_quote_printed_otherwise_is_marked_by_its_first_words(reader: Reader) -> None:
    # On page 2 the PDF prints "m̂t" as a formula: the whole sentence is not found, its start is.
    quote = (
        "The good news is that this initialization bias can be easily counteracted, resulting in "
        "bias-corrected estimates mt and"
    )
    page = parse_html(reader.client.get(reader_path(ADAM, 2, quote)).text)
    assert len(page.find("rect", **{"class": "reader-mark"})) == 1
    assert "its first and last words are highlighted" in page.text
    markdown = reader.client.get(reader_path(ADAM, 2, quote), headers=MD).text
    assert "not printed exactly like this on this page" in markdown


@pytest.mark.slow
def test_a_full_text_search_snippet_opens_the_reader_at_its_sentence(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """End to end over PDFs ingested by the product's pipeline (the chat corpus): the snippet's page
    link opens our reader on the file the worker recorded, its sentence highlighted."""
    corpus = build_chat_corpus(tmp_path_factory.mktemp("reader-search") / "data")
    with environment(corpus.env) as settings, TestClient(create_app(settings)) as client:
        html = client.get("/search", params={"q": "multi-head attention jointly attend subspaces"}).text
        links = parse_html(html).find("a", **{"class": "reader-link"})
        assert links, "no full-text snippet links to the reader"
        href = links[0].attrs["href"]
        assert href.startswith("/papers/") and "/pages/" in href and "?quote=" in href
        response = client.get(href)
        assert response.status_code == 200, response.text[:300]
        page = parse_html(response.text)
        assert page.find("img", **{"class": "reader-image"})
        assert page.find("rect", **{"class": "reader-mark"}), "the snippet's sentence is not highlighted"
        image = client.get(page.find("img", **{"class": "reader-image"})[0].attrs["src"])
        assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
