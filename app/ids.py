"""One id type at the boundary: what a path or a JSON body may hold where the catalogue has an id.

An id is written in ASCII digits ("١" is not 1, "+1" and "1e3" are not ids) and lies between 1 and
the largest 64-bit integer, so nothing larger ever reaches the database (SQLite and PostgreSQL
raise on it). A bad id in a path is a page that is not there (404); in a body, a bad request (400).
"""

from __future__ import annotations

from litestar.exceptions import ClientException, NotFoundException

MAX_ID = 2**63 - 1
_DIGITS = frozenset("0123456789")


def parse_id(raw: object) -> int | None:
    """The id ``raw`` spells, or None when it is not one."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, str) and raw and len(raw) <= 19 and set(raw) <= _DIGITS:
        value = int(raw)
    else:
        return None
    return value if 1 <= value <= MAX_ID else None


def path_id(raw: str, what: str = "page") -> int:
    value = parse_id(raw)
    if value is None:
        raise NotFoundException(detail=f"There is no such {what}.")
    return value


def body_id(raw: object, field: str) -> int:
    value = parse_id(raw)
    if value is None:
        raise ClientException(detail=f"{field} must be a whole number from 1 to {MAX_ID}.")
    return value
