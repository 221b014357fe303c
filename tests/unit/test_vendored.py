"""Vendored browser libraries are exactly the pinned registry files, and the chat imports the pinned one."""

from __future__ import annotations

import hashlib
import re

from settings import PROJECT_ROOT

VENDOR = PROJECT_ROOT / "app" / "static" / "vendor"


def test_every_vendored_file_matches_its_pinned_hash() -> None:
    table = (VENDOR / "README.md").read_text()
    pins = dict(re.findall(r"^\| `([^`]+\.js)` \|.*?\| `([0-9a-f]{64})` \|", table, flags=re.M))
    scripts = {p.name for p in VENDOR.glob("*.js")}
    assert scripts and set(pins) == scripts, (pins, scripts)
    for name, digest in pins.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name


def test_the_chat_imports_the_pinned_markdown_renderer() -> None:
    source = (PROJECT_ROOT / "app" / "static" / "chat.js").read_text()
    imports = re.findall(r'^import .* from "([^"]+)";', source, flags=re.M)
    assert imports == ["./vendor/markdown-it-15.0.3.min.js"]
    assert "html: false" in source  # raw HTML in model output is text, never markup
