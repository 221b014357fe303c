"""A page of a list (papers, researchers, institutions) and the name match the lists' search uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from catalog.names import fold

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    page: int
    size: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))

    @property
    def has_next(self) -> bool:
        return self.page < self.pages

    @property
    def has_previous(self) -> bool:
        return self.page > 1


def like_pattern(query: str) -> str | None:
    """A LIKE pattern for a folded name fragment (fold removes ``%`` and ``_``), or None if empty."""
    key = fold(query)
    return f"%{key}%" if key else None
