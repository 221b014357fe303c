"""Query and path parameter types shared by the pages and the JSON API, and their checks."""

from __future__ import annotations

from typing import Annotated

from litestar.exceptions import ClientException
from litestar.params import Parameter, PathParameter

from catalog.papers import CATEGORY

Category = Annotated[
    str | None,
    Parameter(pattern=CATEGORY.pattern, max_length=64, description="An arXiv category, e.g. cs.LG"),
]
PageNumber = Annotated[int, Parameter(ge=1, le=100_000, description="1-based page number")]
ResearcherQuery = Annotated[str | None, Parameter(max_length=200, description="Part of a name, e.g. yang")]
InstitutionQuery = Annotated[
    str | None, Parameter(max_length=200, description="Part of a name, alias or acronym")
]

# A paper in an API path: ``/api/papers/<arxiv_id>`` or, for old-style ids, ``<archive>/<number>``.
ArxivId = Annotated[str, PathParameter(max_length=128, description="e.g. 1706.03762 or 1706.03762v5")]
Archive = Annotated[str, PathParameter(max_length=64, description="e.g. hep-th or math.GT")]
Number = Annotated[str, PathParameter(max_length=64, description="e.g. 9901001")]


def checked_category(category: str | None) -> str | None:
    """``category`` when it looks like an arXiv category; a 400 that says so otherwise."""
    if category is not None and not CATEGORY.fullmatch(category):
        raise ClientException(
            detail=f"{category!r} is not an arXiv category; they look like cs.LG or hep-th."
        )
    return category
