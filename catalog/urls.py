"""Addresses of the catalogue's pages: the one home of slugs and the paths of papers, researchers and
institutions (the pages, the JSON API, markdown, sitemaps and chat's citations all link with these).

A path is ``/<kind>/<id>-<slug>``; the slug is only for people reading it, so a stale one costs a 301
to the canonical address, never a 404.
"""

from __future__ import annotations

import re

from catalog.text import transliterate

_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str, limit: int = 80) -> str:
    """``"Adam: A Method for Stochastic Optimization"`` → ``"adam-a-method-for-stochastic-optimization"``.

    Letters are transliterated, not dropped ("Łukasz" → "lukasz", "Zürich" → "zurich"); a stale slug
    only costs a 301 to the canonical URL."""
    slug = _SLUG.sub("-", transliterate(text).lower()).strip("-")
    return slug[:limit].rstrip("-") or "untitled"


def paper_path(arxiv_id: str, title: str, version: int | None = None) -> str:
    shown = arxiv_id if version is None else f"{arxiv_id}v{version}"
    return f"/papers/{shown}-{slugify(title)}"


def researcher_path(researcher_id: int, name: str) -> str:
    return f"/researchers/{researcher_id}-{slugify(name)}"


def institution_path(institution_id: int, name: str) -> str:
    return f"/institutions/{institution_id}-{slugify(name)}"
