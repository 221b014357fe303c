"""The page reader's drawing: a page of a stored PDF as a PNG, its text and where a quote stands on
it, computed by PyMuPDF in the PDF parser's sandboxed children (never in the web process).

Rendered PNGs are kept in an in-process LRU bounded by bytes, keyed by (SHA-256, page, zoom): a
PNG is public, deterministic and named by its content, so browsers and proxies cache it too (the
route sends ``Cache-Control: public`` and an ETag), and a lost entry costs one render (~tens of ms,
see docs/chat-figures.md). A disk cache would survive restarts and be shared by a host's
processes, but needs its own eviction and writer; nothing here needs it yet. Page views (size,
text, rectangles) are small and kept in a second LRU by (SHA-256, page, quote).
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from indexing.contract import PageUnavailable, PageView
from ingest.pdf import PdfLimits, PdfParserPool, PdfRejected

ZOOM = 2.0  # 144 dpi: an A4 page is 1190 × 1684 px, sharp on a phone's or a laptop's screen
IMAGE_CACHE_BYTES = 64 * 2**20  # ~200-400 pages at 150-300 KB each
VIEW_CACHE_ENTRIES = 512


class _Lru:
    """A thread-safe LRU bounded by entries and by the summed ``size`` of its values."""

    def __init__(self, *, entries: int, max_bytes: int | None = None) -> None:
        self.entries = entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: Any, size: int = 0) -> None:
        if self.max_bytes is not None and size > self.max_bytes:
            return
        with self._lock:
            if (old := self._items.pop(key, None)) is not None:
                self.bytes -= old[1]
            self._items[key] = (value, size)
            self.bytes += size
            while len(self._items) > self.entries or (
                self.max_bytes is not None and self.bytes > self.max_bytes
            ):
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


class SandboxPageReader:
    """:class:`indexing.contract.PageReader` over a pool of sandboxed parser children of its own,
    so drawing a page never waits behind the worker's parsing."""

    def __init__(
        self,
        limits: PdfLimits,
        *,
        zoom: float = ZOOM,
        image_cache_bytes: int = IMAGE_CACHE_BYTES,
        pool: PdfParserPool | None = None,
    ) -> None:
        self.limits = limits
        self.zoom = zoom
        # Two children, as many as the app's page gate lets draw at once; kept five minutes idle,
        # since a reader turns pages minutes apart and a new child costs 0.2-0.8 s.
        self.pool = pool or PdfParserPool(max_idle=2, idle_seconds=300.0)
        self.images = _Lru(entries=10_000, max_bytes=image_cache_bytes)
        self.views = _Lru(entries=VIEW_CACHE_ENTRIES)
        self.rendered = 0  # PNGs drawn (not from the cache), for tests and the benchmark

    def view(self, path: str, sha256: str, number: int, quote: str) -> PageView:
        key = (sha256, number, " ".join(quote.split()))
        if (hit := self.views.get(key)) is not None:
            found: PageView = hit
            return found
        reply = self._ask(path, sha256, number, quote, draw=False)
        width, height = reply["size"]
        view = PageView(
            number=number,
            pages=int(reply["pages"]),
            width=float(width),
            height=float(height),
            text=str(reply["text"]),
            rects=tuple((float(a), float(b), float(c), float(d)) for a, b, c, d in reply["rects"]),
            partial=bool(reply.get("partial")),
        )
        self.views.put(key, view)
        return view

    def image(self, path: str, sha256: str, number: int) -> bytes:
        key = (sha256, number, self.zoom)
        if (hit := self.images.get(key)) is not None:
            png: bytes = hit
            return png
        png = base64.b64decode(self._ask(path, sha256, number, "", draw=True)["png"])
        self.rendered += 1
        self.images.put(key, png, len(png))
        return png

    def _ask(self, path: str, sha256: str, number: int, quote: str, *, draw: bool) -> dict[str, Any]:
        data = _stored(path, sha256, self.limits)
        try:
            return self.pool.page(data, self.limits, number, self.zoom, quote, draw=draw)
        except PdfRejected as exc:
            raise PageUnavailable(f"the stored PDF cannot be drawn ({exc.reason})") from exc

    def close(self) -> None:
        self.pool.close()


def _stored(path: str, sha256: str, limits: PdfLimits) -> bytes:
    """The file's bytes when it is still the one that was indexed."""
    file = Path(path)
    try:
        if file.stat().st_size > limits.max_bytes:
            raise PageUnavailable("the stored PDF is over the size limit")
        data = file.read_bytes()
    except OSError as exc:
        raise PageUnavailable(f"the stored PDF cannot be read ({exc.strerror or exc})") from exc
    if hashlib.sha256(data).hexdigest() != sha256:
        raise PageUnavailable("the stored PDF has changed since it was indexed")
    return data
