"""The rendered-page cache (LRU with expiry) and the co-author picture's geometry."""

from __future__ import annotations

import math

from app.graphics import HEIGHT, WIDTH, network_picture
from app.rendering import PageCache, Rendered
from catalog.researchers import Network, NetworkNode


def _page(n: int) -> Rendered:
    return Rendered(200, f"page {n}".encode(), "text/html")


def test_cache_keeps_the_most_recently_used_pages() -> None:
    cache = PageCache(ttl=60, entries=2)
    cache.put("a", _page(1))
    cache.put("b", _page(2))
    assert cache.get("a") == _page(1)  # "a" is now the most recent
    cache.put("c", _page(3))
    assert cache.get("b") is None and cache.get("a") == _page(1) and cache.get("c") == _page(3)


def test_cache_entries_expire() -> None:
    now = [1000.0]
    cache = PageCache(ttl=30, entries=10, clock=lambda: now[0])
    cache.put("a", _page(1))
    now[0] += 29.9
    assert cache.get("a") is not None
    now[0] += 0.2
    assert cache.get("a") is None


def test_a_zero_ttl_or_size_disables_the_cache() -> None:
    for cache in (PageCache(ttl=0, entries=10), PageCache(ttl=10, entries=0)):
        cache.put("a", _page(1))
        assert cache.get("a") is None


def test_network_picture_geometry() -> None:
    nodes = [NetworkNode(i, f"Person {i}", shared) for i, shared in ((2, 5), (3, 3), (4, 1), (5, 1))]
    network = Network(NetworkNode(1, "Centre Person", 9), nodes, [(2, 3, 2), (3, 99, 1)], papers_left_out=0)
    picture = network_picture(network)
    assert picture is not None
    cx, cy = WIDTH / 2, HEIGHT / 2
    radii = {round(math.hypot(d.x - cx, d.y - cy)) for d in picture.dots}
    assert len(radii) == 1, "co-authors sit on one ring"
    assert picture.dots[0].x == cx and picture.dots[0].y < cy, "the closest co-author is at the top"
    assert picture.dots[0].r > picture.dots[-1].r, "more shared papers, bigger dot"
    assert [d.href for d in picture.dots] == [n.path for n in nodes]
    spokes = [line for line in picture.lines if line.kind == "spoke"]
    chords = [line for line in picture.lines if line.kind == "chord"]
    assert len(spokes) == 4 and max(s.width for s in spokes) == spokes[0].width
    assert len(chords) == 1, "a link to someone not drawn is left out"
    for dot in picture.dots:
        assert 0 <= dot.label_x <= WIDTH and 0 <= dot.label_y <= HEIGHT
        assert dot.anchor == ("middle" if abs(dot.x - cx) < 0.2 * 150 else ("start" if dot.x > cx else "end"))


def test_no_coauthors_no_picture() -> None:
    assert network_picture(Network(NetworkNode(1, "Alone", 1), [], [], 0)) is None


def test_long_names_are_shortened_on_the_picture_only() -> None:
    long = "Bartholomew Maximilian Featherstonehaugh-Cholmondeley"
    picture = network_picture(Network(NetworkNode(1, "A", 1), [NetworkNode(2, long, 1)], [], 0))
    assert picture is not None
    assert picture.dots[0].label.endswith("…") and len(picture.dots[0].label) <= 24
    assert picture.dots[0].name == long
