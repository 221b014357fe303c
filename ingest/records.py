"""The shape every metadata source produces, and the error a bad record becomes.

Sources never touch the catalogue: they turn their input into :class:`PaperRecord` values (or
:class:`RecordError` for a record they cannot read) and the importer does the rest.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from catalog import arxiv_ids
from catalog.text import clean_text


@dataclass(frozen=True, slots=True)
class Version:
    number: int
    submitted_at: dt.datetime | None = None
    size: str | None = None


@dataclass(frozen=True, slots=True)
class PaperRecord:
    arxiv_id: str  # canonical, no version
    title: str
    abstract: str
    authors: tuple[str, ...]
    categories: tuple[str, ...]  # primary first
    versions: tuple[Version, ...] = ()
    doi: str | None = None
    journal_ref: str | None = None
    comments: str | None = None
    report_no: str | None = None
    license: str | None = None
    submitter: str | None = None
    announced_on: dt.date | None = None
    abs_url: str | None = None
    pdf_url: str | None = None
    # Affiliations as printed, per author name (PDF headers, Kaggle-schema extras).
    affiliations: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def latest_version(self) -> int | None:
        return max((v.number for v in self.versions), default=None)

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None

    def content_hash(self) -> str:
        """Changes exactly when anything the catalogue stores from this record changes."""
        fields = [getattr(self, name) for name in self.__slots__]
        payload = json.dumps(fields, default=_plain, sort_keys=True, ensure_ascii=False)
        return hashlib.sha1(payload.encode(), usedforsecurity=False).hexdigest()


def _plain(value: object) -> object:
    if isinstance(value, Version):
        return [value.number, value.submitted_at, value.size]
    return str(value)


@dataclass(frozen=True, slots=True)
class RecordError:
    """A record that could not be read: where it was and why. The import goes on without it."""

    source: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.reason}"


class BadRecord(ValueError):
    """Raised by a source's per-record parser; turned into a :class:`RecordError` by the source."""


def make_record(
    *,
    raw_id: str,
    title: object,
    abstract: object,
    authors: Iterable[str],
    categories: Iterable[str],
    **extra: object,
) -> PaperRecord:
    """Validate and clean the fields every source shares; raise :class:`BadRecord` on bad input."""
    try:
        parsed = arxiv_ids.parse(raw_id)
    except arxiv_ids.InvalidArxivId as exc:
        raise BadRecord(str(exc)) from None
    if not isinstance(title, str) or not clean_text(title):
        raise BadRecord("missing title")
    if abstract is not None and not isinstance(abstract, str):
        raise BadRecord("abstract is not text")
    cats = tuple(dict.fromkeys(c for c in categories if is_category(c)))
    versions = extra.pop("versions", ())
    if not versions and parsed.version is not None:
        versions = (Version(parsed.version),)
    return PaperRecord(
        arxiv_id=parsed.canonical,
        title=clean_text(title),
        abstract=clean_text(abstract or ""),
        authors=tuple(name for a in authors if (name := clean_text(a))),
        categories=cats,
        versions=tuple(versions),  # type: ignore[arg-type]
        **{k: (clean_text(v) if isinstance(v, str) else v) for k, v in extra.items()},  # type: ignore[arg-type]
    )


_CATEGORY = re.compile(r"[a-z]+(?:-[a-z]+)?(?:\.[A-Za-z]+(?:-[A-Za-z]+)?)?")


def is_category(text: str) -> bool:
    """arXiv category codes (``cs.LG``, ``hep-th``); listings also carry MSC/ACM codes, which are not."""
    return isinstance(text, str) and _CATEGORY.fullmatch(text) is not None


def read_jsonl_lines(
    lines: Iterable[str], source: str
) -> Iterator[tuple[int, dict[str, object] | RecordError]]:
    """Number and decode JSON lines; a line that is not a JSON object becomes a RecordError."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, RecordError(source, number, f"invalid JSON: {exc.msg}")
            continue
        if not isinstance(value, dict):
            yield number, RecordError(source, number, "not a JSON object")
            continue
        yield number, value
