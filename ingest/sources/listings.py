"""The daily-listing JSONL(.gz) files: ``id, title, summary, authors[], categories[], comment, pdf, abs,
_listing_file`` (the listing's date)."""

from __future__ import annotations

import datetime as dt

from ingest.records import BadRecord, PaperRecord, make_record
from ingest.sources import jsonl_reader, text_or_none


def parse(value: dict[str, object]) -> PaperRecord:
    authors = value.get("authors")
    categories = value.get("categories")
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        raise BadRecord("authors must be a list of names")
    if not isinstance(categories, list):
        raise BadRecord("categories must be a list")
    return make_record(
        raw_id=str(value.get("id") or ""),
        title=value.get("title"),
        abstract=value.get("summary"),
        authors=authors,
        categories=[c for c in categories if isinstance(c, str)],
        comments=text_or_none(value.get("comment")),
        announced_on=_date(value.get("_listing_file")),
        abs_url=text_or_none(value.get("abs")),
        pdf_url=text_or_none(value.get("pdf")),
    )


read = jsonl_reader(parse)


def _date(value: object) -> dt.date | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None
