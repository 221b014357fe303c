"""The evals' gold files: JSON lines, one record a line, whose errors name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def records(
    path: Path, parse: Callable[[Any, int], T], *, expected: str, error: type[ValueError]
) -> Iterator[tuple[int, T]]:
    """Each non-blank line's number and ``parse(value, number)`` of its JSON value. A line that is
    not JSON, or that ``parse`` rejects (KeyError, TypeError, ValueError), raises ``error``:
    ``<path>:<line>: expected <expected>: <why>``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            found = parse(json.loads(line), number)
        except (KeyError, TypeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
            raise error(f"{path}:{number}: expected {expected}: {exc}") from exc
        yield number, found
