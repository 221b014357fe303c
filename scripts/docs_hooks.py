"""MkDocs hook (``mkdocs.yml``: ``hooks``): the configuration page's settings table, generated.

``docs/configuration.md`` holds the marker below; at build time it becomes one table per settings
section (``settings.SECTIONS``), each row the variable, its default and its ``description``, read
from ``settings.py`` itself, so the manual cannot drift from the code.
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!-- settings-table -->"
# Section headings where the class name does not spell the concern.
TITLES = {
    "Arxiv": "arXiv",
    "Auth": "Sign-in",
    "Chunk": "Chunks",
    "Limit": "Limits",
    "LLM": "Chat's language model",
    "LocalLLM": "The embedded LLM",
    "Mcp": "MCP",
    "Parser": "PDF parser",
}

if str(ROOT) not in sys.path:  # this checkout's settings.py, whichever copy is installed
    sys.path.insert(0, str(ROOT))


def _default(field: Any) -> str:
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    value = field.get_default(call_default_factory=True)
    if value is None or value == "":
        shown = "empty (secret)" if extra.get("secret") else "empty"
    elif isinstance(value, bool):
        shown = f"`{str(value).lower()}`"
    elif isinstance(value, float) and value.is_integer():
        shown = f"`{int(value)}`"
    elif isinstance(value, Path):
        try:
            shown = f"`./{value.relative_to(ROOT)}`"
        except ValueError:
            try:
                shown = f"`../{value.relative_to(ROOT.parent)}`"
            except ValueError:
                shown = f"`{value}`"
    elif isinstance(value, list | dict):
        shown = f"`{json.dumps(value)}`"
    else:
        shown = f"`{value}`"
    if typing.get_origin(field.annotation) is typing.Literal:
        choices = ", ".join(f"`{choice}`" for choice in typing.get_args(field.annotation))
        shown += f"; one of {choices}"
    return shown


def _cell(text: str) -> str:
    return " ".join(text.replace("``", "`").replace("|", "\\|").split())


def settings_table() -> str:
    """Markdown: a heading, the section's docstring and a table per settings section."""
    from settings import SECTIONS

    parts = []
    for section in SECTIONS:
        name = section.__name__.removesuffix("Settings")
        title = TITLES.get(name, name)
        parts.append(f"## {title}\n")
        if section.__doc__ and section.__doc__.strip():
            parts.append(_cell(section.__doc__) + "\n")
        rows = ["| Variable | Default | Meaning |", "|---|---|---|"]
        for name, field in section.model_fields.items():
            variable = f"WOVEPAPER_{name.upper()}"
            rows.append(f"| `{variable}` | {_default(field)} | {_cell(field.description or '')} |")
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs event: replace the marker on the page that holds it."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, settings_table())
