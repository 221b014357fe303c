"""Metadata sources: each turns one input format into PaperRecord / RecordError values."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def open_text(path: Path) -> Iterator[IO[str]]:
    """Open plain or gzipped text; undecodable bytes survive as surrogates that cleaning removes."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape") as handle:
            yield handle
    else:
        with path.open(encoding="utf-8", errors="surrogateescape") as handle:
            yield handle
