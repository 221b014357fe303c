"""Fixtures shared by the browser tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.browser.test_browser import CHROMIUM, LAUNCH_ARGS


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """Debian's Chromium under Playwright, one per test module (a requirement, never skipped)."""
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: run scripts/ensure-services.sh (make test does)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield browser
        browser.close()
