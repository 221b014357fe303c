"""The PDF parser's text logic without MuPDF: cleaning, reading order, running headers, headings,
the arXiv stamp and page-1 front matter, on hand-made line geometry."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest

from ingest.pdf import PdfLimits
from ingest.pdf.cleaning import clean, join_lines
from ingest.pdf.document import parsed_from_wire
from ingest.pdf.frontmatter import front_matter, parse_stamp
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
from settings import PROJECT_ROOT, get_settings

W, H = 612.0, 792.0


def line(
    text: str, x0: float, y0: float, x1: float | None = None, *, size: float = 10, bold: bool = False
) -> Line:
    return Line(x0, y0, x1 if x1 is not None else x0 + 6 * len(text), y0 + size, text, size, bold, True, text)


def block(*lines: Line) -> Block:
    return Block(list(lines))


def paragraph(text: str, x0: float, y0: float, x1: float, rows: int = 4) -> Block:
    """A block of ``rows`` lines, each a numbered copy of ``text``."""
    return Block([line(f"{text} line {i}.", x0, y0 + 12 * i, x1) for i in range(rows)])


# --- cleaning -------------------------------------------------------------------------------


def test_clean_expands_ligatures_and_composes_tex_accents() -> None:
    assert clean("we ﬁnd eﬃcient ﬂows") == "we find efficient flows"
    assert clean("Barlas O˘guz and Andreas R¨uckl´e") == "Barlas Oğuz and Andreas Rücklé"


def test_clean_removes_nul_surrogates_and_invisible_characters() -> None:
    dirty = "a\x00b\ud800c\udfffd\ufffde\u00adf\u200bg\x07h"
    cleaned = clean(dirty)
    assert cleaned == "abcdefgh"
    cleaned.encode("utf-8")  # a lone surrogate would raise here


def test_join_lines_dehyphenates_only_broken_words() -> None:
    assert join_lines(["the trans-", "formation of"]) == "the transformation of"
    assert join_lines(["English-", "to-German task"]) == "English-to-German task"
    assert join_lines(["the Berkeley-", "Parser [29]"]) == "the Berkeley-Parser [29]"
    assert join_lines(["an ordinary", "break", "", "here"]) == "an ordinary break here"
    assert join_lines(["a dash -", "between"]) == "a dash - between"


# --- reading order --------------------------------------------------------------------------


def test_two_columns_are_read_left_then_right_between_full_width_blocks() -> None:
    title = block(line("A Title Spanning The Page", 100, 60, 500, size=16))
    left1, left2 = paragraph("left top", 50, 120, 290), paragraph("left bottom", 50, 300, 290)
    right1, right2 = paragraph("right top", 320, 120, 560), paragraph("right bottom", 320, 300, 560)
    figure = block(line("Figure 1: a caption across both columns of the page", 60, 480, 550))
    left3, right3 = paragraph("left after", 50, 520, 290), paragraph("right after", 320, 520, 560)
    # Content-stream order that is wrong on purpose: right column first, figure last.
    page = RawPage(1, W, H, [right2, right1, title, left2, left1, right3, left3, figure])
    order_blocks(page)
    assert page.blocks == [title, left1, left2, right1, right2, figure, left3, right3]


def test_a_block_mixing_both_columns_is_split_and_ordered() -> None:
    # MuPDF put the right column's lines first and the left column's after them in one block.
    right = [line(f"right line {i} of the second column text", 320, 100 + 12 * i, 560) for i in range(6)]
    left = [line(f"left line {i} of the first column text", 50, 100 + 12 * i, 290) for i in range(6)]
    page = RawPage(3, W, H, [Block(right + left)])
    order_blocks(page)
    assert [li.text for b in page.blocks for li in b.lines] == [li.text for li in left + right]


def test_single_column_pages_and_author_grids_keep_stream_order() -> None:
    body = [paragraph(f"para {i}", 72, 100 + 80 * i, 540) for i in range(4)]
    page = RawPage(2, W, H, list(reversed(body)))
    order_blocks(page)
    assert page.blocks == list(reversed(body))
    # Narrow author blocks side by side are not columns of text.
    authors = [block(line(f"Author {i}", 80 + 120 * i, 150, 160 + 120 * i)) for i in range(4)]
    grid = RawPage(1, W, H, [*authors, *body])
    order_blocks(grid)
    assert grid.blocks == [*authors, *body]


def test_merge_rows_joins_pieces_of_one_baseline() -> None:
    merged = merge_rows(
        [line("3.1", 72, 300, 85, bold=True), line("Encoder and Decoder Stacks", 95, 300, bold=True)]
    )
    assert [li.text for li in merged] == ["3.1 Encoder and Decoder Stacks"]
    assert merged[0].bold
    two = merge_rows([line("first line", 72, 300), line("second line", 72, 312)])
    assert len(two) == 2


# --- running headers and footers ------------------------------------------------------------


def test_running_headers_and_page_numbers_are_removed() -> None:
    pages = []
    for n in range(1, 6):
        blocks = [
            block(line("Published as a conference paper at ICLR 2015", 150, 30)),
            paragraph(f"body of page {n}", 72, 100, 540),
            block(line(str(n), 300, 750)),
        ]
        if n == 1:
            blocks.insert(1, block(line("A Title Only Once", 150, 50, size=16)))
        pages.append(RawPage(n, W, H, blocks))
    remove_running_lines(pages)
    texts = [[li.text for b in p.blocks for li in b.lines] for p in pages]
    assert all("Published as a conference paper at ICLR 2015" not in t for t in texts)
    assert all(str(n) not in t for n, t in enumerate(texts, start=1))
    assert "A Title Only Once" in texts[0]
    assert all(f"body of page {n} line 0." in texts[n - 1] for n in range(1, 6))


def test_a_single_page_keeps_its_margin_text_except_the_page_number() -> None:
    page = RawPage(1, W, H, [block(line("Preprint. Under review.", 72, 30)), block(line("- 7 -", 300, 760))])
    remove_running_lines([page])
    assert [li.text for b in page.blocks for li in b.lines] == ["Preprint. Under review."]


# --- headings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size", "bold", "alone", "expected"),
    [
        ("3.1 Encoder and Decoder Stacks", 10, True, True, True),
        ("1 Introduction", 12, True, False, True),
        ("Abstract", 12, True, True, True),
        ("INTRODUCTION", 10, True, True, True),
        ("Related Work", 14, False, True, True),
        ("Figure 1: The Transformer - model architecture.", 10, True, True, False),
        ("Table 2 shows the results of all models on every benchmark we ran", 10, True, True, False),
        ("This is an ordinary sentence that happens to stand alone.", 10, False, True, False),
        ("Encoder: The encoder is composed of a stack", 10, False, False, False),
        ("42", 10, True, True, False),
        ("2.1 ADAM'S UPDATE RULE", 10, False, False, True),
        ("3 RESULTS ON CIFAR-10", 9, False, True, True),
        ("2 The Method", 10, False, True, False),
    ],
)
def test_heading_detection(text: str, size: float, bold: bool, alone: bool, expected: bool) -> None:
    lines = [line(text, 72, 100, size=size, bold=bold)]
    if not alone:
        lines.append(line("followed by body text in the same block", 72, 115))
    page = RawPage(3, W, H, [Block(lines)])
    mark_headings(page, body=10)
    assert page.blocks[0].heading is expected
    if expected and not alone:  # the heading is split off its paragraph
        assert [li.text for li in page.blocks[1].lines] == ["followed by body text in the same block"]


def test_page_text_offsets_point_at_headings_and_split_paragraphs_rejoin() -> None:
    page = RawPage(
        4,
        W,
        H,
        [
            Block([line("2 Method", 72, 80, size=12, bold=True)], heading=True),
            Block([line("We split each article into multiple, disjoint text", 72, 100)]),
            Block([line("blocks of 100 words as passages.", 320, 100)]),
            Block([line("2.1 Data", 72, 200, bold=True)], heading=True),
            Block([line("The data come from Wikipedia.", 72, 220)]),
        ],
    )
    text, headings = page_text(page)
    assert [h for _, h in headings] == ["2 Method", "2.1 Data"]
    assert all(text[offset : offset + len(h)] == h for offset, h in headings)
    assert "multiple, disjoint text blocks of 100 words as passages." in text


def test_bold_names_above_the_abstract_are_not_sections() -> None:
    page = RawPage(
        1,
        W,
        H,
        [
            Block([line("Ada Lovelace", 72, 100, bold=True)]),
            Block([line("Abstract", 72, 150, size=12, bold=True)]),
            Block([line("We study engines.", 72, 170)]),
        ],
    )
    mark_headings(page, body=10)
    unmark_front_matter(page)
    assert [b.heading for b in page.blocks] == [False, True, False]


def test_body_size_is_the_size_of_most_characters() -> None:
    pages = [RawPage(1, W, H, [paragraph("x" * 50, 72, 100, 540), block(line("Title", 72, 50, size=17))])]
    assert body_size(pages) == 10


# --- metadata from the PDF -----------------------------------------------------------------


def test_arxiv_stamp() -> None:
    stamp = parse_stamp("arXiv:1706.03762v5  [cs.CL]  6 Dec 2017")
    assert stamp is not None
    assert (stamp.arxiv_id, stamp.version, stamp.primary_category, stamp.date) == (
        "1706.03762",
        5,
        "cs.CL",
        dt.date(2017, 12, 6),
    )
    old = parse_stamp("arXiv:hep-th/9901001v2 [hep-th] 3 Jan 1999")
    assert old is not None and (old.arxiv_id, old.version) == ("hep-th/9901001", 2)
    assert parse_stamp("arXiv:9999.99999 [cs.CL] 1 Jan 2020") is None  # no such month: not an id
    assert parse_stamp("see arXiv for details") is None


def test_front_matter_title_authors_abstract() -> None:
    title = [
        line("Learning to Parse", 150, 90, 460, size=17),
        line("Hostile Documents", 170, 110, 440, size=17),
    ]
    names = line("Ada Lovelace1, Alan M. Turing2 and Grace Hopper", 120, 150, 500, size=11)
    names.marked = "Ada Lovelace|, Alan M. Turing| and Grace Hopper"
    page = RawPage(
        1,
        W,
        H,
        [
            Block(title),
            Block([names]),
            Block([line("University of Somewhere, Mountain View", 150, 165, size=9)]),
            Block([line("ada@example.org", 200, 178, size=9)]),
            Block([line("Abstract", 280, 220, size=12, bold=True)], heading=True),
            Block(
                [
                    line("We parse PDFs in a sandbox and keep", 100, 240),
                    line("the text a reader sees.", 100, 252),
                ]
            ),
            Block([line("1 Introduction", 72, 300, size=12, bold=True)], heading=True),
            Block([line("PDFs are hard.", 72, 320)]),
        ],
    )
    found_title, authors, abstract = front_matter(page, body=10)
    assert found_title == "Learning to Parse Hostile Documents"
    assert authors == ["Ada Lovelace", "Alan M. Turing", "Grace Hopper"]
    assert abstract == "We parse PDFs in a sandbox and keep the text a reader sees."


# --- limits ---------------------------------------------------------------------------------


def test_limits_come_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WOVEPAPER_PDF_MAX_PAGES", "12")
    monkeypatch.setenv("WOVEPAPER_PDF_MEMORY_MIB", "2048")
    monkeypatch.setenv("WOVEPAPER_PDF_TIMEOUT_SECONDS", "7.5")
    get_settings.cache_clear()
    limits = PdfLimits.from_settings(get_settings().parser)
    assert (limits.max_pages, limits.memory_bytes, limits.timeout_seconds) == (12, 2048 * 2**20, 7.5)


def test_limits_refuse_less_than_a_gibibyte_or_non_positive_values() -> None:
    with pytest.raises(ValueError, match="1 GiB"):
        PdfLimits(memory_bytes=512 * 2**20)
    with pytest.raises(ValueError, match="positive"):
        PdfLimits(max_pages=0)


# --- the child's answer is untrusted ---------------------------------------------------------


def wire(**changes: object) -> dict:
    reply: dict = {
        "pages": [{"number": 1, "text": "Body text.", "headings": [[0, "Body text."]]}],
        "hidden": [{"page": 1, "reason": "white", "text": "hidden"}],
        "metadata": {"arxiv_id": "1706.03762", "version": 5, "date": "2017-12-06", "authors": ["A B"]},
        "page_count": 1,
    }
    reply.update(changes)
    return reply


def test_a_well_formed_answer_is_rebuilt_and_scrubbed_again() -> None:
    reply = wire(pages=[{"number": 1, "text": "Body\x00 text\ud800.", "headings": []}])
    parsed = parsed_from_wire(reply, sha256="ab", parser="pymupdf", parser_version="v")
    assert parsed.pages[0].text == "Body text."
    assert parsed.metadata is not None and parsed.metadata.date == dt.date(2017, 12, 6)
    assert parsed.hidden_text == ["hidden"] and parsed.page_count == 1


@pytest.mark.parametrize(
    "changes",
    [
        {"pages": [{"number": "1", "text": "x", "headings": []}]},
        {"pages": [{"number": 1, "text": 7, "headings": []}]},
        {"hidden": [{"page": 1, "reason": "because", "text": "x"}]},
        {"metadata": {"version": -1}},
        {"metadata": {"date": "yesterday"}},
        {"page_count": True},
    ],
)
def test_a_malformed_answer_is_refused(changes: dict) -> None:
    with pytest.raises((TypeError, ValueError, KeyError)):
        parsed_from_wire(wire(**changes), sha256="ab", parser="pymupdf", parser_version="v")


def test_a_wrapped_heading_keeps_its_second_line_and_figure_labels_are_not_sections() -> None:
    wrapped = Block(
        [
            line("3.4 Batch Normalization regularizes the", 72, 100, bold=True),
            line("model", 72, 112, bold=True),
            line("When training with Batch Normalization, a training example is seen", 72, 130),
        ]
    )
    label = Block([line("Input-Input Layer5", 300, 300, size=12, bold=True)])
    figure_text = Block([line("0.1 0.2 0.3", 300, 320, size=7)])
    footnote = Block([line("1 Facebook AI Research, Paris", 72, 700, size=12)])
    page = RawPage(5, W, H, [wrapped, label, figure_text, footnote])
    mark_headings(page, body=10)
    headings = [" ".join(li.text for li in b.lines) for b in page.blocks if b.heading]
    assert headings == ["3.4 Batch Normalization regularizes the model"]


def test_importing_the_package_does_not_load_mupdf() -> None:
    """The web process imports ``ingest.pdf``; MuPDF may only ever run in a parser child."""
    code = (
        "import sys, ingest.pdf, ingest.chunking; sys.exit('pymupdf' in sys.modules or 'fitz' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
