"""Pictures drawn on the server as inline SVG geometry (no scripts, no outside images: CSP-safe).

The co-author network: the researcher in the centre, the closest co-authors on a ring ordered by
papers shared (clockwise from the top), a spoke to each whose width grows with the papers shared,
and thin chords between co-authors who also wrote together. The template turns the geometry into
``<svg>`` elements; names are escaped there like any other text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.researchers import Network

WIDTH, HEIGHT = 720, 440
_CENTRE = (WIDTH / 2, HEIGHT / 2)
_RING = 150.0
_LABEL_GAP = 12.0
_MAX_LABEL = 24


@dataclass(frozen=True, slots=True)
class Dot:
    x: float
    y: float
    r: float
    name: str
    label: str
    href: str
    shared: int
    label_x: float
    label_y: float
    anchor: str  # SVG text-anchor: start | middle | end


@dataclass(frozen=True, slots=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    width: float
    kind: str  # "spoke" (to the centre) | "chord" (between co-authors)


@dataclass(frozen=True, slots=True)
class NetworkPicture:
    width: int
    height: int
    centre: Dot
    dots: list[Dot]
    lines: list[Line]


def _label(name: str) -> str:
    return name if len(name) <= _MAX_LABEL else name[: _MAX_LABEL - 1].rstrip() + "…"


def network_picture(network: Network) -> NetworkPicture | None:
    """The layout of ``network``, or None when the researcher has no co-authors to draw."""
    if not network.nodes:
        return None
    cx, cy = _CENTRE
    most = max(n.shared for n in network.nodes)
    count = len(network.nodes)
    dots: list[Dot] = []
    where: dict[int, tuple[float, float]] = {}
    for i, node in enumerate(network.nodes):
        angle = -math.pi / 2 + 2 * math.pi * i / count
        x, y = cx + _RING * math.cos(angle), cy + _RING * math.sin(angle)
        r = 4 + 6 * math.sqrt(node.shared / most)
        lx, ly = (
            cx + (_RING + r + _LABEL_GAP) * math.cos(angle),
            cy + (_RING + r + _LABEL_GAP) * math.sin(angle),
        )
        cos = math.cos(angle)
        anchor = "middle" if abs(cos) < 0.2 else ("start" if cos > 0 else "end")
        ly += 4 if abs(cos) >= 0.2 else (12 if math.sin(angle) > 0 else -2)
        dots.append(
            Dot(round(x, 1), round(y, 1), round(r, 1), node.name, _label(node.name), node.path, node.shared,
                round(lx, 1), round(ly, 1), anchor)
        )  # fmt: skip
        where[node.id] = (x, y)
    lines = [
        Line(round(cx, 1), round(cy, 1), d.x, d.y, round(0.8 + 3.2 * d.shared / most, 2), "spoke")
        for d in dots
    ]
    strongest = max((w for _, _, w in network.edges), default=1)
    for a, b, weight in network.edges:
        if a in where and b in where:
            (x1, y1), (x2, y2) = where[a], where[b]
            lines.append(
                Line(round(x1, 1), round(y1, 1), round(x2, 1), round(y2, 1),
                     round(0.5 + 1.5 * weight / strongest, 2), "chord")
            )  # fmt: skip
    centre = Dot(cx, cy, 14, network.centre.name, _label(network.centre.name), network.centre.path,
                 network.centre.shared, cx, cy + 32, "middle")  # fmt: skip
    return NetworkPicture(WIDTH, HEIGHT, centre, dots, lines)
