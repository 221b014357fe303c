"""Catalogue row ids as they arrive in addresses (``/researchers/42-name``, ``/institutions/7``,
``/api/researchers/42``): the one parser every route uses.

Only ASCII digits count (``str.isdigit`` is also true for ``²`` and ``٤``, which ``int`` refuses or
reads as 4), and only values every backend can hold: ids are ``INTEGER`` columns, 4 bytes on
PostgreSQL, so a larger number names no row — asking the database anyway would overflow the query
(an ``OverflowError`` on SQLite, a ``DataError`` on PostgreSQL). Callers answer None with a 404.
"""

from __future__ import annotations

import re

MAX_ROW_ID = 2**31 - 1
_DIGITS = re.compile(r"[0-9]+", re.ASCII)


def parse_row_id(text: str) -> int | None:
    """``"42"`` → 42; None for anything that cannot be a row id (signs, spaces, other digits, 0,
    numbers beyond the column range)."""
    # The length check first: ``int`` refuses strings over 4,300 digits (and is slow near them).
    if not _DIGITS.fullmatch(text) or len(text.lstrip("0")) > len(str(MAX_ROW_ID)):
        return None
    value = int(text)
    return value if 1 <= value <= MAX_ROW_ID else None


def looks_like_row_id(text: str) -> bool:
    """Whether ``text`` is written as a number (ASCII digits), whatever its range: such an address
    means an id, never a name."""
    return bool(_DIGITS.fullmatch(text))
