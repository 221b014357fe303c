"""The researcher search and a researcher page's same-name table at phone width (390 px) in a real
browser: the table of namesakes reflows into labelled lines instead of scrolling sideways, stays a
table for assistive technology, and passes the same axe audit as every other page
(``test_browser.py``)."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Page, ViewportSize

from settings import SHARED_DATA
from tests.browser.test_browser import AXE, AXE_RULES, AXE_RUN, TIMEOUT_MS, Log, _wait_for_search
from tests.integration.browse_catalogue import NAMESAKE, Facts, built, served

PHONE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Facts]]:
    with (
        built("sqlite", SHARED_DATA, tmp_path_factory.mktemp("phone")) as (settings, facts),
        served(settings) as base,
    ):
        _wait_for_search(base)
        yield base, facts


@pytest.fixture
def phone(chromium: Browser, site: tuple[str, Facts]) -> Iterator[tuple[Page, Log]]:
    log = Log()
    context = chromium.new_context(base_url=site[0], viewport=PHONE)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.on("console", lambda m: log.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: log.page_errors.append(str(error)))
    yield page, log
    context.close()


@pytest.mark.parametrize(
    ("which", "caption"),
    [
        ("search", "Researchers, with their years"),  # no metric columns
        ("kingma", "Researchers, with their years"),  # with h-index and citations
        ("same-name", f"{NAMESAKE} compared with 1 other researcher"),  # a researcher page
    ],
)
def test_researcher_tables_reflow_at_phone_width(
    phone: tuple[Page, Log], site: tuple[str, Facts], which: str, caption: str, tmp_path: Path
) -> None:
    tab, log = phone
    path = {
        "search": f"/researchers?q={quote(NAMESAKE)}",
        "kingma": "/researchers?q=kingma",
        "same-name": f"/researchers/{site[1].namesakes[0]}",
    }[which]
    tab.goto(path)
    table = tab.get_by_role("table", name=caption)
    assert table.is_visible()
    widths: dict[str, Any] = tab.evaluate(
        """() => {
        const doc = document.documentElement, region = document.querySelector(".table-scroll");
        return {page: doc.scrollWidth, viewport: doc.clientWidth,
                region: region.scrollWidth, regionBox: region.clientWidth,
                table: document.querySelector("table.reflow").getBoundingClientRect().right};
        }"""
    )
    # Nothing scrolls sideways: not the page, not the table's own region.
    assert widths["page"] <= widths["viewport"] == PHONE["width"], widths
    assert widths["region"] <= widths["regionBox"] and widths["table"] <= PHONE["width"], widths

    # Each row is stacked: its cells one under another, each with its label shown before it.
    rows = table.locator("tbody tr")
    assert rows.count() >= 1
    for i in range(rows.count()):
        cells = rows.nth(i).locator("th, td:not(:empty)")
        boxes = [cells.nth(j).bounding_box() for j in range(cells.count())]
        assert all(b is not None for b in boxes)
        tops = [b["y"] for b in boxes if b is not None]
        assert tops == sorted(tops) and len(set(tops)) == len(tops), f"row {i} is not stacked: {boxes}"
    label = table.locator("td[data-label='Years']").first.evaluate(
        "e => getComputedStyle(e, '::before').content"
    )
    assert label == '"Years"', label

    # Still a table to assistive technology: rows, a row header each, cells, column headers.
    assert tab.get_by_role("row").count() == rows.count() + 1
    assert tab.get_by_role("rowheader").count() == rows.count()
    assert tab.get_by_role("columnheader", name="Main fields").count() == 1
    assert tab.get_by_role("cell").count() >= 3 * rows.count()

    tab.evaluate(AXE.read_text())
    report = tab.evaluate(AXE_RUN, AXE_RULES)
    assert report["passes"] > 10 and report["violations"] == [], report["violations"]

    shot = tmp_path / f"{which}-390.png"
    tab.screenshot(path=shot, full_page=True)
    data = shot.read_bytes()
    assert struct.unpack(">I", data[16:20])[0] == PHONE["width"], "the screenshot is as wide as the phone"
    log.assert_clean()
