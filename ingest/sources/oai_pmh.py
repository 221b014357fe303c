"""OAI-PMH 2.0 harvesting of arXiv's ``arXiv`` metadata format, incremental by datestamp.

``ListRecords`` with ``metadataPrefix=arXiv`` (optionally ``from``/``until`` days and a ``set`` such as
``cs`` or ``physics:hep-th``) is followed through its resumption tokens; ``noRecordsMatch`` is an
empty harvest, every other OAI error code raises :class:`OaiPmhError` saying what it means, and
a 503 with ``Retry-After`` (OAI-PMH flow control) is waited out by :mod:`ingest.http`.

The ``arXiv`` format separates author names (keyname, forenames, suffix) and affiliations but
carries no version numbers: only ``created`` (the first version's date) and ``updated`` (the latest
version's date, when there is more than one). A record therefore knows v1 and its date, and the
importer's rule (an older version never overwrites a newer one) keeps a paper already stored with
a higher version as it is; ``python -m ingest arxiv ID`` refreshes such a paper with its versions.

:class:`Harvest` remembers where an incremental harvest got to (:class:`HarvestState`, a JSON file
under the data dir, per endpoint and set): after a complete run, the next one starts ``from`` the
day of the first response of this one (OAI-PMH's advice; the overlap of one day re-reads records
that import as unchanged).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from catalog import arxiv_ids
from catalog.text import clean_text
from ingest.http import PoliteClient, arxiv_client
from ingest.records import BadRecord, PaperRecord, RecordError, Version, make_record
from ingest.sources import HarvestError
from people.names import from_parsed
from settings import Settings

OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV = "{http://arxiv.org/OAI/arXiv/}"
METADATA_PREFIX = "arXiv"

# What each OAI-PMH error code means for someone running a harvest (OAI-PMH 2.0, section 3.6).
ERROR_MEANINGS = {
    "badArgument": "the request has an illegal or missing argument (check --from, --until and --set)",
    "badResumptionToken": "the resumption token is invalid or expired; start the harvest again",
    "badVerb": "the repository does not understand the request; is the base URL an OAI-PMH endpoint?",
    "cannotDisseminateFormat": f"the repository does not offer the {METADATA_PREFIX!r} metadata format",
    "idDoesNotExist": "the repository does not know that identifier",
    "noMetadataFormats": "the repository offers no metadata formats for that item",
    "noSetHierarchy": "the repository does not support sets",
}


class OaiPmhError(HarvestError):
    """The repository answered with an OAI-PMH error (or with something that is not OAI-PMH)."""

    def __init__(self, code: str, message: str, source: str) -> None:
        meaning = ERROR_MEANINGS.get(code)
        detail = f"{message} ({meaning})" if meaning and message else message or meaning or "no message"
        super().__init__(f"{source}: OAI-PMH error {code}: {detail}")
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Deleted:
    """A record the repository reports as deleted (a header with ``status="deleted"``)."""

    arxiv_id: str
    datestamp: str


Item = PaperRecord | RecordError | Deleted


@dataclass(frozen=True, slots=True)
class OaiPage:
    """One ``ListRecords`` response."""

    response_date: dt.datetime
    items: list[Item]
    resumption_token: str | None = None
    complete_list_size: int | None = None
    cursor: int | None = None


# -- parsing -------------------------------------------------------------------------------------


def parse_list_records(body: bytes | str, *, source: str = "OAI-PMH") -> OaiPage:
    """Parse one ``ListRecords`` response (``noRecordsMatch`` is a page without records)."""
    try:
        root = fromstring(body)
    except (ParseError, DefusedXmlException) as exc:
        raise OaiPmhError("notXml", f"the response is not well-formed XML ({exc})", source) from None
    if root.tag != f"{OAI}OAI-PMH":
        raise OaiPmhError("notOaiPmh", f"expected <OAI-PMH>, got <{root.tag}>", source)
    response_date = _datetime(_text(root, f"{OAI}responseDate"))
    if response_date is None:
        raise OaiPmhError("notOaiPmh", "the response has no valid <responseDate>", source)
    errors = root.findall(f"{OAI}error")
    if errors:
        codes = {e.get("code", "") for e in errors}
        if codes == {"noRecordsMatch"}:
            return OaiPage(response_date, [])
        first = next(e for e in errors if e.get("code") != "noRecordsMatch")
        raise OaiPmhError(first.get("code", "unknown"), clean_text(first.text or ""), source)
    listing = root.find(f"{OAI}ListRecords")
    if listing is None:
        raise OaiPmhError("notOaiPmh", "the response has neither <ListRecords> nor <error>", source)
    token_element = listing.find(f"{OAI}resumptionToken")
    cursor = _optional_int(token_element, "cursor")
    offset = cursor or 0
    items: list[Item] = []
    for position, record in enumerate(listing.findall(f"{OAI}record"), start=offset + 1):
        try:
            items.append(parse_record(record))
        except BadRecord as exc:
            items.append(RecordError(source, position, str(exc)))
    token = (token_element.text or "").strip() if token_element is not None else ""
    return OaiPage(
        response_date,
        items,
        resumption_token=token or None,
        complete_list_size=_optional_int(token_element, "completeListSize"),
        cursor=cursor,
    )


def parse_record(record: Element) -> PaperRecord | Deleted:
    """One ``<record>``: a deleted header, or a header with ``arXiv`` metadata."""
    header = record.find(f"{OAI}header")
    if header is None:
        raise BadRecord("record without <header>")
    identifier = _text(header, f"{OAI}identifier")
    if header.get("status") == "deleted":
        raw = identifier.rsplit(":", 1)[-1] if identifier.startswith("oai:") else identifier
        try:
            return Deleted(arxiv_ids.canonical(raw), _text(header, f"{OAI}datestamp"))
        except arxiv_ids.InvalidArxivId as exc:
            raise BadRecord(f"deleted record {identifier!r:.80}: {exc}") from None
    metadata = record.find(f"{OAI}metadata/{ARXIV}arXiv")
    if metadata is None:
        raise BadRecord(f"{identifier or 'record'}: no <arXiv> metadata")
    try:
        return parse_arxiv(metadata)
    except BadRecord as exc:
        raise BadRecord(f"{identifier}: {exc}" if identifier else str(exc)) from None


def parse_arxiv(element: Element) -> PaperRecord:
    """The ``arXiv`` metadata format (``<arXiv xmlns="http://arxiv.org/OAI/arXiv/">``)."""
    authors: list[str] = []
    affiliations: dict[str, tuple[str, ...]] = {}
    for author in element.findall(f"{ARXIV}authors/{ARXIV}author"):
        name = clean_text(
            from_parsed(
                _text(author, f"{ARXIV}keyname"),
                _text(author, f"{ARXIV}forenames"),
                _text(author, f"{ARXIV}suffix"),
            )
        )
        if not name:
            raise BadRecord("an author without a name")
        authors.append(name)
        places = tuple(a for e in author.findall(f"{ARXIV}affiliation") if (a := clean_text(e.text or "")))
        if places:
            affiliations[name] = affiliations.get(name, ()) + places
    if not authors:
        raise BadRecord("no authors")
    created = _date(element, "created")
    return make_record(
        raw_id=_text(element, f"{ARXIV}id"),
        title=_text(element, f"{ARXIV}title"),
        abstract=_text(element, f"{ARXIV}abstract"),
        authors=authors,
        categories=_text(element, f"{ARXIV}categories").split(),
        versions=(Version(1, created),) if created else (),
        doi=_text(element, f"{ARXIV}doi") or None,
        journal_ref=_text(element, f"{ARXIV}journal-ref") or None,
        comments=_text(element, f"{ARXIV}comments") or None,
        report_no=_text(element, f"{ARXIV}report-no") or None,
        license=_text(element, f"{ARXIV}license") or None,
        affiliations=affiliations,
    )


def _text(element: Element, path: str) -> str:
    found = element.find(path)
    return (found.text or "").strip() if found is not None else ""


def _date(element: Element, name: str) -> dt.datetime | None:
    text = _text(element, f"{ARXIV}{name}")
    if not text:
        return None
    try:
        return dt.datetime.combine(dt.date.fromisoformat(text), dt.time(), dt.UTC)
    except ValueError:
        raise BadRecord(f"bad <{name}> date {text!r:.40}") from None


def _datetime(text: str) -> dt.datetime | None:
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _optional_int(element: Element | None, attribute: str) -> int | None:
    value = element.get(attribute) if element is not None else None
    return int(value) if value is not None and value.isdigit() else None


# -- the client ----------------------------------------------------------------------------------


class OaiPmhClient:
    """``ListRecords`` against one OAI-PMH endpoint, paced and retried like every arXiv request."""

    def __init__(self, http: PoliteClient, *, base_url: str = "https://oaipmh.arxiv.org/oai") -> None:
        self.base_url = base_url
        self._http = http

    @classmethod
    def from_settings(cls, settings: Settings) -> OaiPmhClient:
        return cls(arxiv_client(settings), base_url=settings.arxiv.arxiv_oai_pmh_url)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> OaiPmhClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def list_records(
        self,
        *,
        from_: dt.date | None = None,
        until: dt.date | None = None,
        set_spec: str | None = None,
    ) -> Iterator[OaiPage]:
        """Every page of one ``ListRecords`` request, following resumption tokens to the end."""
        if from_ and until and from_ > until:
            raise ValueError(f"--from {from_} is after --until {until}")
        params = {"verb": "ListRecords", "metadataPrefix": METADATA_PREFIX}
        if from_:
            params["from"] = from_.isoformat()
        if until:
            params["until"] = until.isoformat()
        if set_spec:
            params["set"] = set_spec
        page_number = 1
        while True:
            source = f"OAI-PMH {self.base_url} page {page_number}"
            reply = self._http.get(self.base_url, params)
            if reply.status != 200 and b"<OAI-PMH" not in reply.content[:2048]:
                raise OaiPmhError(f"HTTP {reply.status}", reply.reason, source)
            page = parse_list_records(reply.content, source=source)
            yield page
            if not page.resumption_token:
                return
            # A resumption token is an exclusive argument: it stands for the rest of the request.
            params = {"verb": "ListRecords", "resumptionToken": page.resumption_token}
            page_number += 1


# -- incremental harvests ------------------------------------------------------------------------


class HarvestState:
    """The ``from`` day of the next harvest per endpoint and set, in a small JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    def key(base_url: str, set_spec: str | None) -> str:
        return f"{base_url.rstrip('/')} {METADATA_PREFIX} {set_spec or '*'}"

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise HarvestError(f"cannot read the harvest state {self.path}: {exc}") from None
        if not isinstance(data, dict):
            raise HarvestError(f"the harvest state {self.path} is not a JSON object")
        return data

    def next_from(self, key: str) -> dt.date | None:
        entry = self._load().get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("next_from"), str):
            return None
        return dt.date.fromisoformat(str(entry["next_from"]))

    def remember(self, key: str, next_from: dt.date, *, records: int) -> None:
        """Write atomically (temp file + rename), so a crash never leaves half a state file."""
        data = self._load()
        data[key] = {
            "next_from": next_from.isoformat(),
            "harvested_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "records": records,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".harvest-state-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, sort_keys=True)
            Path(tmp).replace(self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


@dataclass
class Harvest:
    """One incremental run: :meth:`records` feeds the importer; once those are stored,
    :meth:`remember` records where the next run starts. ``from_`` None continues from the state."""

    client: OaiPmhClient
    state: HarvestState
    set_spec: str | None = None
    from_: dt.date | None = None
    until: dt.date | None = None
    deleted: list[Deleted] = field(default_factory=list)
    started: dt.datetime | None = None  # responseDate of the first page
    complete_list_size: int | None = None
    seen: int = 0
    complete: bool = False
    key: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.key = HarvestState.key(self.client.base_url, self.set_spec)
        if self.from_ is None:
            self.from_ = self.state.next_from(self.key)

    def records(self) -> Iterator[PaperRecord | RecordError]:
        pages = self.client.list_records(from_=self.from_, until=self.until, set_spec=self.set_spec)
        for page in pages:
            if self.started is None:
                self.started = page.response_date
                self.complete_list_size = page.complete_list_size
            for item in page.items:
                self.seen += 1
                if isinstance(item, Deleted):
                    self.deleted.append(item)
                else:
                    yield item
        self.complete = True

    def remember(self) -> dt.date:
        """Store the next run's ``from``: ``until`` when given, else the day this harvest began."""
        if not self.complete or self.started is None:
            raise HarvestError("the harvest did not finish; its state is left as it was")
        next_from = self.until or self.started.astimezone(dt.UTC).date()
        self.state.remember(self.key, next_from, records=self.seen)
        return next_from
