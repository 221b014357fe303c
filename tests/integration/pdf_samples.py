"""Hand-built PDFs for the parser tests: hostile files written byte by byte (bombs, broken
structure) and small real documents drawn with PyMuPDF (hidden text, columns, page numbers)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

import pymupdf


def raw_pdf(objects: Sequence[bytes], *, root: int = 1, xref: bool = True) -> bytes:
    """A PDF file from object bodies (object n is ``objects[n - 1]``), with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    start = len(out)
    if xref:
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, start)
    return bytes(out)


def stream(data: bytes, extra: bytes = b"", *, flate: bool = False) -> bytes:
    filters = b" /Filter /FlateDecode" if flate else b""
    return b"<< /Length %d%s %s>>\nstream\n" % (len(data), filters, extra) + data + b"\nendstream"


def one_page(content: bytes, *, flate: bool = False, resources: bytes = b"") -> bytes:
    """Catalog, one page with Helvetica as /F1, and the given content stream."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> " + resources + b">> >>",
            stream(content, flate=flate),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def zeros_flate(mib: int, chunk_mib: int = 16) -> bytes:
    """A valid zlib stream that inflates to ``mib`` MiB of zero bytes (~1,000:1), built in well
    under a second: identical full-flushed deflate blocks repeated, with the true Adler-32."""
    chunk = bytes(chunk_mib << 20)
    packer = zlib.compressobj(9)
    first = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    repeat = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    count = max(1, mib // chunk_mib)
    adler = 1
    for _ in range(count):
        adler = zlib.adler32(chunk, adler)
    return first + repeat * (count - 1) + b"\x03\x00" + struct.pack(">I", adler)


def font_bomb(mib: int) -> bytes:
    """A TrueType font program that inflates to ``mib`` MiB: MuPDF loads fonts whole."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            stream(b"BT /F1 12 Tf 72 700 Td (Hello world) Tj ET"),
            b"<< /Type /Font /Subtype /TrueType /BaseFont /Bomb /FirstChar 32 /LastChar 126 "
            b"/FontDescriptor 6 0 R >>",
            b"<< /Type /FontDescriptor /FontName /Bomb /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0 "
            b"/Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 7 0 R >>",
            stream(zeros_flate(mib), flate=True),
        ]
    )


def text_pdf(pages: Sequence[str], *, fontsize: float = 11) -> bytes:
    """Plain visible text, one string per page, set with PyMuPDF."""
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 720), text, fontsize=fontsize)
    return doc.tobytes()
