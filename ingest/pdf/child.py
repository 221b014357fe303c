"""The sandboxed parser process: ``python -m ingest.pdf.child <address-space limit in bytes>``.

It limits its own address space (``RLIMIT_AS``) and core dumps before MuPDF is loaded, announces
itself ready, then answers requests until its stdin closes (so it dies with its parent).
Wire format, both directions: an 8-byte big-endian length, then that many bytes. A request is a
JSON header followed by a second frame with the PDF bytes; a reply is one JSON frame, either
``{"ok": true, "result": …}`` or ``{"ok": false, "reason": "…"}``, with ``"retire": true`` when
this process should not be reused (an unexpected error, or a heap grown past 512 MiB). Any
failure, MuPDF's or ours, becomes a reason; a crash or a hang is the parent's to report.
"""

from __future__ import annotations

import json
import math
import os
import resource
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

FRAME = struct.Struct(">Q")


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return FRAME.pack(len(body)) + body


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(stream: BinaryIO) -> bytes | None:
    head = _read_exact(stream, FRAME.size)
    if head is None:
        return None
    return _read_exact(stream, FRAME.unpack(head)[0])


RETIRE_RESIDENT_BYTES = 512 * 2**20


def _resident_bytes() -> int:
    return int(Path("/proc/self/statm").read_bytes().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _failure(error: BaseException, memory_bytes: int) -> str:
    text = str(error)
    if isinstance(error, MemoryError) or "malloc" in text or "out of memory" in text.lower():
        return f"parsing needs more than the {memory_bytes // 2**20} MiB memory limit"
    return f"MuPDF could not parse it ({type(error).__name__}: {text[:300]})"


def main(argv: list[str]) -> int:
    memory_bytes = int(argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print from C or Python must never corrupt the reply stream
    # PyMuPDF 2.0 imports its layout models (onnxruntime, ~1 s) and pymupdf4llm when they are
    # installed; this parser uses neither, so the child starts in ~0.2 s instead.
    sys.modules["pymupdf.layout"] = None  # type: ignore[assignment]
    sys.modules["pymupdf4llm"] = None  # type: ignore[assignment]
    from ingest.pdf.document import PdfRejected
    from ingest.pdf.extract import page_view, parse_document, quiet_mupdf

    replies.write(encode({"ready": True, "pymupdf": quiet_mupdf()}))
    replies.flush()
    requests = sys.stdin.buffer
    while True:
        header = _read_frame(requests)
        data = _read_frame(requests) if header is not None else None
        if header is None or data is None:
            return 0
        request = json.loads(header)
        # A backstop for a child whose parent died mid-document (nobody left to enforce the
        # wall-clock limit): the kernel stops it after this much more CPU time.
        used = resource.getrusage(resource.RUSAGE_SELF)
        cpu_budget = math.ceil(used.ru_utime + used.ru_stime + 2 * request["timeout_seconds"] + 5)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_budget, resource.RLIM_INFINITY))
        reply: dict[str, Any]
        try:
            if "page" in request:  # the page reader: one page drawn, the quote located
                result = page_view(
                    data,
                    request["page"],
                    request["zoom"],
                    request["quote"],
                    request["max_pages"],
                    draw=request.get("draw", True),
                )
            else:
                result = parse_document(
                    data,
                    max_pages=request["max_pages"],
                    max_chars_per_page=request["max_chars_per_page"],
                )
            reply = {"ok": True, "result": result}
        except PdfRejected as rejected:  # our own checks: MuPDF is in a known state
            reply = {"ok": False, "reason": rejected.reason}
        except Exception as error:  # the child exists to turn any failure into a reason
            reply = {"ok": False, "reason": _failure(error, memory_bytes), "retire": True}
        del data
        if _resident_bytes() > RETIRE_RESIDENT_BYTES:
            reply["retire"] = True  # a fresh child beats a heap grown by one huge document
        replies.write(encode(reply))
        replies.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
