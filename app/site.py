"""What the site says about itself: its name, description, public address and contact."""

from __future__ import annotations

from dataclasses import dataclass

from settings import Settings

NAME = "wovepaper"
TAGLINE = "Papers, researchers and institutions, woven together."
DESCRIPTION = (
    "Browse and search arXiv papers, their researchers and institutions. Free browsing and semantic "
    "search; every page also answers in markdown for agents."
)


@dataclass(frozen=True, slots=True)
class Site:
    public_url: str  # absolute, no trailing slash
    contact_email: str | None
    name: str = NAME
    tagline: str = TAGLINE
    description: str = DESCRIPTION

    @classmethod
    def from_settings(cls, settings: Settings) -> Site:
        return cls(public_url=settings.public_url, contact_email=settings.pages.contact_email or None)

    def url(self, path: str) -> str:
        """The absolute URL of a site path (``/papers/…`` → ``https://host/papers/…``)."""
        return self.public_url + (path if path.startswith("/") else "/" + path)
