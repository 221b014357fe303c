"""One id type at the boundary: what a path or a JSON body may hold where the catalogue has an id
(:mod:`catalog.row_ids`: ASCII digits, 1 to the largest id a column holds). A bad id in a path is a
page that is not there (404); in a body, a bad request (400). Nothing larger than a column holds ever
reaches the database (SQLite and PostgreSQL raise on it).
"""

from __future__ import annotations

from litestar.exceptions import ClientException, NotFoundException

from catalog.row_ids import MAX_ROW_ID, parse_row_id

MAX_ID = MAX_ROW_ID


def parse_id(raw: object) -> int | None:
    """The id ``raw`` is (a JSON number) or spells (a path segment), or None when it is not one."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if 1 <= raw <= MAX_ROW_ID else None
    return parse_row_id(raw) if isinstance(raw, str) else None


def path_id(raw: str, what: str = "page") -> int:
    value = parse_row_id(raw)
    if value is None:
        raise NotFoundException(detail=f"There is no such {what}: ids are whole numbers from 1, e.g. 42.")
    return value


def body_id(raw: object, field: str) -> int:
    value = parse_id(raw)
    if value is None:
        raise ClientException(detail=f"{field} must be a whole number from 1 to {MAX_ROW_ID}.")
    return value
