"""The OAI-PMH harvester against a repository on loopback that answers as OAI-PMH 2.0 prescribes.

The repository below is written from the protocol (ListRecords, exclusive resumption tokens with
``cursor`` and ``completeListSize`` and an empty token on the last page, ``from``/``until`` on
datestamps, sets, ``noRecordsMatch``, error codes, 503 + Retry-After flow control) and from arXiv's
``arXiv`` metadata format. Its records are real arXiv metadata: the first papers of the Kaggle
snapshot (the OAI metadata of arXiv as JSON; ``update_date`` is the datestamp). The affiliations are
the ones printed on 0704.0001 (ANL-HEP-PR-07-12), which that snapshot does not carry.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from catalog.models import Affiliation, Paper
from coordination.pacing import pacer
from ingest.__main__ import cli
from ingest.http import ARXIV, HttpError, PoliteClient, Politeness
from ingest.importer import Importer
from ingest.records import PaperRecord, RecordError
from ingest.sources.oai_pmh import (
    Deleted,
    Harvest,
    HarvestState,
    OaiPmhClient,
    OaiPmhError,
    parse_list_records,
)
from settings import get_settings
from tests.integration.loopback_http import LoopbackServer, Reply, Request, serve

FAST = Politeness(interval=0.0, timeout=5.0, retries=2, backoff=0.01, max_wait=5.0)
OAI_NS = "http://www.openarchives.org/OAI/2.0/"
AFFILIATIONS = {
    "Balázs": ["Argonne National Laboratory"],
    "Berger": ["Argonne National Laboratory"],
    "Nadolsky": ["Argonne National Laboratory"],
    "Yuan": ["Michigan State University"],
}


# -- the repository -------------------------------------------------------------------------------


@dataclass
class Item:
    arxiv_id: str
    datestamp: dt.date
    sets: list[str]
    metadata: str | None  # the <arXiv> element; None: a deleted record


def arxiv_metadata(row: dict[str, object], *, affiliations: bool = False) -> str:
    """Kaggle-snapshot JSON → the ``arXiv`` metadata format."""
    versions = row["versions"]
    assert isinstance(versions, list)
    created = email.utils.parsedate_to_datetime(versions[0]["created"]).date()
    updated = email.utils.parsedate_to_datetime(versions[-1]["created"]).date()
    authors = []
    for parsed in row["authors_parsed"]:  # type: ignore[attr-defined]
        keyname, forenames, suffix = [*parsed, "", ""][:3]
        parts = [f"<keyname>{escape(keyname)}</keyname>"]
        if forenames:
            parts.append(f"<forenames>{escape(forenames)}</forenames>")
        if suffix:
            parts.append(f"<suffix>{escape(suffix)}</suffix>")
        if affiliations:
            parts += [f"<affiliation>{escape(a)}</affiliation>" for a in AFFILIATIONS.get(keyname, [])]
        authors.append(f"<author>{''.join(parts)}</author>")
    optional = "".join(
        f"<{tag}>{escape(str(row[key]))}</{tag}>"
        for tag, key in [
            ("comments", "comments"),
            ("report-no", "report-no"),
            ("journal-ref", "journal-ref"),
            ("doi", "doi"),
            ("license", "license"),
        ]
        if row.get(key)
    )
    return (
        '<arXiv xmlns="http://arxiv.org/OAI/arXiv/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://arxiv.org/OAI/arXiv/ http://arxiv.org/OAI/arXiv.xsd">'
        f"<id>{row['id']}</id><created>{created}</created>"
        + (f"<updated>{updated}</updated>" if len(versions) > 1 else "")
        + f"<authors>{''.join(authors)}</authors><title>{escape(str(row['title']))}</title>"
        f"<categories>{row['categories']}</categories>{optional}"
        f"<abstract>{escape(str(row['abstract']))}</abstract></arXiv>"
    )


def set_specs(categories: str) -> list[str]:
    """arXiv's sets: ``cs``, ``math``, ``q-bio`` … and ``physics:<archive>`` for physics archives."""
    specs = []
    for category in categories.split():
        archive = category.split(".")[0]
        specs.append(
            archive
            if archive in {"cs", "math", "q-bio", "q-fin", "stat", "econ", "eess"}
            else f"physics:{archive}"
        )
    return list(dict.fromkeys(specs))


@dataclass
class Repository:
    """An OAI-PMH 2.0 data provider for ``ListRecords`` (the verb a harvester needs)."""

    items: list[Item]
    now: dt.datetime = dt.datetime(2026, 11, 30, 4, 0, tzinfo=dt.UTC)
    page_size: int = 3
    formats: tuple[str, ...] = ("arXiv", "oai_dc")
    has_sets: bool = True
    throttle: set[int] = field(default_factory=set)  # request numbers answered 503 + Retry-After
    tokens: dict[str, tuple[list[Item], int]] = field(default_factory=dict)
    served: int = 0

    def __call__(self, request: Request) -> Reply:
        self.served += 1
        if self.served in self.throttle:
            return Reply(503, b"busy", {"Retry-After": "1"})
        args = request.query
        verb = args.pop("verb", None)
        if verb != "ListRecords":
            return self._error(request, "badVerb", f"Illegal verb {verb!r}")
        if "resumptionToken" in args:
            if len(args) != 1:
                return self._error(request, "badArgument", "resumptionToken is an exclusive argument")
            held = self.tokens.pop(args["resumptionToken"], None)
            if held is None:
                return self._error(request, "badResumptionToken", "The resumptionToken has expired")
            return self._page(request, *held)
        prefix = args.pop("metadataPrefix", None)
        if prefix is None:
            return self._error(request, "badArgument", "metadataPrefix is required")
        if prefix not in self.formats:
            return self._error(request, "cannotDisseminateFormat", f"{prefix!r} is not supported")
        try:
            start = dt.date.fromisoformat(args.pop("from")) if "from" in args else dt.date.min
            end = dt.date.fromisoformat(args.pop("until")) if "until" in args else dt.date.max
        except ValueError:
            return self._error(request, "badArgument", "from/until must be YYYY-MM-DD")
        wanted = args.pop("set", None)
        if args:
            return self._error(request, "badArgument", f"Illegal arguments {sorted(args)}")
        if wanted is not None and not self.has_sets:
            return self._error(request, "noSetHierarchy", "This repository does not support sets")
        if wanted is not None and not re.fullmatch(r"[a-z-]+(:[a-z-]+)?", wanted):
            return self._error(request, "badArgument", f"Illegal set {wanted!r}")
        matching = [
            i
            for i in self.items
            if start <= i.datestamp <= end
            and (wanted is None or any(s == wanted or s.startswith(wanted + ":") for s in i.sets))
        ]
        if not matching:
            return self._error(request, "noRecordsMatch", "No records match the request")
        return self._page(request, sorted(matching, key=lambda i: (i.datestamp, i.arxiv_id)), 0)

    def _page(self, request: Request, matching: list[Item], cursor: int) -> Reply:
        chunk = matching[cursor : cursor + self.page_size]
        records = "".join(self._record(i) for i in chunk)
        token = ""
        if cursor + self.page_size < len(matching):
            name = f"tok{self.served}-{cursor + self.page_size}"
            self.tokens[name] = (matching, cursor + self.page_size)
            token = name
        resumption = (
            f'<resumptionToken cursor="{cursor}" completeListSize="{len(matching)}">{token}</resumptionToken>'
            if token or cursor
            else ""
        )
        return self._envelope(request, f"<ListRecords>{records}{resumption}</ListRecords>")

    def _record(self, item: Item) -> str:
        sets = "".join(f"<setSpec>{s}</setSpec>" for s in item.sets)
        identifier = f"<identifier>oai:arXiv.org:{item.arxiv_id}</identifier>"
        stamp = f"<datestamp>{item.datestamp}</datestamp>"
        if item.metadata is None:
            return f'<record><header status="deleted">{identifier}{stamp}{sets}</header></record>'
        return (
            f"<record><header>{identifier}{stamp}{sets}</header><metadata>{item.metadata}</metadata></record>"
        )

    def _error(self, request: Request, code: str, message: str) -> Reply:
        return self._envelope(request, f'<error code="{code}">{escape(message)}</error>')

    def _envelope(self, request: Request, content: str) -> Reply:
        attributes = "".join(f' {k}="{escape(v)}"' for k, v in request.params)
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<OAI-PMH xmlns="{OAI_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            f'xsi:schemaLocation="{OAI_NS} http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">'
            f"<responseDate>{self.now.strftime('%Y-%m-%dT%H:%M:%SZ')}</responseDate>"
            f"<request{attributes}>http://127.0.0.1/oai</request>{content}</OAI-PMH>"
        )
        return Reply(200, body.encode(), {"Content-Type": "text/xml; charset=utf-8"})


@pytest.fixture(scope="module")
def snapshot(shared_data: Path) -> list[dict[str, object]]:
    lines = (shared_data / "arxiv" / "kaggle-snapshot-249.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[:12]]


def _items(rows: list[dict[str, object]]) -> list[Item]:
    items = [
        Item(
            str(row["id"]),
            dt.date.fromisoformat(str(row["update_date"])),
            set_specs(str(row["categories"])),
            arxiv_metadata(row, affiliations=row["id"] == "0704.0001"),
        )
        for row in rows
    ]
    items.append(Item("0704.0013", dt.date(2008, 11, 13), ["math"], None))  # deleted upstream
    return items


@pytest.fixture
def repository(snapshot: list[dict[str, object]]) -> Repository:
    return Repository(_items(snapshot))


@pytest.fixture
def oai(repository: Repository) -> Iterator[LoopbackServer]:
    with serve(repository) as server:
        yield server


def _fixed(reply: Reply, _request: Request) -> Reply:
    return reply


def _client(server: LoopbackServer, politeness: Politeness = FAST) -> OaiPmhClient:
    """A client as production builds it, for this server (the pace kept in the test's data dir)."""
    http = PoliteClient(politeness, pacer(get_settings()), pace_key=ARXIV)
    return OaiPmhClient(http, base_url=server.url + "/oai")


def _flat(pages: Iterator[object]) -> list[object]:
    return [item for page in pages for item in page.items]  # type: ignore[attr-defined]


# -- the format -----------------------------------------------------------------------------------


def test_the_arxiv_format_becomes_a_full_record(oai: LoopbackServer) -> None:
    with _client(oai) as client:
        items = _flat(client.list_records())
    by_id = {i.arxiv_id: i for i in items if isinstance(i, PaperRecord)}
    first = by_id["0704.0001"]
    assert (
        first.title == "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
    )
    assert first.authors == ("C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C. -P. Yuan")
    assert first.affiliations == {
        "C. Balázs": ("Argonne National Laboratory",),
        "E. L. Berger": ("Argonne National Laboratory",),
        "P. M. Nadolsky": ("Argonne National Laboratory",),
        "C. -P. Yuan": ("Michigan State University",),
    }
    assert (first.doi, first.journal_ref, first.report_no) == (
        "10.1103/PhysRevD.76.013009",
        "Phys.Rev.D76:013009,2007",
        "ANL-HEP-PR-07-12",
    )
    assert first.comments == "37 pages, 15 figures; published version"
    assert first.abstract.startswith(
        "A fully differential calculation in perturbative quantum chromodynamics"
    )
    assert first.categories == ("hep-ph",)
    # The format carries no version numbers: v1 with the <created> date.
    assert [(v.number, v.submitted_at) for v in first.versions] == [
        (1, dt.datetime(2007, 4, 2, tzinfo=dt.UTC))
    ]
    evans = by_id["0704.0009"]
    assert "Neal J. Evans II" in evans.authors  # keyname, forenames and suffix
    licensed = [r for r in by_id.values() if r.license]
    assert licensed and all(r.license.startswith("http://") for r in licensed)  # type: ignore[union-attr]
    assert by_id["0704.0002"].categories == ("math.CO", "cs.CG")  # primary first


def test_resumption_tokens_are_followed_to_the_end(oai: LoopbackServer, repository: Repository) -> None:
    with _client(oai) as client:
        pages = list(client.list_records())
    assert len(repository.items) == 13
    assert [len(p.items) for p in pages] == [3, 3, 3, 3, 1]
    assert [p.cursor for p in pages] == [0, 3, 6, 9, 12]
    assert pages[0].complete_list_size == 13 and pages[-1].resumption_token is None
    first, *rest = oai.requests
    assert first.query == {"verb": "ListRecords", "metadataPrefix": "arXiv"}
    assert all(set(r.query) == {"verb", "resumptionToken"} for r in rest)  # the token is exclusive
    items = [i for p in pages for i in p.items]
    assert [i for i in items if isinstance(i, Deleted)] == [Deleted("0704.0013", "2008-11-13")]
    ids = [i.arxiv_id for i in items if isinstance(i, PaperRecord | Deleted)]
    assert sorted(ids) == sorted(i.arxiv_id for i in repository.items) and len(set(ids)) == 13
    assert pages[0].response_date == dt.datetime(2026, 11, 30, 4, 0, tzinfo=dt.UTC)


def test_from_until_and_set_select_records(oai: LoopbackServer, repository: Repository) -> None:
    with _client(oai) as client:
        items = _flat(
            client.list_records(from_=dt.date(2008, 1, 1), until=dt.date(2009, 12, 31), set_spec="math")
        )
    assert oai.requests[0].query == {
        "verb": "ListRecords",
        "metadataPrefix": "arXiv",
        "from": "2008-01-01",
        "until": "2009-12-31",
        "set": "math",
    }
    expected = {
        i.arxiv_id
        for i in repository.items
        if dt.date(2008, 1, 1) <= i.datestamp <= dt.date(2009, 12, 31) and "math" in i.sets
    }
    assert expected and {i.arxiv_id for i in items} == expected  # type: ignore[attr-defined]

    with _client(oai) as client:
        physics = _flat(client.list_records(set_spec="physics"))
    assert physics and all(
        any(c.split(".")[0] not in {"math", "cs"} for c in r.categories)  # type: ignore[attr-defined]
        for r in physics
    )
    with _client(oai) as client, pytest.raises(ValueError, match="is after"):
        list(client.list_records(from_=dt.date(2010, 1, 1), until=dt.date(2009, 1, 1)))


def test_no_records_match_is_an_empty_harvest(oai: LoopbackServer) -> None:
    with _client(oai) as client:
        pages = list(client.list_records(from_=dt.date(2030, 1, 1)))
    assert len(pages) == 1 and pages[0].items == [] and pages[0].resumption_token is None


def test_oai_errors_are_clear(oai: LoopbackServer, repository: Repository) -> None:
    with _client(oai) as client:
        with pytest.raises(OaiPmhError, match=r"badArgument: Illegal set 'no such set'.*check --from"):
            list(client.list_records(set_spec="no such set"))

        repository.formats = ("oai_dc",)
        with pytest.raises(OaiPmhError, match=r"cannotDisseminateFormat.*does not offer the 'arXiv'"):
            list(client.list_records())
        repository.formats = ("arXiv",)

        repository.has_sets = False
        with pytest.raises(OaiPmhError, match="noSetHierarchy"):
            list(client.list_records(set_spec="cs"))
        repository.has_sets = True

        pages = client.list_records()
        next(pages)
        repository.tokens.clear()  # the repository forgot the token (it expired)
        with pytest.raises(OaiPmhError, match=r"badResumptionToken.*start the harvest again") as raised:
            next(pages)
        assert raised.value.code == "badResumptionToken"

    for body in [b"<html><body>maintenance</body></html>", b"<html><body>", b"<ListRecords/>"]:
        with (
            serve(partial(_fixed, Reply(200, body))) as server,
            _client(server) as client,
            pytest.raises(OaiPmhError, match=r"not well-formed|expected <OAI-PMH>"),
        ):
            list(client.list_records())
    with (
        serve(lambda _r: Reply(404, b"nothing here")) as server,
        _client(server) as client,
        pytest.raises(OaiPmhError, match="HTTP 404"),
    ):
        list(client.list_records())


def test_flow_control_503_retry_after_is_waited_out(oai: LoopbackServer, repository: Repository) -> None:
    repository.throttle = {2}  # the first resumption request is told to come back in 1 s
    with _client(oai) as client:
        items = _flat(client.list_records())
    assert len(items) == 13
    at = [r.arrived for r in oai.requests]
    assert len(at) == 6 and at[2] - at[1] >= 1.0
    assert oai.requests[1].query == oai.requests[2].query  # the same token asked again

    repository.throttle = set(range(1, 100))
    with (
        _client(oai, Politeness(interval=0, retries=1, backoff=0.01, max_wait=0.5)) as client,
        pytest.raises(HttpError, match=r"retry after 1 s, longer than the 0\.5 s we wait"),
    ):
        list(client.list_records())


def test_a_bad_record_is_reported_and_the_rest_kept(repository: Repository) -> None:
    bad = repository.items[1]
    assert bad.metadata is not None
    bad.metadata = bad.metadata.replace("<id>0704.0002</id>", "<id>0704.02</id>")
    repository.items[2].metadata = "<arXiv xmlns='http://arxiv.org/OAI/arXiv/'><id>0704.0003</id></arXiv>"
    with serve(repository) as server, _client(server) as client:
        items = _flat(client.list_records())
    errors = [i for i in items if isinstance(i, RecordError)]
    assert len(items) == 13 and len(errors) == 2
    reasons = sorted(e.reason for e in errors)
    assert reasons[0].startswith("oai:arXiv.org:0704.0002: not an arXiv id: '0704.02'")
    assert reasons[1] == "oai:arXiv.org:0704.0003: no authors"
    assert all(e.source.startswith("OAI-PMH http://127.0.0.1:") and e.line >= 1 for e in errors)


def test_parse_rejects_what_is_not_oai_pmh() -> None:
    with pytest.raises(OaiPmhError, match="no valid <responseDate>"):
        parse_list_records(f'<OAI-PMH xmlns="{OAI_NS}"><ListRecords/></OAI-PMH>')
    with pytest.raises(OaiPmhError, match="neither <ListRecords> nor <error>"):
        parse_list_records(
            f'<OAI-PMH xmlns="{OAI_NS}"><responseDate>2026-01-01T00:00:00Z</responseDate></OAI-PMH>'
        )


# -- incremental harvests into the catalogue ------------------------------------------------------


def test_incremental_harvest_continues_where_the_last_one_ended(
    engine: Engine,
    repository: Repository,
    oai: LoopbackServer,
    snapshot: list[dict[str, object]],
    tmp_path: Path,
) -> None:
    state = HarvestState(tmp_path / "state.json")
    with _client(oai) as client:
        first = Harvest(client, state)
        assert first.from_ is None
        summary = Importer(engine, source="oai-pmh", batch_size=4).run(first.records())
        assert (summary.added, summary.failed) == (12, 0)
        assert [d.arxiv_id for d in first.deleted] == ["0704.0013"]
        assert first.remember() == dt.date(2026, 11, 30)

        # A day later the repository has one new paper and one corrected record.
        repository.now = dt.datetime(2026, 12, 1, 4, 0, tzinfo=dt.UTC)
        corrected = dict(snapshot[3], doi="10.1000/corrected", update_date="2026-11-30")
        repository.items[3] = Item("0704.0004", dt.date(2026, 11, 30), ["math"], arxiv_metadata(corrected))
        newcomer = dict(
            snapshot[0], id="0704.0014", title="A newly announced paper", update_date="2026-12-01"
        )
        repository.items.append(
            Item("0704.0014", dt.date(2026, 12, 1), ["physics:hep-ph"], arxiv_metadata(newcomer))
        )
        oai.requests.clear()

        second = Harvest(client, state)
        assert second.from_ == dt.date(2026, 11, 30)
        summary = Importer(engine, source="oai-pmh").run(second.records())
        assert (summary.added, summary.updated, summary.unchanged) == (1, 1, 0)
        assert oai.requests[0].query["from"] == "2026-11-30"
        assert second.remember() == dt.date(2026, 12, 1)

    with Session(engine) as s:
        assert (
            s.execute(select(Paper.doi).where(Paper.arxiv_id == "0704.0004")).scalar_one()
            == "10.1000/corrected"
        )
        first_paper = s.execute(select(Paper).where(Paper.arxiv_id == "0704.0001")).scalar_one()
        assert (first_paper.published_on, first_paper.latest_version) == (dt.date(2007, 4, 2), 1)
        raws = s.execute(
            select(Affiliation.raw, Affiliation.source).where(Affiliation.paper_id == first_paper.id)
        ).all()
        assert sorted(tuple(r) for r in raws) == [("Argonne National Laboratory", "oai-pmh")] * 3 + [
            ("Michigan State University", "oai-pmh")
        ]


def test_a_harvest_that_fails_leaves_its_state(
    repository: Repository, oai: LoopbackServer, tmp_path: Path
) -> None:
    state = HarvestState(tmp_path / "state.json")
    state.remember(HarvestState.key(oai.url + "/oai", None), dt.date(2007, 1, 1), records=0)
    repository.throttle = set(range(3, 100))  # fails from the second page on
    with _client(oai, Politeness(interval=0, retries=1, backoff=0.01, max_wait=5)) as client:
        harvest = Harvest(client, state)
        with pytest.raises(HttpError):
            list(harvest.records())
        with pytest.raises(Exception, match="did not finish"):
            harvest.remember()
    assert state.next_from(harvest.key) == dt.date(2007, 1, 1)

    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(Exception, match="cannot read the harvest state"):
        HarvestState(tmp_path / "broken.json").next_from("x")


# -- the command ----------------------------------------------------------------------------------


@pytest.fixture
def oai_env(oai: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> LoopbackServer:
    monkeypatch.setenv("WOVEPAPER_ARXIV_OAI_PMH_URL", oai.url + "/oai")
    monkeypatch.setenv("WOVEPAPER_ARXIV_INTERVAL_SECONDS", "0")
    monkeypatch.setenv("WOVEPAPER_ARXIV_BACKOFF_SECONDS", "0.01")
    get_settings.cache_clear()
    return oai


def test_the_oai_command_harvests_and_continues(oai_env: LoopbackServer, repository: Repository) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["oai"])
    assert result.exit_code == 0, result.output
    assert "from the beginning" in result.output
    assert "12 added, 0 updated, 0 unchanged, 0 failed" in result.output
    assert "1 record(s) deleted upstream, left in the catalogue: 0704.0013" in result.output
    assert "continues from 2026-11-30" in result.output
    state = json.loads((get_settings().core.data_dir / "harvest-state.json").read_text())
    assert [v["next_from"] for v in state.values()] == ["2026-11-30"]

    oai_env.requests.clear()
    result = runner.invoke(cli, ["oai"])
    assert result.exit_code == 0, result.output
    assert oai_env.requests[0].query["from"] == "2026-11-30"
    assert "0 added, 0 updated, 0 unchanged, 0 failed" in result.output

    result = runner.invoke(cli, ["oai", "--from", "2007-01-01", "--until", "2009-12-31", "--set", "math"])
    assert result.exit_code == 0, result.output
    assert "unchanged, 0 failed" in result.output and "continues from 2009-12-31" in result.output
    assert len(json.loads((get_settings().core.data_dir / "harvest-state.json").read_text())) == 2


def test_the_oai_command_reports_errors(oai_env: LoopbackServer, repository: Repository) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["oai", "--from", "2009-13-01"])
    assert result.exit_code == 2 and "2009-13-01" in result.output

    repository.formats = ("oai_dc",)
    result = runner.invoke(cli, ["oai"])
    assert result.exit_code == 1
    assert "harvest stopped" in result.output and "cannotDisseminateFormat" in result.output
    assert not (get_settings().core.data_dir / "harvest-state.json").exists()
