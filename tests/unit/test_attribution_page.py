"""The page on how papers are attributed to researchers tells how to report a mistake only where the
installation publishes an address to report it to."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.rendering import environments
from app.site import Site

TEMPLATES = Path(__file__).resolve().parents[2] / "app" / "templates"


@pytest.mark.parametrize("contact", [None, "curators@example.org"])
def test_reporting_is_offered_only_with_a_contact_address(contact: str | None) -> None:
    _html, markdown = environments(TEMPLATES, Site("https://wovepaper.test", contact))
    text = markdown.get_template("content/about/researchers.md").render()
    assert text.startswith("# How papers are attributed to researchers")
    assert ("## Reporting a mistake" in text) == (contact is not None)
    assert (f"mailto:{contact}" in text) == (contact is not None)
