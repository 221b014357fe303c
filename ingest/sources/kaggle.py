"""The Kaggle ``arxiv-metadata-oai-snapshot`` schema (one JSON object per line): ``versions`` with dates,
``authors_parsed``, ``doi``, ``journal-ref``, ``license`` … and, in the demo PDFs' file, ``affiliations``."""

from __future__ import annotations

import datetime as dt
import email.utils

from ingest.records import BadRecord, PaperRecord, Version, make_record
from ingest.sources import jsonl_reader, text_or_none
from people.names import from_parsed


def parse(value: dict[str, object]) -> PaperRecord:
    categories = value.get("categories")
    if not isinstance(categories, str):
        raise BadRecord("categories must be a space-separated string")
    return make_record(
        raw_id=str(value.get("id") or ""),
        title=value.get("title"),
        abstract=value.get("abstract"),
        authors=_authors(value),
        categories=categories.split(),
        versions=_versions(value.get("versions")),
        doi=text_or_none(value.get("doi")),
        journal_ref=text_or_none(value.get("journal-ref")),
        comments=text_or_none(value.get("comments")),
        report_no=text_or_none(value.get("report-no")),
        license=text_or_none(value.get("license")),
        submitter=text_or_none(value.get("submitter")),
        affiliations=_affiliations(value.get("affiliations")),
    )


read = jsonl_reader(parse)


def _authors(value: dict[str, object]) -> list[str]:
    parsed = value.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        names = []
        for entry in parsed:
            if not isinstance(entry, list) or not entry or not all(isinstance(p, str) for p in entry):
                raise BadRecord("authors_parsed entries must be lists of strings")
            names.append(from_parsed(*([*entry, "", ""])[:3]))
        return names
    raw = value.get("authors")
    if isinstance(raw, str):
        # "A, B and C": the raw string is a fallback only; authors_parsed is the reliable field.
        return [n.strip() for n in raw.replace(" and ", ", ").split(",") if n.strip()]
    raise BadRecord("no authors")


def _versions(value: object) -> tuple[Version, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise BadRecord("versions must be a list")
    versions = []
    for entry in value:
        if not isinstance(entry, dict) or not str(entry.get("version", "")).startswith("v"):
            raise BadRecord(f"bad version entry {entry!r:.60}")
        try:
            number = int(str(entry["version"])[1:])
        except ValueError:
            raise BadRecord(f"bad version {entry['version']!r:.20}") from None
        versions.append(Version(number, _datetime(entry.get("created")), text_or_none(entry.get("size"))))
    return tuple(versions)


def _datetime(value: object) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None


def _affiliations(value: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        return {}
    return {
        str(name): tuple(a for a in affs if isinstance(a, str))
        for name, affs in value.items()
        if isinstance(affs, list)
    }
