"""Write institutions into the catalogue: ROR records (dump or API) and OpenAlex institution refs.

ROR is the authority for an institution's descriptive fields; a record is matched on its ROR id, so
importing the same dump again changes nothing and a newer dump updates rows in place (same internal
id, so institution pages keep their URLs). Every name, label, alias and acronym is also stored as an
``InstitutionName`` key (``catalog.institutions.institution_key``) for lookups.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import islice
from typing import Any, cast

from sqlalchemy import JSON, Connection, Engine, Table, delete, func, insert, select, text, update

from catalog.institutions import KIND_RANK, name_variants
from catalog.models import Institution, InstitutionName
from ingest.enrich.ror import RorRecord
from ingest.importer import Summary
from ingest.records import RecordError

INSTITUTIONS = cast(Table, Institution.__table__)
NAMES = cast(Table, InstitutionName.__table__)
_COMPARED = (
    "name",
    "aliases",
    "acronyms",
    "types",
    "country_code",
    "country_name",
    "city",
    "website",
    "links",
    "status",
    "established",
)


def institution_row(record: RorRecord) -> dict[str, Any]:
    """The ``institutions`` columns ROR decides (``openalex_id`` is OpenAlex's and never touched)."""
    return {
        "ror_id": record.ror_id,
        "name": record.name,
        "aliases": [*record.aliases, *record.labels],
        "acronyms": list(record.acronyms),
        "types": list(record.types),
        "country_code": record.country_code,
        "country_name": record.country_name,
        "city": record.city,
        "website": record.website,
        "links": record.links,
        "status": record.status,
        "established": record.established,
    }


def name_rows(institution_id: int, names: Iterable[tuple[str, str]]) -> list[dict[str, object]]:
    """One ``institution_names`` row per distinct key; a key that is both a name and an alias keeps
    the stronger kind (name > label > alias > acronym)."""
    kinds: dict[str, str] = {}
    for name, kind in names:
        for key in name_variants(name):
            held = kinds.get(key)
            if held is None or KIND_RANK[kind] < KIND_RANK[held]:
                kinds[key] = kind
    return [{"institution_id": institution_id, "name_key": k, "kind": kind} for k, kind in kinds.items()]


def import_ror(
    engine: Engine,
    items: Iterable[RorRecord | RecordError],
    *,
    batch_size: int = 2000,
    on_progress: Callable[[int], None] | None = None,
) -> Summary:
    """Import ROR records in batches, one short write transaction each; idempotent."""
    summary = Summary()
    iterator = iter(items)
    while batch := list(islice(iterator, batch_size)):
        records: dict[str, RorRecord] = {}
        for item in batch:
            if isinstance(item, RecordError):
                summary.failed += 1
                summary.errors.append(item)
            else:
                if item.ror_id in records:
                    summary.unchanged += 1  # a duplicate line: the later one wins
                records[item.ror_id] = item
        with engine.connect().execution_options(sqlite_begin="IMMEDIATE") as conn, conn.begin():
            summary.merge(write_records(conn, list(records.values())))
        if on_progress:
            on_progress(len(batch))
    return summary


def write_records(conn: Connection, records: Sequence[RorRecord]) -> Summary:
    """Insert new records, update changed ones (names rebuilt), leave equal ones alone."""
    summary = Summary()
    if not records:
        return summary
    stored: dict[str, Any] = {}  # ror id → the stored row (a RowMapping)
    ids = [r.ror_id for r in records]
    for start in range(0, len(ids), 500):
        for found in conn.execute(
            select(Institution.__table__).where(Institution.ror_id.in_(ids[start : start + 500]))
        ).mappings():
            stored[found["ror_id"]] = found
    new = [r for r in records if r.ror_id not in stored]
    changed: list[tuple[int, RorRecord]] = []
    for record in records:
        row = stored.get(record.ror_id)
        if row is None:
            continue
        wanted = institution_row(record)
        if any(row[c] != wanted[c] for c in _COMPARED):
            changed.append((row["id"], record))
        else:
            summary.unchanged += 1
    if new:
        new_ids = _allocate_ids(conn, len(new))
        now = dt.datetime.now(dt.UTC)
        rows = [{"id": i, **institution_row(r), "created_at": now} for i, r in zip(new_ids, new, strict=True)]
        _insert_rows(conn, INSTITUTIONS, rows)
        _insert_names(conn, list(zip(new_ids, new, strict=True)))
        summary.added += len(new)
    if changed:
        for iid, record in changed:
            conn.execute(update(Institution).where(Institution.id == iid).values(**institution_row(record)))
        changed_ids = [iid for iid, _ in changed]
        for start in range(0, len(changed_ids), 500):
            conn.execute(
                delete(InstitutionName).where(
                    InstitutionName.institution_id.in_(changed_ids[start : start + 500])
                )
            )
        _insert_names(conn, changed)
        summary.updated += len(changed)
    summary.changed_ids = [r.ror_id for r in new] + [r.ror_id for _, r in changed]
    return summary


def _insert_names(conn: Connection, institutions: Sequence[tuple[int, RorRecord]]) -> None:
    rows = [row for iid, record in institutions for row in name_rows(iid, record.names())]
    _insert_rows(conn, NAMES, rows)


# -- bulk writes: ids drawn up front and one driver-level executemany, several times faster than
# INSERT … RETURNING on PostgreSQL for the 13.5k records and 43k names of a ROR dump ----------------


def _allocate_ids(conn: Connection, count: int) -> list[int]:
    """Reserve ``count`` institution ids: PostgreSQL from the table's sequence; SQLite after the
    largest id (safe: the import transaction began IMMEDIATE, so it holds the write lock)."""
    if conn.dialect.name == "postgresql":
        query = text(
            "SELECT nextval(pg_get_serial_sequence('institutions', 'id')) FROM generate_series(1, :n)"
        )
        return list(conn.execute(query, {"n": count}).scalars())
    start = conn.execute(select(func.coalesce(func.max(Institution.id), 0))).scalar_one()
    return list(range(start + 1, start + 1 + count))


def _insert_rows(conn: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """executemany through the driver, each value passed through its column's bind processor (JSON
    on PostgreSQL as text: psycopg casts it; it does not adapt dicts and lists itself)."""
    if not rows:
        return
    columns = list(rows[0])
    processors: dict[str, Callable[[Any], Any]] = {}
    for name in columns:
        column_type = table.c[name].type
        processor = column_type.bind_processor(conn.dialect)
        if processor is not None:
            processors[name] = processor
        elif isinstance(column_type, JSON):
            processors[name] = partial(json.dumps, ensure_ascii=False)
    params = [
        {k: (processors[k](v) if v is not None and k in processors else v) for k, v in row.items()}
        for row in rows
    ]
    mark = ":{}" if conn.dialect.name == "sqlite" else "%({})s"
    sql = "INSERT INTO {} ({}) VALUES ({})".format(  # noqa: S608 - names come from our own models
        table.name, ", ".join(columns), ", ".join(mark.format(c) for c in columns)
    )
    conn.exec_driver_sql(sql, params)


# -- institutions OpenAlex names on works and author profiles ---------------------------------------


def ensure_institution(
    conn: Connection,
    *,
    ror_id: str | None,
    openalex_id: str | None,
    name: str,
    country_code: str | None = None,
    type_: str | None = None,
) -> int | None:
    """The internal id of an institution OpenAlex refers to, creating a minimal row when neither its
    ROR id nor its OpenAlex id is known yet (a later ROR import fills in the rest). Records the
    OpenAlex id on a ROR-imported row that lacks it."""
    row = None
    if ror_id:
        row = conn.execute(
            select(Institution.id, Institution.openalex_id).where(Institution.ror_id == ror_id)
        ).first()
    if row is None and openalex_id:
        row = conn.execute(
            select(Institution.id, Institution.openalex_id).where(Institution.openalex_id == openalex_id)
        ).first()
    if row is not None:
        if openalex_id and row.openalex_id is None:
            conn.execute(update(Institution).where(Institution.id == row.id).values(openalex_id=openalex_id))
        return int(row.id)
    if not name:
        return None
    iid = conn.execute(
        insert(Institution)
        .values(
            ror_id=ror_id,
            name=name,
            aliases=[],
            acronyms=[],
            types=[type_] if type_ else [],
            country_code=country_code,
            links={},
            status="active",
            openalex_id=openalex_id,
        )
        .returning(Institution.id)
    ).scalar_one()
    conn.execute(insert(InstitutionName), name_rows(iid, [(name, "name")]))
    return int(iid)
