"""Run the parser in child processes: MuPDF can hang, exhaust memory or crash on hostile PDFs and
is not thread-safe, so it never runs in the caller's process.

Each child (``python -m ingest.pdf.child``, started with ``subprocess``, never a bare fork) limits
its own address space and parses one document at a time; the parent enforces the wall-clock
timeout and kills the child when it passes. Children are reused for the next document (starting
one costs 0.3-1 s) but retired after a crash, a timeout or an unexpected error, when their heap
grew past 512 MiB, after ``max_uses`` documents, or after ``idle_seconds`` unused. A rejection by
our own checks (encrypted, over a limit, no text) keeps the child. Safe to call from many
threads: each call has a child to itself; the answer is validated before it is trusted.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from catalog.text import scrub
from ingest.pdf.child import FRAME
from ingest.pdf.document import ParsedPdf, PdfLimits, PdfRejected, parsed_from_wire

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the directory that holds ``ingest/``
STARTUP_SECONDS = 60.0  # importing MuPDF on a busy machine; not part of a document's timeout


class _Timeout(Exception):
    pass


class _Died(Exception):
    pass


class _Child:
    """One parser process and its two pipes."""

    def __init__(self, memory_bytes: int) -> None:
        self.memory_bytes = memory_bytes
        self.uses = 0
        self.idle_since = time.monotonic()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(  # noqa: S603 (our own interpreter and module, fixed arguments)
            [sys.executable, "-m", "ingest.pdf.child", str(memory_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=PACKAGE_ROOT,
            env=env,
            start_new_session=True,  # a terminal's Ctrl-C goes to the parent, which cleans up
        )
        try:
            self._receive(time.monotonic() + STARTUP_SECONDS)
        except _Timeout:
            self.kill()
            raise PdfRejected("the PDF parser process did not start in time") from None
        except _Died:
            reason = self._exit_reason()
            self.kill()
            raise PdfRejected(f"the PDF parser process did not start ({reason})") from None

    def parse(self, data: bytes, limits: PdfLimits, page: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one document, wait for the reply; raises PdfRejected (the child is then dead).
        With ``page`` (number, zoom, quote) the child draws that page instead of parsing."""
        header = json.dumps(
            {
                "max_pages": limits.max_pages,
                "max_chars_per_page": limits.max_chars_per_page,
                "timeout_seconds": limits.timeout_seconds,
                **(page or {}),
            }
        )
        self.uses += 1
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(FRAME.pack(len(header)) + header.encode())
            self.proc.stdin.write(FRAME.pack(len(data)))
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return self._receive(time.monotonic() + limits.timeout_seconds)
        except _Timeout:
            self.kill()
            raise PdfRejected(
                f"parsing took longer than the {limits.timeout_seconds:g} s time limit"
            ) from None
        except (_Died, OSError):  # OSError: a broken pipe while sending, the child is gone
            reason = self._exit_reason()
            self.kill()
            raise PdfRejected(f"the PDF parser crashed on this file ({reason})") from None

    def _receive(self, deadline: float) -> dict[str, Any]:
        head = self._read(FRAME.size, deadline)
        message: dict[str, Any] = json.loads(self._read(FRAME.unpack(head)[0], deadline))
        return message

    def _read(self, size: int, deadline: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        chunks: list[bytes] = []
        while size:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(remaining * 1000):
                raise _Timeout
            chunk = os.read(fd, min(size, 1 << 20))
            if not chunk:
                raise _Died
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def _exit_reason(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "it stopped answering"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """Kill and reap: no zombie, no open pipe left behind."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):  # a broken pipe has nothing left to flush
                    pipe.close()

    def close(self) -> None:
        """Ask politely (stdin EOF ends the child's loop), then make sure."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        self.kill()


class PdfParserPool:
    """Idle parser children waiting for the next document, keyed by their memory limit."""

    def __init__(self, *, max_idle: int = 2, max_uses: int = 100, idle_seconds: float = 30.0) -> None:
        self.max_idle = max_idle
        self.max_uses = max_uses
        self.idle_seconds = idle_seconds
        self._idle: list[_Child] = []
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._reaper: threading.Thread | None = None
        self._pid = os.getpid()

    def parse(self, source: Path | bytes, limits: PdfLimits) -> ParsedPdf:
        data = _checked(source, limits)
        sha256 = hashlib.sha256(data).hexdigest()
        child, reply = self._send(data, limits)
        parsed: ParsedPdf | None = None
        try:
            if reply["ok"]:
                parsed = parsed_from_wire(
                    reply["result"], sha256=sha256, parser=PARSER_NAME, parser_version=PARSER_VERSION
                )
            else:
                reason = scrub(str(reply["reason"]))[:500]
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            child.kill()
            raise PdfRejected(f"the parser process sent a malformed answer ({error})") from error
        self._release(child, reply)
        if parsed is None:
            raise PdfRejected(reason)
        return parsed

    def page(
        self,
        source: Path | bytes,
        limits: PdfLimits,
        number: int,
        zoom: float,
        quote: str,
        *,
        draw: bool = True,
    ) -> dict[str, Any]:
        """Page ``number`` read in a child (see ``extract.page_view``: its size, text and the
        quote's rectangles, and with ``draw`` the PNG); raises PdfRejected."""
        request = {"page": number, "zoom": zoom, "quote": quote, "draw": draw}
        child, reply = self._send(_checked(source, limits), limits, request)
        self._release(child, reply)
        if not reply.get("ok"):
            raise PdfRejected(scrub(str(reply.get("reason")))[:500])
        result: dict[str, Any] = reply["result"]
        return result

    def _send(
        self, data: bytes, limits: PdfLimits, page: dict[str, Any] | None = None
    ) -> tuple[_Child, dict[str, Any]]:
        """One request to a pooled child: the child and its reply (on PdfRejected it is dead)."""
        child = self._checkout(limits.memory_bytes)
        try:
            return child, child.parse(data, limits, page)
        except BaseException:  # e.g. KeyboardInterrupt mid-read: the child's state is unknown
            child.kill()
            raise

    def _release(self, child: _Child, reply: dict[str, Any]) -> None:
        if reply.get("retire"):
            child.close()
        else:
            self._checkin(child)

    def _checkout(self, memory_bytes: int) -> _Child:
        with self._lock:
            if self._pid != os.getpid():  # forked: those children belong to the parent process
                self._idle, self._reaper, self._pid = [], None, os.getpid()
            while self._idle:
                child = self._idle.pop()
                if child.memory_bytes == memory_bytes and child.alive():
                    return child
                child.close()
        return _Child(memory_bytes)

    def _checkin(self, child: _Child) -> None:
        if child.uses >= self.max_uses:
            child.close()
            return
        child.idle_since = time.monotonic()
        with self._lock:
            if self._pid != os.getpid() or len(self._idle) >= self.max_idle:
                surplus: _Child | None = child
            else:
                surplus = None
                self._idle.append(child)
                if self._reaper is None:
                    self._reaper = threading.Thread(target=self._reap, name="pdf-parser-reaper", daemon=True)
                    self._reaper.start()
        if surplus is not None:
            surplus.close()

    def _reap(self) -> None:
        """Close children idle longer than ``idle_seconds``; the thread ends when none are left."""
        while True:
            with self._lock:
                now = time.monotonic()
                stale = [c for c in self._idle if now - c.idle_since >= self.idle_seconds]
                self._idle = [c for c in self._idle if c not in stale]
                if not self._idle and not stale:
                    self._reaper = None
                    return
                if not stale:
                    oldest = min(c.idle_since for c in self._idle)
                    self._wake.wait(timeout=max(0.05, oldest + self.idle_seconds - now))
            for child in stale:
                child.close()

    def close(self) -> None:
        """Stop every idle child (busy ones are retired when their call returns)."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._wake.notify_all()
        if self._pid == os.getpid():
            for child in idle:
                child.close()

    def idle_count(self) -> int:
        with self._lock:
            return len(self._idle)


def _checked(source: Path | bytes, limits: PdfLimits) -> bytes:
    """The document's bytes, refused before a child is asked when they cannot be a PDF."""
    data = _read_source(source, limits)
    if not data:
        raise PdfRejected("the file is empty (0 bytes)")
    if b"%PDF-" not in data[:1024]:
        raise PdfRejected("not a PDF (no %PDF- header in the first 1024 bytes)")
    return data


def _read_source(source: Path | bytes, limits: PdfLimits) -> bytes:
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
    else:
        try:
            size = source.stat().st_size
            if size > limits.max_bytes:
                raise PdfRejected(f"the file has {size:,} bytes; the limit is {limits.max_bytes:,}")
            data = source.read_bytes()
        except OSError as error:
            raise PdfRejected(f"the file cannot be read ({error.strerror or error})") from error
    if len(data) > limits.max_bytes:
        raise PdfRejected(f"the file has {len(data):,} bytes; the limit is {limits.max_bytes:,}")
    return data


# The parser's identity, part of the index's name: a new PyMuPDF, or a change to our extraction or
# to how ``ingest.chunking`` cuts the text (bump ALGORITHM for either), builds a new index rather
# than mixing chunks made two different ways.
PARSER_NAME = "pymupdf"
ALGORITHM = 4


def _pymupdf_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pymupdf")
    except PackageNotFoundError:
        return "unknown"


PARSER_VERSION = f"{_pymupdf_version()}+wp{ALGORITHM}"

default_pool = PdfParserPool()
atexit.register(default_pool.close)


def parse_pdf(source: Path | bytes, limits: PdfLimits) -> ParsedPdf:
    """Parse a PDF (a path or its bytes) in a sandboxed child; raise :class:`PdfRejected` with the
    reason when it is not a PDF, is over a limit, times out, runs out of memory or crashes MuPDF."""
    return default_pool.parse(source, limits)
