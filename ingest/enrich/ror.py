"""ROR (Research Organization Registry): v2 records from a data dump or the REST API.

A record becomes :class:`RorRecord`, the one shape the catalogue import uses, whichever way it came.
The client reads ``/organizations/{id}`` and searches ``/organizations?query=`` (printed
affiliations are matched locally, by :mod:`ingest.enrich.affiliations`); the dump reader streams a
JSONL file of v2 records (one per line, as in ``ror-records`` releases) and reports bad lines
without stopping.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog.institutions import ror_id_of
from catalog.text import clean_text
from coordination.pacing import Pacer
from ingest.enrich.transport import JsonClient, politeness
from ingest.records import RecordError
from ingest.sources import open_text
from settings import EnrichmentSettings


class BadRorRecord(ValueError):
    """A JSON object that is not a usable ROR v2 record; the message says why."""


@dataclass(frozen=True, slots=True)
class RorRecord:
    ror_id: str  # bare, e.g. "05dxps055"
    name: str  # ROR's display name
    labels: tuple[str, ...] = ()  # the name in other languages
    aliases: tuple[str, ...] = ()
    acronyms: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    status: str = "active"  # active | inactive | withdrawn
    established: int | None = None
    country_code: str | None = None
    country_name: str | None = None
    city: str | None = None
    website: str | None = None
    links: dict[str, Any] = field(default_factory=dict)  # wikipedia, external ids, relationships

    def names(self) -> Iterator[tuple[str, str]]:
        """Every (name, kind) it goes by; kind is name | label | alias | acronym."""
        yield self.name, "name"
        for kind, values in (("label", self.labels), ("alias", self.aliases), ("acronym", self.acronyms)):
            for value in values:
                yield value, kind


def parse_record(obj: Mapping[str, Any]) -> RorRecord:
    """A ROR v2 record (API answer or dump line) → :class:`RorRecord`; :class:`BadRorRecord` if unusable."""
    if not isinstance(obj, Mapping):
        raise BadRorRecord(f"expected a JSON object, got {type(obj).__name__}")
    ror_id = ror_id_of(str(obj.get("id") or ""))
    if ror_id is None:
        raise BadRorRecord(f"no valid ROR id (id={obj.get('id')!r})")
    names = obj.get("names")
    if not isinstance(names, list):
        raise BadRorRecord(f"{ror_id}: no 'names' list (a ROR v1 record? only v2 is read)")
    display: str | None = None
    labels: list[str] = []
    aliases: list[str] = []
    acronyms: list[str] = []
    for entry in names:
        value = clean_text(str(entry.get("value") or "")) if isinstance(entry, Mapping) else ""
        if not value:
            continue
        types = entry.get("types") or []
        if "ror_display" in types:
            display = value
        if "acronym" in types:
            acronyms.append(value)
        elif "alias" in types:
            aliases.append(value)
        elif "label" in types and "ror_display" not in types:
            labels.append(value)
    if display is None:
        raise BadRorRecord(f"{ror_id}: no name of type ror_display")
    location = _first(obj.get("locations"))
    geo = location.get("geonames_details") or {} if location else {}
    links: dict[str, Any] = {}
    website = None
    for link in obj.get("links") or []:
        if isinstance(link, Mapping) and link.get("value"):
            if link.get("type") == "website" and website is None:
                website = str(link["value"])
            else:
                links.setdefault(str(link.get("type") or "link"), str(link["value"]))
    for ext in obj.get("external_ids") or []:
        if isinstance(ext, Mapping) and ext.get("type"):
            value = ext.get("preferred") or _first(ext.get("all"))
            if value:
                links[str(ext["type"])] = str(value)
    relationships = [
        {"type": r.get("type"), "ror_id": ror_id_of(str(r.get("id") or "")), "label": r.get("label")}
        for r in obj.get("relationships") or []
        if isinstance(r, Mapping) and ror_id_of(str(r.get("id") or ""))
    ]
    if relationships:
        links["relationships"] = relationships
    if obj.get("domains"):
        links["domains"] = list(obj["domains"])
    established = obj.get("established")
    return RorRecord(
        ror_id=ror_id,
        name=display,
        labels=tuple(dict.fromkeys(labels)),
        aliases=tuple(dict.fromkeys(aliases)),
        acronyms=tuple(dict.fromkeys(acronyms)),
        types=tuple(str(t) for t in obj.get("types") or []),
        status=str(obj.get("status") or "active"),
        established=established if isinstance(established, int) else None,
        country_code=(geo.get("country_code") or None),
        country_name=(geo.get("country_name") or None),
        city=(geo.get("name") or None),
        website=website,
        links=links,
    )


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else None


def read_dump(path: Path) -> Iterator[RorRecord | RecordError]:
    """Stream a JSONL(.gz) file of ROR v2 records; a bad line becomes a :class:`RecordError`."""
    with open_text(path) as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield parse_record(json.loads(line))
            except (json.JSONDecodeError, BadRorRecord) as exc:
                yield RecordError(path.name, line_number, str(exc))


# -- the REST API -----------------------------------------------------------------------------------


class RorClient:
    """The ROR REST API (v2). Optional ``Client-Id`` header from settings; polite rate limit."""

    def __init__(self, settings: EnrichmentSettings, pacer: Pacer) -> None:
        headers = {"Client-Id": settings.ror_client_id} if settings.ror_client_id else {}
        self.http = JsonClient(
            "ROR",
            settings.ror_base_url,
            politeness(settings, settings.ror_rate_limit),
            pacer,
            headers=headers,
        )

    def close(self) -> None:
        self.http.close()

    def organization(self, ror_id: str) -> RorRecord:
        """One record by ROR id (any written form); :class:`~ingest.enrich.transport.NotFound` if none."""
        bare = ror_id_of(ror_id)
        if bare is None:
            raise ValueError(f"not a ROR id: {ror_id!r}")
        return parse_record(self.http.get(f"/organizations/{bare}"))

    def search(self, query: str, *, page: int = 1) -> tuple[int, list[RorRecord]]:
        """(number of results, the records of one page) for a free-text query."""
        body = self.http.get("/organizations", {"query": query, "page": page if page > 1 else None})
        return int(body.get("number_of_results") or 0), [parse_record(i) for i in body.get("items") or []]
