"""Which representation of a page a request gets: HTML (the default) or markdown.

The rule (PRODUCT.md, as opentelemetry.io serves it): only GET and HEAD negotiate; markdown when the
``Accept`` header gives ``text/markdown`` a q-value above 0 and at least as high as the best of
``text/html`` and ``application/xhtml+xml``; wildcards (``*/*``, ``text/*``) say nothing about which
one the client prefers and are ignored. A path ending in ``.md`` asks for markdown explicitly (the
outermost ASGI layer strips the suffix and records it in the scope, see :mod:`app.asgi`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

Format = Literal["html", "markdown"]

MARKDOWN = "text/markdown"
HTML_TYPES = ("text/html", "application/xhtml+xml")
NEGOTIATING_METHODS = frozenset({"GET", "HEAD"})
# Set in ``scope["state"]`` when the request path carried the ``.md`` suffix.
MD_SUFFIX_FLAG = "markdown_suffix"


def accept_qualities(header: str) -> dict[str, float]:
    """The q-value of each explicitly named media type (the best one when named twice).

    Ranges with a malformed or out-of-range q are ignored rather than guessed at."""
    found: dict[str, float] = {}
    for part in header.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        media = media.lower()
        if not media or "/" not in media:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = -1.0
        if not 0.0 <= q <= 1.0:
            continue
        found[media] = max(q, found.get(media, 0.0))
    return found


@lru_cache(maxsize=512)  # a handful of distinct Accept headers arrive again and again
def wants_markdown(method: str, accept: str | None) -> bool:
    if method.upper() not in NEGOTIATING_METHODS or not accept:
        return False
    qualities = accept_qualities(accept)
    markdown = qualities.get(MARKDOWN, 0.0)
    html = max(qualities.get(t, 0.0) for t in HTML_TYPES)
    return markdown > 0 and markdown >= html


def choose(method: str, accept: str | None, suffix: bool) -> Format:
    """The representation to send: the ``.md`` suffix wins, then the ``Accept`` header."""
    return "markdown" if suffix or wants_markdown(method, accept) else "html"


def is_json(content_type: str) -> bool:
    """``application/json`` or a ``+json`` type, parameters aside."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")
