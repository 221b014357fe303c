"""Metadata sources: each turns one input format into PaperRecord / RecordError values."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ingest.records import BadRecord, PaperRecord, RecordError, read_jsonl_lines


class HarvestError(RuntimeError):
    """A harvest could not go on; the message says which request and why. (A request that failed
    after its retries raises :class:`ingest.http.HttpError`.)"""


@contextmanager
def open_text(path: Path) -> Iterator[IO[str]]:
    """Open plain or gzipped text; undecodable bytes survive as surrogates that cleaning removes."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape") as handle:
            yield handle
    else:
        with path.open(encoding="utf-8", errors="surrogateescape") as handle:
            yield handle


Reader = Callable[[Path], Iterator[PaperRecord | RecordError]]


def jsonl_reader(parse: Callable[[dict[str, object]], PaperRecord]) -> Reader:
    """A JSON-lines source is its ``parse``: the reader of its files (plain or gzipped) yields their
    records, and a bad line as a RecordError naming it."""

    def read(path: Path) -> Iterator[PaperRecord | RecordError]:
        with open_text(path) as handle:
            for number, value in read_jsonl_lines(handle, path.name):
                if isinstance(value, RecordError):
                    yield value
                    continue
                try:
                    yield parse(value)
                except BadRecord as exc:
                    yield RecordError(path.name, number, str(exc))

    return read


def text_or_none(value: object) -> str | None:
    """A JSON record's optional text field: the string, or None when it is missing, blank or not text."""
    return value if isinstance(value, str) and value.strip() else None
