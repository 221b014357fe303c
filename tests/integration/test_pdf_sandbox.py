"""The sandbox against hostile and broken PDFs, real child processes throughout: every bad file
gets a reason, the parent survives, the next document parses, and nothing leaks."""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pymupdf
import pytest

from ingest.chunking import chunk_paper
from ingest.pdf import PdfLimits, PdfParserPool, PdfRejected, default_pool, parse_pdf
from settings import ChunkSettings
from tests.integration.pdf_samples import font_bomb, one_page, raw_pdf, text_pdf, zeros_flate

HELLO = one_page(b"BT /F1 12 Tf 72 700 Td (Hello from a valid page.) Tj ET")


def parser_children() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "ingest.pdf.child" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


@pytest.fixture(autouse=True)
def _no_other_children() -> None:
    """Idle children of the shared default pool (other tests use ``parse_pdf``) would be counted."""
    default_pool.close()


@pytest.fixture
def pool() -> Iterator[PdfParserPool]:
    pool = PdfParserPool(max_idle=2)
    yield pool
    pool.close()


def assert_next_document_parses(pool: PdfParserPool) -> None:
    assert pool.parse(HELLO, PdfLimits()).pages[0].text == "Hello from a valid page."


def page_count_bomb() -> bytes:
    """Nine levels of page-tree nodes, each listing the next ten times: it claims 10^9 pages."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(9, 0, -1):
        kid = b"%d 0 R" % (len(objects) + 2)
        objects.append(b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join([kid] * 10), 10**level))
    objects.append(b"<< /Type /Page /MediaBox [0 0 612 792] >>")
    return raw_pdf(objects)


def encrypted() -> bytes:
    doc = pymupdf.open(stream=HELLO)
    return doc.tobytes(encryption=pymupdf.mupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")


MALFORMED = {
    "empty": (lambda: b"", "empty"),
    "not a pdf": (lambda: b"<html><body>a web page</body></html>", "not a PDF"),
    "garbage after a header": (lambda: b"%PDF-1.7\n" + os.urandom(20_000), "not a readable PDF"),
    "truncated": (lambda: HELLO[: len(HELLO) // 2], "no text could be extracted"),
    "encrypted": (encrypted, "encrypted"),
    "page-count bomb": (page_count_bomb, "page tree"),
    "deeply nested arrays": (
        lambda: one_page(
            b"BT /F1 12 Tf 72 700 Td (x) Tj ET", resources=b"/X " + b"[" * 100_000 + b"]" * 100_000
        ),
        "nested too deeply",
    ),
    "deeply nested dictionaries": (
        lambda: one_page(
            b"BT /F1 12 Tf 72 700 Td (x) Tj ET",
            resources=b"/X " + b"<< /A " * 50_000 + b"1" + b" >>" * 50_000,
        ),
        "nested too deeply",
    ),
    "decompression bomb": (lambda: font_bomb(256), "decompression bomb"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_pdfs_are_rejected_with_a_reason(name: str, pool: PdfParserPool) -> None:
    make, reason = MALFORMED[name]
    with pytest.raises(PdfRejected) as rejected:
        pool.parse(make(), PdfLimits(timeout_seconds=30))
    assert reason in rejected.value.reason
    assert_next_document_parses(pool)


def test_broken_xref_is_repaired_and_parsed(pool: PdfParserPool) -> None:
    broken = HELLO.replace(b"xref\n0 6", b"xref\n0 9").replace(b"startxref\n", b"startxref\n1")
    assert pool.parse(broken, PdfLimits()).pages[0].text == "Hello from a valid page."
    no_table = one_page(b"BT /F1 12 Tf 72 700 Td (Still readable.) Tj ET").replace(b"xref", b"junk")
    assert pool.parse(no_table, PdfLimits()).pages[0].text == "Still readable."


@functools.cache
def slow_pdf() -> bytes:
    """4 GiB of whitespace to lex in one content stream: tens of seconds of MuPDF work on any machine."""
    return one_page(zeros_flate(4096), flate=True)


def test_content_stream_bomb_is_stopped_by_the_wall_clock(pool: PdfParserPool) -> None:
    bomb = slow_pdf()
    started = time.monotonic()
    with pytest.raises(PdfRejected, match=r"took longer than the 2 s time limit"):
        pool.parse(bomb, PdfLimits(timeout_seconds=2))
    assert time.monotonic() - started < 10
    assert_next_document_parses(pool)


def test_limits_on_bytes_pages_and_characters_are_explicit_failures(
    pool: PdfParserPool, tmp_path: Path
) -> None:
    five_pages = text_pdf([f"Page {n} says hello." for n in range(1, 6)])
    with pytest.raises(PdfRejected, match=r"has 5 pages; the limit is 4"):
        pool.parse(five_pages, PdfLimits(max_pages=4))
    with pytest.raises(PdfRejected, match=r"bytes; the limit is 1,000"):
        pool.parse(five_pages, PdfLimits(max_bytes=1000))
    path = tmp_path / "five.pdf"
    path.write_bytes(five_pages)
    with pytest.raises(PdfRejected, match=r"bytes; the limit is 1,000"):
        pool.parse(path, PdfLimits(max_bytes=1000))
    dense = text_pdf(["word " * 3000], fontsize=2)
    with pytest.raises(
        PdfRejected, match=r"page 1 has [\d,]+ characters of text; the limit is 5,000 per page"
    ):
        pool.parse(dense, PdfLimits(max_chars_per_page=5000))
    with pytest.raises(PdfRejected, match="cannot be read"):
        pool.parse(tmp_path / "missing.pdf", PdfLimits())
    parsed = pool.parse(path, PdfLimits(max_pages=5))
    assert [p.text for p in parsed.pages] == [f"Page {n} says hello." for n in range(1, 6)]


def test_a_hung_parse_is_killed_at_the_timeout_and_leaves_no_process(pool: PdfParserPool) -> None:
    with pytest.raises(PdfRejected, match=r"took longer than the 0\.2 s time limit"):
        pool.parse(slow_pdf(), PdfLimits(timeout_seconds=0.2))
    assert parser_children() == []  # killed and reaped, not a zombie
    assert_next_document_parses(pool)


def test_a_crashed_child_is_reported_and_replaced(pool: PdfParserPool) -> None:
    assert_next_document_parses(pool)  # one idle child now
    (child,) = parser_children()
    outcome: list[BaseException] = []

    def parse_big() -> None:
        try:
            pool.parse(slow_pdf(), PdfLimits())
        except PdfRejected as error:
            outcome.append(error)

    worker = threading.Thread(target=parse_big)
    worker.start()
    time.sleep(0.5)  # the child is busy lexing the 4 GiB stream
    os.kill(child.pid, signal.SIGKILL)
    worker.join(timeout=30)
    assert len(outcome) == 1 and "crashed" in str(outcome[0]) and "SIGKILL" in str(outcome[0])
    assert_next_document_parses(pool)


def test_children_run_under_an_address_space_limit(pool: PdfParserPool) -> None:
    pool.parse(HELLO, PdfLimits(memory_bytes=1100 * 2**20))
    (child,) = parser_children()
    limits = Path(f"/proc/{child.pid}/limits").read_text()
    address_space = next(line for line in limits.splitlines() if line.startswith("Max address space"))
    assert address_space.split()[3:5] == [str(1100 * 2**20)] * 2
    core = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
    assert core.split()[4:6] == ["0", "0"]
    # The CPU-time backstop for an orphaned child: twice the wall-clock limit plus 5 s, set per document.
    cpu = next(line for line in limits.splitlines() if line.startswith("Max cpu time"))
    assert 2 * 60 + 5 <= int(cpu.split()[3]) <= 2 * 60 + 5 + 30
    # A different memory limit gets a child of its own.
    pool.parse(HELLO, PdfLimits(memory_bytes=1200 * 2**20))
    assert {c.pid for c in parser_children()} != {child.pid}


def test_threads_share_the_pool_without_crosstalk_or_leaks() -> None:
    before = len(os.listdir("/proc/self/fd"))
    pool = PdfParserPool(max_idle=2)
    documents = {n: text_pdf([f"Document {n} has its own text."]) for n in range(8)}
    results: dict[int, str] = {}

    def parse(n: int) -> None:
        results[n] = pool.parse(documents[n], PdfLimits()).pages[0].text

    threads = [threading.Thread(target=parse, args=(n,)) for n in documents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == {n: f"Document {n} has its own text." for n in documents}
    assert pool.idle_count() <= 2
    pool.close()
    assert parser_children() == []
    assert len(os.listdir("/proc/self/fd")) <= before  # every pipe closed again


def test_idle_children_are_retired() -> None:
    pool = PdfParserPool(idle_seconds=0.5)
    pool.parse(HELLO, PdfLimits())
    assert pool.idle_count() == 1 and len(parser_children()) == 1
    deadline = time.monotonic() + 10
    while parser_children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pool.idle_count() == 0 and parser_children() == []
    pool.close()


def test_every_edge_pdf_parses_or_is_rejected_with_a_reason(shared_data: Path) -> None:
    settings = ChunkSettings()
    outcomes = {}
    for path in sorted((shared_data / "pdfs" / "edge").glob("*.pdf")):
        try:
            parsed = parse_pdf(path, PdfLimits())
        except PdfRejected as rejected:
            outcomes[path.name] = rejected.reason
            continue
        assert parsed.page_count == len(parsed.pages) >= 1
        chunks = chunk_paper(
            arxiv_id="0000.00000", version=1, title="", abstract="", parsed=parsed, settings=settings
        )
        assert len(chunks) > 1
        # Nothing visible is lost: ours vs PyMuPDF's plain text, non-space characters (ours lacks
        # page numbers and running headers, and has ligatures expanded).
        ours = sum(not c.isspace() for p in parsed.pages for c in p.text)
        with pymupdf.open(path) as doc:
            plain = sum(not c.isspace() for page in doc for c in page.get_text())
        assert 0.95 < ours / plain < 1.05, path.name
        outcomes[path.name] = "parsed"
    assert len(outcomes) == 14
    # All 14 are real, valid PDFs: every one must parse.
    assert set(outcomes.values()) == {"parsed"}, outcomes
    assert parse_pdf(HELLO, PdfLimits()).pages[0].text == "Hello from a valid page."
