"""Chunking: token bounds, overlap, page provenance, sections, ids, offline tokenizer."""

from __future__ import annotations

import itertools
import os
import re

import pytest
from pydantic import ValidationError

from ingest.chunking import _sentences, chunk_paper
from ingest.pdf import ParsedPdf, PdfMetadata, PdfPage
from retrieval.tokens import count_tokens, encoding
from settings import ChunkSettings, get_settings

SETTINGS = ChunkSettings(chunk_tokens=60, chunk_overlap_tokens=20)  # sentences here are 15 tokens


def sentences(page: int, count: int) -> list[str]:
    return [
        f"Sentence {i} of page {page} says something specific about topic {page * 100 + i}."
        for i in range(count)
    ]


def parsed(pages: list[tuple[str, list[tuple[int, str]]]], metadata: PdfMetadata | None = None) -> ParsedPdf:
    return ParsedPdf(
        pages=[
            PdfPage(number=i, text=text, headings=headings) for i, (text, headings) in enumerate(pages, 1)
        ],
        hidden=[],
        metadata=metadata,
        parser="pymupdf",
        parser_version="9.9+wp1",
        page_count=len(pages),
        sha256="0" * 64,
    )


def three_pages() -> ParsedPdf:
    p1 = "1 Introduction\n\n" + " ".join(sentences(1, 8))
    p2 = " ".join(sentences(2, 5)) + "\n\n2 Method\n\n" + " ".join(sentences(2, 12)[5:])
    p3 = " ".join(sentences(3, 9))
    return parsed(
        [
            (p1, [(0, "1 Introduction")]),
            (p2, [(p2.index("2 Method"), "2 Method")]),
            (p3, []),  # no heading: the section carries over from page 2
        ]
    )


def chunks_of(doc: ParsedPdf, settings: ChunkSettings = SETTINGS) -> list:
    return chunk_paper(
        arxiv_id="2401.01234",
        version=2,
        title="A Title",
        abstract="An abstract.",
        parsed=doc,
        settings=settings,
    )


def test_chunk_zero_is_title_and_abstract_and_ids_are_deterministic() -> None:
    chunks = chunks_of(three_pages())
    assert chunks[0].text == "A Title\n\nAn abstract."
    assert chunks[0].kind == "abstract" and chunks[0].page_start is None
    assert [c.id for c in chunks] == [f"2401.01234v2#{n}" for n in range(len(chunks))]
    assert chunks == chunks_of(three_pages())  # same input, same chunks
    unversioned = chunk_paper(
        arxiv_id="2401.01234", version=None, title="T", abstract="", parsed=None, settings=SETTINGS
    )
    assert [c.id for c in unversioned] == ["2401.01234v0#0"]


def test_every_chunk_fits_the_token_budget_and_no_sentence_is_lost() -> None:
    doc = three_pages()
    chunks = chunks_of(doc)[1:]
    assert len(chunks) > 5
    assert all(count_tokens(c.text) <= SETTINGS.chunk_tokens for c in chunks)
    body = " ".join(c.text for c in chunks)
    for page in doc.pages:
        for sentence in re.split(r"(?<=\.) |\n\n", page.text):
            assert sentence in body


def test_consecutive_chunks_overlap_by_whole_sentences() -> None:
    chunks = chunks_of(three_pages())[1:]
    for before, after in itertools.pairwise(chunks):
        *_, second_last, last_sentence = re.split(r"(?<=\.)\s|\n", before.text)
        # One 15-token sentence fits the 20-token overlap, two do not; a heading never ends a chunk.
        assert after.text.startswith(last_sentence) and last_sentence != "2 Method"
        assert not after.text.startswith(second_last)


def test_pages_and_sections_follow_the_text() -> None:
    chunks = chunks_of(three_pages())[1:]
    for chunk in chunks:
        pages = {int(p) for p in re.findall(r"of page (\d)", chunk.text)}
        assert (chunk.page_start, chunk.page_end) == (min(pages), max(pages))
        assert chunk.parser == "pymupdf" and chunk.parser_version == "9.9+wp1"
    assert chunks[0].section == "1 Introduction"
    assert any(c.page_start == 1 and c.page_end == 2 for c in chunks)  # a chunk across a page break
    method = [c for c in chunks if "2 Method" in c.text]
    assert method and all(c.section in ("1 Introduction", "2 Method") for c in method)
    assert chunks[-1].page_start == 3 and chunks[-1].section == "2 Method"


def test_a_sentence_longer_than_a_chunk_is_cut_by_tokens() -> None:
    table = " ".join(f"cell{i} 0.{i:03d}" for i in range(200))  # no full stop anywhere
    chunks = chunks_of(parsed([(table, [])]))[1:]
    assert len(chunks) >= 3
    assert all(count_tokens(c.text) <= SETTINGS.chunk_tokens for c in chunks)
    assert "cell0 " in chunks[0].text and "cell199 0.199" in chunks[-1].text


def test_nul_and_lone_surrogates_never_reach_a_chunk() -> None:
    doc = parsed([("Clean start. A NUL\x00 here and a surrogate \ud800 there. End.", [])])
    chunks = chunk_paper(
        arxiv_id="2401.01234",
        version=1,
        title="Ti\x00tle",
        abstract="Ab\udc00stract",
        parsed=doc,
        settings=SETTINGS,
    )
    for chunk in chunks:
        assert "\x00" not in chunk.text and not re.search("[\ud800-\udfff]", chunk.text)
        chunk.text.encode("utf-8")
    assert chunks[0].text == "Title\n\nAbstract"


def test_title_and_abstract_fall_back_to_the_pdf_front_matter() -> None:
    meta = PdfMetadata(title="From The PDF", abstract="The PDF's abstract.")
    chunks = chunk_paper(
        arxiv_id="2401.01234",
        version=1,
        title="",
        abstract="",
        parsed=parsed([("Body.", [])], meta),
        settings=SETTINGS,
    )
    assert chunks[0].text == "From The PDF\n\nThe PDF's abstract."
    given = chunk_paper(
        arxiv_id="2401.01234",
        version=1,
        title="Given",
        abstract="",
        parsed=parsed([("Body.", [])], meta),
        settings=SETTINGS,
    )
    assert given[0].text.startswith("Given\n\n")


def test_settings_size_and_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WOVEPAPER_CHUNK_TOKENS", "40")
    monkeypatch.setenv("WOVEPAPER_CHUNK_OVERLAP_TOKENS", "0")
    get_settings.cache_clear()
    settings = get_settings().chunks
    chunks = chunks_of(three_pages(), settings)[1:]
    assert all(count_tokens(c.text) <= 40 for c in chunks)
    texts = [c.text for c in chunks]
    assert all(not b.startswith(a.split(". ")[-1]) for a, b in itertools.pairwise(texts))
    with pytest.raises(ValidationError, match="less than half"):
        ChunkSettings(chunk_tokens=40, chunk_overlap_tokens=20)


def test_defaults_are_documented_values() -> None:
    defaults = ChunkSettings()
    assert (defaults.chunk_tokens, defaults.chunk_overlap_tokens) == (200, 30)


def test_tokenizer_loads_offline_from_the_bundled_file() -> None:
    enc = encoding()
    assert enc.name == "cl100k_base"
    cache = os.environ["TIKTOKEN_CACHE_DIR"]
    assert cache.endswith("tiktoken_cache") and os.listdir(cache)
    assert count_tokens("Attention is all you need") == 5


def test_sentences_keep_their_closing_quotes_and_abbreviations_do_not_split() -> None:
    text = 'He said "stop." Then he left (see Fig. 2 and Vaswani et al. 2017). It works! Why? Because.'
    assert _sentences(text) == [
        'He said "stop."',
        "Then he left (see Fig. 2 and Vaswani et al. 2017).",
        "It works!",
        "Why?",
        "Because.",
    ]
