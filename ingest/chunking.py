"""Papers to retrieval chunks: chunk 0 is title + abstract, the rest is the parsed full text cut
into token-bounded chunks of whole sentences, each with its page range and section.

Tokens are counted with tiktoken's ``cl100k_base``, read offline from the copy llama-index-core
ships (tiktoken would otherwise download it). A chunk holds at most ``chunk_tokens`` tokens and
starts with up to ``chunk_overlap_tokens`` tokens of whole sentences from the end of the previous
chunk, so a sentence cut by a chunk border is whole in one of them. A sentence longer than a chunk
is cut at token boundaries. A body chunk carries its context (``chunk_context``: the paper title
and its section heading, optionally the abstract's first sentence), which is embedded and indexed
with it but is not part of its text. Ids are deterministic (``<id>v<version>#<n>``): parsing the same PDF
with the same settings and parser version gives the same chunks, so re-indexing is an upsert.
A change to how chunks are cut must bump ``ingest.pdf.sandbox.ALGORITHM`` (the parser version
names the index).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.text import scrub
from retrieval.tokens import encoding
from retrieval.types import Chunk

if TYPE_CHECKING:
    from ingest.pdf import ParsedPdf
    from settings import ChunkSettings

METADATA_PARSER = "metadata"
# A sentence ends at . ! ? (optionally closed by a quote or bracket) followed by a space and what
# can start a sentence, but not after the abbreviations papers use before names and numbers. A
# wrong split only moves a chunk border; nothing is lost either way.
_ABBREVIATIONS = ("Fig.", "Figs.", "Eq.", "Eqs.", "Sec.", "Tab.", "Ref.", "Refs.", "No.", "al.", "cf.", "vs.")
_SENTENCE_END = re.compile(
    "".join(f"(?<!{re.escape(a)})" for a in _ABBREVIATIONS)
    + r"(?:(?<=[.!?])|(?<=[.!?][\"'”’)\]]))\s+(?=[A-Z0-9\"'“‘(\[])"
)


@dataclass(frozen=True, slots=True)
class _Unit:
    """A sentence (or a piece of an over-long one) with where it came from."""

    text: str
    tokens: int  # counted with the separator that precedes it in a chunk
    page: int
    section: str | None
    paragraph_start: bool
    heading: bool = False


def _sentences(paragraph: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(paragraph) if s.strip()]


def _units(parsed: ParsedPdf, limit: int) -> list[_Unit]:
    enc = encoding()
    units: list[_Unit] = []
    section: str | None = None
    for page in parsed.pages:
        headings = dict(page.headings)
        start = 0
        for paragraph in page.text.split("\n\n"):
            is_heading = start in headings
            if is_heading:
                section = scrub(headings[start])
            start += len(paragraph) + 2
            first = True
            for sentence in [paragraph] if is_heading else _sentences(paragraph):
                separator = "\n" if first else " "
                tokens = enc.encode(separator + sentence, disallowed_special=())
                if len(tokens) <= limit:
                    units.append(_Unit(sentence, len(tokens), page.number, section, first, is_heading))
                else:  # a table row or a reference list without full stops: cut by tokens
                    for i in range(0, len(tokens), limit):
                        piece = enc.decode(tokens[i : i + limit]).strip()
                        if piece:
                            units.append(
                                _Unit(piece, min(limit, len(tokens) - i), page.number, section, first)
                            )
                            first = False
                first = False
    return units


def _text(units: list[_Unit]) -> str:
    out = ""
    for unit in units:
        if out:
            out += "\n" if unit.paragraph_start else " "
        out += unit.text
    return out


def _body_chunks(parsed: ParsedPdf, settings: ChunkSettings) -> list[tuple[list[_Unit], _Unit]]:
    """Greedy packing of sentence units; each chunk repeats the tail of the previous one, and a
    heading never ends a chunk (it moves on with its section). Returns each chunk's units and its
    first new unit (which gives the chunk its section)."""
    # Room for the separator drift of re-joined units (a unit counted with "\n" may start a chunk).
    limit = settings.chunk_tokens - 2
    units = _units(parsed, limit)
    chunks: list[tuple[list[_Unit], _Unit]] = []
    current: list[_Unit] = []
    size = 0
    fresh = 0  # units in ``current`` that are not overlap from the previous chunk
    for unit in units:
        if current and fresh and size + unit.tokens > limit:
            headings: list[_Unit] = []
            while fresh > 1 and current[-1].heading:
                headings.insert(0, current.pop())
                fresh -= 1
            chunks.append((current, current[-fresh]))
            overlap: list[_Unit] = []
            carried = 0
            for previous in reversed(current):
                if carried + previous.tokens > settings.chunk_overlap_tokens:
                    break
                overlap.insert(0, previous)
                carried += previous.tokens
            carried += sum(h.tokens for h in headings)
            while overlap and carried + unit.tokens > limit:
                carried -= overlap.pop(0).tokens
            current, size, fresh = overlap + headings, carried, len(headings)
        current.append(unit)
        size += unit.tokens
        fresh += 1
    if fresh:
        chunks.append((current, current[-fresh]))
    return chunks


def chunk_paper(
    *,
    arxiv_id: str,
    version: int | None,
    title: str,
    abstract: str,
    parsed: ParsedPdf | None,
    settings: ChunkSettings,
) -> list[Chunk]:
    """All chunks of one paper version. Chunk 0 is title + abstract (from the catalogue, or from
    the PDF's own front matter when none is given); chunks 1… are the full text, if parsed."""
    if parsed is not None and parsed.metadata is not None:
        title = title or parsed.metadata.title or ""
        abstract = abstract or parsed.metadata.abstract or ""
    parser_version = parsed.parser_version if parsed is not None else ""
    chunks: list[Chunk] = []
    title = " ".join(scrub(title).split())
    head = "\n\n".join(part for part in (title, scrub(abstract).strip()) if part)
    if head:
        chunks.append(
            Chunk(
                arxiv_id, version, 0, head, "abstract", parser=METADATA_PARSER, parser_version=parser_version
            )
        )
    if parsed is None:
        return chunks
    lead = ""
    if settings.chunk_context == "title_section_abstract":
        lead = next(iter(_sentences(" ".join(scrub(abstract).split()))), "")
    for n, (units, first_new) in enumerate(_body_chunks(parsed, settings), start=1):
        context = (
            ""
            if settings.chunk_context == "none"
            else "\n".join(part for part in (title, lead, first_new.section or "") if part)
        )
        chunks.append(
            Chunk(
                arxiv_id=arxiv_id,
                version=version,
                n=n,
                text=scrub(_text(units)),
                kind="body",
                page_start=min(u.page for u in units),
                page_end=max(u.page for u in units),
                section=first_new.section,
                parser=parsed.parser,
                parser_version=parsed.parser_version,
                context=context,
            )
        )
    return chunks
