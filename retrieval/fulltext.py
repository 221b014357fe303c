"""A paper's indexed full text read back from its chunks, with page numbers.

The PDF itself is parsed once, in the sandbox, by the worker; what survives is the chunks in the
vector store, each with its 1-based page range and section (see :mod:`ingest.chunking`). Consecutive
chunks share whole sentences (the overlap), so the text is rebuilt by dropping from each chunk the
prefix that ends the previous one. Sentences are not tagged with their page: a passage that crosses
a page break says so (``pages 3–4``) rather than guessing where the break fell.
"""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.store import ChunkStore, StoredChunk


@dataclass(frozen=True, slots=True)
class Passage:
    n: int  # the chunk's number within the paper (1 is the first body chunk)
    page_start: int
    page_end: int
    section: str | None
    text: str  # the chunk without the sentences it repeats from the previous one


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    page: int  # where it starts


def paper_passages(store: ChunkStore, arxiv_id: str) -> list[Passage]:
    """The full text of ``arxiv_id`` in reading order; empty when no PDF of it is indexed."""
    chunks = store.get(where={"$and": [{"arxiv_id": arxiv_id}, {"kind": "body"}]})
    passages: list[Passage] = []
    previous = ""
    for chunk in sorted(chunks, key=_number):
        start, end = _int(chunk.metadata.get("page_start")), _int(chunk.metadata.get("page_end"))
        if start is None:
            continue
        section = chunk.metadata.get("section")
        text = without_overlap(previous, chunk.text)
        previous = chunk.text
        if text:
            passages.append(
                Passage(_number(chunk), start, end or start, str(section) if section else None, text)
            )
    return passages


def outline(passages: list[Passage]) -> list[Section]:
    """The sections in reading order with the page each starts on (a heading seen once)."""
    seen: set[str] = set()
    sections = []
    for passage in passages:
        if passage.section and passage.section not in seen:
            seen.add(passage.section)
            sections.append(Section(passage.section, passage.page_start))
    return sections


def without_overlap(previous: str, current: str) -> str:
    """``current`` without its longest prefix of whole words that ``previous`` ends with."""
    limit = min(len(previous), len(current))
    for cut in range(limit, 0, -1):
        at_boundary = cut == len(current) or current[cut] in " \n"
        if (
            at_boundary
            and (cut == len(previous) or previous[-cut - 1] in " \n")
            and previous.endswith(current[:cut])
        ):
            return current[cut:].lstrip(" \n")
    return current


def _number(chunk: StoredChunk) -> int:
    return _int(chunk.metadata.get("n")) or 0


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
