"""The evals' JSON-lines files (gold files, BEIR corpora and queries): one record a line, whose
errors name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class Rejected(Exception):
    """A record that parses but breaks a rule of its file (an empty question); the message says which."""


def load(
    path: Path, parse: Callable[[Any, int], T], *, expected: str, error: type[ValueError], noun: str
) -> list[T]:
    """``parse(value, number)`` of each non-blank line's JSON value. A line that is not JSON, or that
    ``parse`` cannot read (KeyError, TypeError, ValueError), raises ``error``: ``<path>:<line>:
    expected <expected>: <why>``; one it rejects, ``<path>:<line>: <why>``; no line, ``<path> has
    no <noun>``."""
    found = []
    # The file's own lines (str.splitlines would also break at U+2028 or U+0085, which JSON strings
    # may hold unescaped), read as they come: a BEIR corpus is large.
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                found.append(parse(json.loads(line), number))
            except Rejected as exc:
                raise error(f"{path}:{number}: {exc}") from None
            except (KeyError, TypeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
                raise error(f"{path}:{number}: expected {expected}: {exc}") from exc
    if not found:
        raise error(f"{path} has no {noun}")
    return found
