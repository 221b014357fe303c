"""Reading served HTML the way a crawler would: elements, attributes, text and JSON-LD."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]


@dataclass
class ParsedPage:
    elements: list[Element] = field(default_factory=list)
    text: str = ""
    json_ld: list[Any] = field(default_factory=list)

    def find(self, tag: str, **attrs: str) -> list[Element]:
        return [
            e
            for e in self.elements
            if e.tag == tag and all(e.attrs.get(k.rstrip("_")) == v for k, v in attrs.items())
        ]

    def meta(self, key: str) -> str | None:
        for e in self.elements:
            if e.tag == "meta" and key in (e.attrs.get("property"), e.attrs.get("name")):
                return e.attrs.get("content")
        return None

    def hrefs(self) -> list[str]:
        return [e.attrs["href"] for e in self.elements if e.tag == "a" and "href" in e.attrs]

    def types(self) -> set[str]:
        """Every schema.org ``@type`` in the page's JSON-LD."""
        found: set[str] = set()

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if isinstance(node.get("@type"), str):
                    found.add(node["@type"])
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(self.json_ld)
        return found


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = ParsedPage()
        self._chunks: list[str] = []
        self._in_json_ld = False
        self._json: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.page.elements.append(Element(tag, values))
        if tag == "script":
            self._in_json_ld = values.get("type") == "application/ld+json"
            self._skip += 1
        if tag == "style":
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_json_ld:
            self.page.json_ld.append(json.loads("".join(self._json)))
            self._json, self._in_json_ld = [], False
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if self._in_json_ld:
            self._json.append(data)
        elif not self._skip:
            self._chunks.append(data)

    def close(self) -> None:
        super().close()
        self.page.text = " ".join(" ".join(self._chunks).split())


def parse_html(html: str) -> ParsedPage:
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return parser.page
