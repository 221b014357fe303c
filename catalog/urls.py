"""Addresses of the catalogue's pages: the one home of slugs and the paths of papers, researchers and
institutions (the pages, the JSON API, markdown, sitemaps and chat's citations all link with these).

A path is ``/<kind>/<id>-<slug>``; the slug is only for people reading it, so a stale one costs a 301
to the canonical address, never a 404. Reading an address back starts here too: :func:`paper_ident`
and :func:`row_ident` take the id part off the last segment.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from catalog.text import human_text, transliterate

_SLUG = re.compile(r"[^a-z0-9]+")
# The id part of ``/papers/<id>-<slug>``; anything after the first hyphen that follows it is a slug.
_NEW_STYLE = re.compile(r"(?P<id>\d{4}\.\d{4,5}(?:v\d+)?)(?:-(?P<slug>.*))?", re.ASCII | re.DOTALL)
_OLD_STYLE = re.compile(
    r"(?P<id>[A-Za-z]+(?:-[A-Za-z]+)?(?:\.[A-Za-z-]+)?/\d{7}(?:v\d+)?)(?:-(?P<slug>.*))?",
    re.ASCII | re.DOTALL,
)


def slugify(text: str, limit: int = 80) -> str:
    """``"Adam: A Method for Stochastic Optimization"`` → ``"adam-a-method-for-stochastic-optimization"``.

    Letters are transliterated, not dropped ("Łukasz" → "lukasz", "Zürich" → "zurich"); a stale slug
    only costs a 301 to the canonical URL."""
    slug = _SLUG.sub("-", transliterate(text).lower()).strip("-")
    return slug[:limit].rstrip("-") or "untitled"


def paper_path(arxiv_id: str, title: str, version: int | None = None) -> str:
    shown = arxiv_id if version is None else f"{arxiv_id}v{version}"
    return f"/papers/{shown}-{slugify(title)}"


# The longest quote the page reader looks for on a page (a sentence or two); longer ones are cut
# at a word boundary, so the highlight marks their start.
READER_QUOTE_CHARS = 500


def reader_quote(quote: str) -> str:
    """``quote`` as the page reader searches for it: one line of visible text (no control or format
    characters, no lone surrogates), at most READER_QUOTE_CHARS."""
    text = human_text(quote)
    if len(text) <= READER_QUOTE_CHARS:
        return text
    return text[: READER_QUOTE_CHARS + 1].rsplit(" ", 1)[0][:READER_QUOTE_CHARS]


def reader_path(arxiv_id: str, page: int, quote: str | None = None) -> str:
    """Our page reader at 1-based ``page`` of the paper's PDF, highlighting ``quote`` there."""
    path = f"/papers/{arxiv_id}/pages/{page}"
    text = reader_quote(quote or "")
    return f"{path}?{urlencode({'quote': text})}" if text else path


def researcher_path(researcher_id: int, name: str) -> str:
    return f"/researchers/{researcher_id}-{slugify(name)}"


def institution_path(institution_id: int, name: str) -> str:
    return f"/institutions/{institution_id}-{slugify(name)}"


def paper_ident(ident: str) -> str:
    """The arXiv id written at the start of a paper address's ``<id>-<slug>`` (``"2401.01234v2-a-title"``
    → ``"2401.01234v2"``, ``"hep-th/9901001-x"`` → ``"hep-th/9901001"``); ``ident`` itself when it
    starts with no id, for the id parser to say what is wrong with it."""
    match = _NEW_STYLE.fullmatch(ident) or _OLD_STYLE.fullmatch(ident)
    return match["id"] if match else ident


def row_ident(ident: str) -> str:
    """The id part of a researcher's or institution's ``<id>-<name>`` (``"42-ada-lovelace"`` → ``"42"``),
    still to be parsed (:mod:`catalog.row_ids`): a name with no id comes back up to its first hyphen."""
    return ident.partition("-")[0]
