"""Typed values shared by ingestion (which makes them) and retrieval (which searches them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ChunkKind = Literal["abstract", "body"]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A passage with its provenance. ``id`` is deterministic: ``<arxiv_id>v<version>#<n>``, where
    ``n`` 0 is the title + abstract chunk and an unknown version is written ``v0``."""

    arxiv_id: str
    version: int | None
    n: int
    text: str
    kind: ChunkKind
    page_start: int | None = None  # 1-based; None for the metadata abstract chunk
    page_end: int | None = None
    section: str | None = None
    parser: str = "metadata"
    parser_version: str = ""
    # What the chunk is about, said once: prepended to ``text`` for embedding and BM25 (never shown,
    # never stored as the chunk's text), e.g. the paper's title and the section heading.
    context: str = ""

    @property
    def id(self) -> str:
        return chunk_id(self.arxiv_id, self.version, self.n)

    @property
    def indexed_text(self) -> str:
        """The text the embedder and the lexical index see."""
        return f"{self.context}\n{self.text}" if self.context else self.text


def chunk_id(arxiv_id: str, version: int | None, n: int) -> str:
    return f"{arxiv_id}v{version or 0}#{n}"


def parse_chunk_id(value: str) -> tuple[str, int, int]:
    """``(arxiv_id, version, n)`` of a chunk id; ``ValueError`` when it is not one."""
    head, hash_mark, n = value.rpartition("#")
    arxiv_id, v, version = head.rpartition("v")
    if not (hash_mark and v and arxiv_id and version.isdigit() and n.isdigit()):
        raise ValueError(f"not a chunk id: {value!r}")
    return arxiv_id, int(version), int(n)
