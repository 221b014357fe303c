"""What parsing a PDF produces, and the limits it runs under. Plain data: no PyMuPDF here, so the
web process can import it without loading MuPDF (which lives only in the sandboxed child)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from catalog.text import scrub

if TYPE_CHECKING:
    from settings import ParserSettings

HiddenReason = Literal["white", "tiny", "invisible", "transparent", "off-page"]
HIDDEN_REASONS: frozenset[str] = frozenset(get_args(HiddenReason))


class PdfRejected(Exception):
    """The PDF was not parsed; ``reason`` is a short human sentence (stored as the job's failure)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PdfLimits:
    """Hard limits for one document. Exceeding any is a :class:`PdfRejected`, never a truncation."""

    max_bytes: int = 64 * 1024 * 1024
    max_pages: int = 500
    max_chars_per_page: int = 100_000
    timeout_seconds: float = 60.0
    memory_bytes: int = 1536 * 1024 * 1024  # RLIMIT_AS of the child; PyMuPDF alone needs ~512 MiB

    def __post_init__(self) -> None:
        if min(self.max_bytes, self.max_pages, self.max_chars_per_page) < 1 or self.timeout_seconds <= 0:
            raise ValueError(f"PDF limits must be positive: {self}")
        if self.memory_bytes < 1024 * 1024 * 1024:
            raise ValueError("the PDF parser needs an address-space limit of at least 1 GiB")

    @classmethod
    def from_settings(cls, settings: ParserSettings) -> PdfLimits:
        return cls(
            max_bytes=settings.pdf_max_bytes,
            max_pages=settings.pdf_max_pages,
            max_chars_per_page=settings.pdf_max_chars_per_page,
            timeout_seconds=settings.pdf_timeout_seconds,
            memory_bytes=settings.pdf_memory_mib * 1024 * 1024,
        )


@dataclass(frozen=True, slots=True)
class PdfPage:
    """One page's visible text in reading order; ``headings`` are (char offset in ``text``, heading)."""

    number: int  # 1-based
    text: str
    headings: list[tuple[int, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class HiddenText:
    """Text a reader cannot see (kept out of the page text): where it was and why it is hidden."""

    page: int
    reason: HiddenReason
    text: str


@dataclass(frozen=True, slots=True)
class PdfMetadata:
    """What the PDF says about itself: the arXiv side stamp and the front matter of page 1.
    Every field may be missing; nothing here is trusted over catalogue metadata."""

    arxiv_id: str | None = None
    version: int | None = None
    primary_category: str | None = None
    date: dt.date | None = None
    title: str | None = None
    authors: list[str] = field(default_factory=list)
    abstract: str | None = None


@dataclass(frozen=True, slots=True)
class ParsedPdf:
    pages: list[PdfPage]
    hidden: list[HiddenText]
    metadata: PdfMetadata | None
    parser: str
    parser_version: str
    page_count: int
    sha256: str

    @property
    def hidden_text(self) -> list[str]:
        return [h.text for h in self.hidden]


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return scrub(value)


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _count(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError(f"expected a count, got {value!r}")
    return value


def parsed_from_wire(reply: dict[str, Any], *, sha256: str, parser: str, parser_version: str) -> ParsedPdf:
    """Rebuild the child's JSON reply (see ``ingest.pdf.child``) as typed values. The child runs
    MuPDF on hostile input, so its answer is checked like any untrusted input: every field has its
    type, every string is scrubbed again. Raises TypeError/ValueError/KeyError when it is malformed."""
    meta = reply["metadata"]
    metadata = None
    if meta is not None:
        date = _optional_text(meta.get("date"))
        version = meta.get("version")
        metadata = PdfMetadata(
            arxiv_id=_optional_text(meta.get("arxiv_id")),
            version=None if version is None else _count(version),
            primary_category=_optional_text(meta.get("primary_category")),
            date=dt.date.fromisoformat(date) if date else None,
            title=_optional_text(meta.get("title")),
            authors=[_text(a) for a in meta.get("authors") or []],
            abstract=_optional_text(meta.get("abstract")),
        )
    hidden = []
    for item in reply["hidden"]:
        reason = item["reason"]
        if reason not in HIDDEN_REASONS:
            raise ValueError(f"unknown hidden-text reason {reason!r}")
        hidden.append(HiddenText(page=_count(item["page"]), reason=reason, text=_text(item["text"])))
    return ParsedPdf(
        pages=[
            PdfPage(
                number=_count(p["number"]),
                text=_text(p["text"]),
                headings=[(_count(offset), _text(heading)) for offset, heading in p["headings"]],
            )
            for p in reply["pages"]
        ],
        hidden=hidden,
        metadata=metadata,
        parser=parser,
        parser_version=parser_version,
        page_count=_count(reply["page_count"]),
        sha256=sha256,
    )
