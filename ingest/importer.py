"""Write metadata records into the catalogue: streamed, batched, idempotent.

Per record the outcome is one of added / updated / unchanged / failed:
- a record whose content hash equals the stored one is unchanged (re-importing changes nothing);
- a record older than the stored version is unchanged (an old snapshot never overwrites a newer one);
- otherwise the stored paper is updated in place (same id); its authorships are rebuilt only when the
  author list itself changed, so researcher links and affiliations survive metadata-only updates.
"""

from __future__ import annotations

import datetime as dt
import gc
import logging
import queue
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar, cast

from sqlalchemy import Connection, Engine, Table, bindparam, delete, insert, select, text, update

from catalog.models import Affiliation, Authorship, Base, Paper, PaperCategory, PaperVersion, Researcher
from catalog.names import display_name
from ingest.records import PaperRecord, RecordError
from people.evidence import PaperEvidence, Profile, topic_text
from people.names import ParsedName
from people.resolver import ResearcherResolver
from people.writes import merge_in_catalogue, respell

log = logging.getLogger(__name__)
T = TypeVar("T")
_IN_CHUNK = 500
_VERSION_SUFFIX = re.compile(r"(v\d+)?")


def evidence_of(record: PaperRecord, names: Sequence[ParsedName | None]) -> PaperEvidence:
    """The evidence of one record whose authors parsed to ``names``; its year is the first version's."""
    years = [v.submitted_at.year for v in record.versions if v.submitted_at]
    year = min(years) if years else (record.announced_on.year if record.announced_on else None)
    return PaperEvidence.of(
        names, record.categories, record.journal_ref, year, topic_text(record.title, record.abstract)
    )


@dataclass
class Summary:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0
    errors: list[RecordError] = field(default_factory=list)
    changed_ids: list[str] = field(default_factory=list)  # canonical ids added or updated

    @property
    def seen(self) -> int:
        return self.added + self.updated + self.unchanged + self.failed

    def merge(self, other: Summary) -> None:
        self.added += other.added
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.failed += other.failed
        self.errors += other.errors
        self.changed_ids += other.changed_ids

    def __str__(self) -> str:
        return f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, {self.failed} failed"


class Importer:
    """Import records in batches of ``batch_size``, one short transaction per batch."""

    def __init__(
        self,
        engine: Engine,
        *,
        source: str,
        batch_size: int = 1000,
        on_progress: Callable[[int], None] | None = None,
        resolver: ResearcherResolver | None = None,
    ) -> None:
        self.engine = engine
        self.source = source
        self.batch_size = batch_size
        self.on_progress = on_progress or (lambda _n: None)
        self.resolver = resolver or ResearcherResolver()
        self.summary = Summary()  # what the current (or last) run has imported so far
        self._hashes: dict[str, str] = {}
        self._batch_started = _now()

    def run(self, items: Iterable[PaperRecord | RecordError]) -> Summary:
        """Import everything ``items`` yields. The source is read one batch ahead on a thread, so
        parsing overlaps the database's own work (which runs without the GIL). When the source
        fails part-way, the records it produced are still written before the error propagates, and
        :attr:`summary` tells the caller what was imported."""
        self.summary = summary = Summary()
        # A batch allocates ~50k tracked objects (profiles, evidence sets) that mostly live on:
        # collecting the youngest generation every 700 allocations rescans them for nothing.
        thresholds = gc.get_threshold()
        gc.set_threshold(max(thresholds[0], 20_000), *thresholds[1:])
        try:
            self._run(items, summary)
        finally:
            gc.set_threshold(*thresholds)
        return summary

    def _run(self, items: Iterable[PaperRecord | RecordError], summary: Summary) -> None:
        for batch in _read_ahead(_batches(items, self.batch_size)):
            records = [r for r in batch if isinstance(r, PaperRecord)]
            for error in (r for r in batch if isinstance(r, RecordError)):
                summary.failed += 1
                summary.errors.append(error)
                log.warning("skipped %s", error)
            with self.engine.connect().execution_options(sqlite_begin="IMMEDIATE") as conn, conn.begin():
                summary.merge(self._write(conn, records))
            self.resolver.forget_if_large()
            # The resolver's profiles live for the whole import: without this, every full
            # collection rescans all of them (~10 s of a 75k import's CPU).
            gc.freeze()
            self.on_progress(len(batch))

    # -- one batch ---------------------------------------------------------------------------

    def _write(self, conn: Connection, records: Sequence[PaperRecord]) -> Summary:
        self._batch_started = _now()
        summary = Summary()
        unique: dict[str, PaperRecord] = {}
        for record in records:  # within a batch the newest version of a paper wins
            held = unique.get(record.arxiv_id)
            if held is not None:
                summary.unchanged += 1
                if (record.latest_version or 0) < (held.latest_version or 0):
                    continue
            unique[record.arxiv_id] = record
        stored = {
            row.arxiv_id: row
            for ids in _chunks(list(unique))
            for row in conn.execute(
                select(Paper.id, Paper.arxiv_id, Paper.latest_version, Paper.content_hash).where(
                    Paper.arxiv_id.in_(ids)
                )
            )
        }
        new: list[PaperRecord] = []
        changed: list[tuple[int, PaperRecord]] = []
        self._hashes = {arxiv_id: record.content_hash() for arxiv_id, record in unique.items()}
        for arxiv_id, record in unique.items():
            row = stored.get(arxiv_id)
            hashed = self._hashes[arxiv_id]
            if row is None:
                new.append(record)
            elif row.content_hash == hashed or (record.latest_version or 0) < (row.latest_version or 0):
                summary.unchanged += 1
            else:
                changed.append((row.id, record))
        if new:
            ids = self._insert_papers(conn, new)
            self._write_children(conn, list(zip(ids, new, strict=True)), authors_changed=set(ids))
            summary.added += len(new)
        if changed:
            rebuilt = self._update_papers(conn, changed)
            self._write_children(conn, changed, authors_changed=rebuilt)
            summary.updated += len(changed)
        summary.changed_ids = [r.arxiv_id for r in new] + [r.arxiv_id for _, r in changed]
        return summary

    def _insert_papers(self, conn: Connection, records: list[PaperRecord]) -> list[int]:
        ids = _allocate_ids(conn, _table(Paper), len(records))
        rows = [self._paper_row(r) for r in records]
        _bulk_insert(
            conn,
            _table(Paper),
            ["id", *rows[0]],
            [(pid, *row.values()) for pid, row in zip(ids, rows, strict=True)],
        )
        return ids

    def _update_papers(self, conn: Connection, changed: list[tuple[int, PaperRecord]]) -> set[int]:
        """Update paper rows; return the ids whose author list changed (their authorships are rebuilt)."""
        rows = [{"pid": pid, **self._paper_row(r)} for pid, r in changed]
        for row in rows:
            row.pop("created_at", None)
        table = _table(Paper)
        conn.execute(update(table).where(table.c.id == bindparam("pid")), rows)
        ids = [pid for pid, _ in changed]
        written: dict[int, list[str]] = {pid: [] for pid in ids}
        for chunk in _chunks(ids):
            for pid, name in conn.execute(
                select(Authorship.paper_id, Authorship.name)
                .where(Authorship.paper_id.in_(chunk))
                .order_by(Authorship.paper_id, Authorship.position)
            ):
                written[pid].append(name)
        rebuilt = {pid for pid, record in changed if tuple(written[pid]) != record.authors}
        for chunk in _chunks(ids):
            conn.execute(delete(PaperCategory).where(PaperCategory.paper_id.in_(chunk)))
            conn.execute(delete(PaperVersion).where(PaperVersion.paper_id.in_(chunk)))
            conn.execute(
                delete(Affiliation).where(Affiliation.paper_id.in_(chunk), Affiliation.source == self.source)
            )
        for chunk in _chunks(sorted(rebuilt)):  # positions change: every source's affiliations go
            conn.execute(delete(Affiliation).where(Affiliation.paper_id.in_(chunk)))
            conn.execute(delete(Authorship).where(Authorship.paper_id.in_(chunk)))
        return rebuilt

    def _write_children(
        self, conn: Connection, papers: list[tuple[int, PaperRecord]], *, authors_changed: set[int]
    ) -> None:
        categories = [(pid, i, c) for pid, r in papers for i, c in enumerate(r.categories)]
        versions = [
            {"paper_id": pid, "version": v.number, "submitted_at": v.submitted_at, "size": v.size}
            for pid, r in papers
            for v in {v.number: v for v in r.versions}.values()
        ]
        affiliations = [
            (pid, i, raw, self.source)
            for pid, r in papers
            if r.affiliations
            for i, name in enumerate(r.authors)
            for raw in dict.fromkeys(r.affiliations.get(name, ()))
        ]
        _bulk_insert(conn, _table(PaperCategory), ["paper_id", "position", "category"], categories)
        if versions:
            conn.execute(insert(PaperVersion), versions)
        _bulk_insert(
            conn, _table(Affiliation), ["paper_id", "author_position", "raw", "source"], affiliations
        )
        self._write_authorships(conn, [(pid, r) for pid, r in papers if pid in authors_changed])

    def _write_authorships(self, conn: Connection, papers: list[tuple[int, PaperRecord]]) -> None:
        parse_all = self.resolver.parse_all
        parsed = [(pid, r, parse_all(r.authors)) for pid, r in papers]
        self.resolver.prefetch(conn, (n for _, _, names in parsed for n in names if n))
        resolved: list[tuple[int, PaperRecord, list[Profile | None]]] = [
            (pid, r, self.resolver.resolve_paper(r.authors, names, evidence_of(r, names), r.affiliations))
            for pid, r, names in parsed
        ]
        self.resolver.consolidate()
        # A profile merged before it was written is never written; one already in the catalogue is
        # merged there once the batch's rows are in.
        self._insert_researchers(conn, [p for p in self.resolver.new_profiles if p.merged_into is None])
        self.resolver.new_profiles = []
        merges = [(keep.current, gone) for keep, gone in self.resolver.merges if gone.id is not None]
        self.resolver.merges = []
        resolved = [(pid, r, [p.current if p else None for p in profiles]) for pid, r, profiles in resolved]
        # A spelling the researcher is not shown under ("Re" for "Ré") may change the display name.
        respell_later = {
            profile
            for _, r, profiles in resolved
            for name, profile in zip(r.authors, profiles, strict=True)
            if profile is not None and display_name(name) != profile.name
        }
        rows = [
            (pid, i, name, roles[i], "arxiv", profile.id if profile else None)
            for pid, r, profiles in resolved
            for roles in [_roles(len(r.authors))]
            for i, (name, profile) in enumerate(zip(r.authors, profiles, strict=True))
        ]
        columns = ["paper_id", "position", "name", "role", "role_source", "researcher_id"]
        _bulk_insert(conn, _table(Authorship), columns, rows)
        pairs = []
        for keep, gone in merges:  # both written by now: the survivor above, the merged one before
            assert keep.id is not None and gone.id is not None
            pairs.append((keep.id, gone.id))
        merge_in_catalogue(conn, pairs)
        respell_later.update(keep for keep, _ in merges)
        respell(conn, respell_later)

    @staticmethod
    def _insert_researchers(conn: Connection, profiles: list[Profile]) -> None:
        if not profiles:
            return
        now = _now()
        for profile, rid in zip(
            profiles, _allocate_ids(conn, _table(Researcher), len(profiles)), strict=True
        ):
            profile.id = rid
        _bulk_insert(
            conn,
            _table(Researcher),
            ["id", "display_name", "name_key", "block_key", "created_at"],
            [(p.id, p.name, p.key, p.block, now) for p in profiles],
        )

    def _paper_row(self, record: PaperRecord) -> dict[str, object]:
        dates = sorted(v.submitted_at.date() for v in record.versions if v.submitted_at)
        # "First version" only when v1 itself is known: a source listing only v5 must not make
        # v5's date look like the paper's first appearance.
        published = next(
            (v.submitted_at.date() for v in record.versions if v.number == 1 and v.submitted_at), None
        )
        updated = dates[-1] if dates else None
        known = [d for d in (updated, record.announced_on) if d]
        now = self._batch_started  # one timestamp per batch: converted once for the whole batch
        return {
            "arxiv_id": record.arxiv_id,
            "latest_version": record.latest_version,
            "title": record.title,
            "abstract": record.abstract,
            "primary_category": record.primary_category,
            "doi": record.doi,
            "journal_ref": record.journal_ref,
            "comments": record.comments,
            "report_no": record.report_no,
            "license": record.license,
            "submitter": record.submitter,
            "abs_url": _arxiv_url(record.abs_url, "abs", record.arxiv_id),
            "pdf_url": _arxiv_url(record.pdf_url, "pdf", record.arxiv_id),
            "published_on": published,
            "updated_on": updated,
            "announced_on": record.announced_on,
            "activity_on": max(known) if known else None,
            "source": self.source,
            "content_hash": self._hashes[record.arxiv_id],
            "created_at": now,
            "modified_at": now,
        }


class _SourceFailed:
    """Carries the source's exception across the read-ahead thread."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


_DONE = object()


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of ``size`` items; on a source error the items read so far come out first."""
    batch: list[T] = []
    try:
        for item in items:
            batch.append(item)
            if len(batch) >= size:
                yield batch
                batch = []
    except Exception:
        if batch:
            yield batch
        raise
    if batch:
        yield batch


def _read_ahead(batches: Iterator[list[T]], depth: int = 2) -> Iterator[list[T]]:
    """Produce ``batches`` on a daemon thread, at most ``depth`` ahead of the consumer; the
    producer's exception is re-raised in the consumer after the batches before it."""
    handoff: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
            except queue.Full:
                continue
            return True
        return False

    def produce() -> None:
        try:
            for batch in batches:
                if not put(batch):
                    return
        except BaseException as exc:  # handed to the consumer, which re-raises it
            put(_SourceFailed(exc))
            return
        put(_DONE)

    producer = threading.Thread(target=produce, name="import-read-ahead", daemon=True)
    producer.start()
    try:
        while (item := handoff.get()) is not _DONE:
            if isinstance(item, _SourceFailed):
                raise item.error
            yield cast(list[T], item)
    finally:
        stop.set()
        producer.join(timeout=1.0)


def _table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


def _bulk_insert(
    conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[Sequence[object]]
) -> None:
    """Rows straight to the driver (SQLite: executemany with positional parameters; PostgreSQL:
    COPY): the ORM's per-row parameter machinery (and a dict per row) costs more than the insert
    itself here. Each column's
    dialect bind processor is applied, so values are stored exactly as SQLAlchemy stores them
    elsewhere (SQLite datetimes as its text format); a value repeated from the previous row (the
    batch's timestamp) is processed once."""
    if not rows:
        return
    dialect = conn.dialect
    processors = [
        (i, processor)
        for i, name in enumerate(columns)
        if (processor := table.c[name].type.dialect_impl(dialect).bind_processor(dialect)) is not None
    ]
    if processors:
        processed = [list(row) for row in rows]
        for i, processor in processors:
            last_in: object = None
            last_out: object = None
            for row in processed:
                value = row[i]
                if value is None:
                    continue
                if value is not last_in:
                    last_in, last_out = value, processor(value)
                row[i] = last_out
        rows = [tuple(row) for row in processed]
    names = ", ".join(columns)  # names come from our own models
    if dialect.name == "postgresql":
        # COPY is PostgreSQL's bulk path: several times faster than executemany, same constraints.
        driver = conn.connection.driver_connection
        assert driver is not None
        with driver.cursor() as cursor, cursor.copy(f"COPY {table.name} ({names}) FROM STDIN") as copy:
            for values in rows:
                copy.write_row(values)
        return
    marks = ", ".join("?" * len(columns))
    conn.exec_driver_sql(f"INSERT INTO {table.name} ({names}) VALUES ({marks})", list(rows))  # noqa: S608


def _allocate_ids(conn: Connection, table: Table, count: int) -> list[int]:
    """Reserve ``count`` primary keys. PostgreSQL draws them from the table's sequence; SQLite
    continues after the largest id, which is safe because import transactions begin IMMEDIATE
    (they hold the write lock from their first statement; see catalog.db)."""
    if conn.dialect.name == "postgresql":
        return list(
            conn.execute(
                text("SELECT nextval(pg_get_serial_sequence(:t, 'id')) FROM generate_series(1, :n)"),
                {"t": table.name, "n": count},
            ).scalars()
        )
    start = conn.execute(text(f"SELECT coalesce(max(id), 0) FROM {table.name}")).scalar_one()  # noqa: S608
    return list(range(start + 1, start + 1 + count))


@lru_cache(maxsize=512)
def _roles(count: int) -> tuple[str, ...]:
    """The role of each position on a paper with ``count`` authors (a sole author is "first")."""
    return tuple("first" if i == 0 else "last" if i == count - 1 else "middle" for i in range(count))


def _arxiv_url(given: str | None, kind: str, arxiv_id: str) -> str:
    """The source's URL when it is an https arxiv.org one for this paper, else the canonical one."""
    canonical = f"https://arxiv.org/{kind}/{arxiv_id}"
    if given and given.startswith(canonical) and _VERSION_SUFFIX.fullmatch(given[len(canonical) :]):
        return given
    return canonical


def _chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), _IN_CHUNK):
        yield items[start : start + _IN_CHUNK]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
