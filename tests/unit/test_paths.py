"""Canonical URLs: slugs transliterate letters instead of dropping them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.urls import institution_path, paper_ident, paper_path, researcher_path, row_ident, slugify


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Łukasz Kaiser", "lukasz-kaiser"),
        ("Christopher Ré", "christopher-re"),
        ("ETH Zürich", "eth-zurich"),
        ("Søren Hauberg", "soren-hauberg"),
        ("Adam: A Method for Stochastic Optimization", "adam-a-method-for-stochastic-optimization"),
        ("Θεόδωρος", "theodoros"),
        ("?!", "untitled"),
    ],
)
def test_slugs_transliterate(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_paths_use_the_slug() -> None:
    assert researcher_path(7, "Łukasz Kaiser") == "/researchers/7-lukasz-kaiser"
    assert (
        paper_path("1706.03762", "Attention Is All You Need", 5)
        == "/papers/1706.03762v5-attention-is-all-you-need"
    )


@given(st.text(max_size=300))
def test_a_slug_is_url_safe_and_bounded(text: str) -> None:
    slug = slugify(text)
    assert slug and len(slug) <= 80
    assert all(c.isascii() and (c.isalnum() or c == "-") for c in slug)
    assert not slug.startswith("-") and not slug.endswith("-")


@given(
    st.sampled_from(["1706.03762", "2401.01234", "hep-th/9901001", "math.GT/0309136"]), st.text(max_size=80)
)
def test_an_address_gives_back_its_id(arxiv_id: str, title: str) -> None:
    assert paper_ident(paper_path(arxiv_id, title).removeprefix("/papers/")) == arxiv_id
    assert paper_ident(paper_path(arxiv_id, title, 3).removeprefix("/papers/")) == f"{arxiv_id}v3"
    assert row_ident(researcher_path(42, title).removeprefix("/researchers/")) == "42"
    assert row_ident(institution_path(7, title).removeprefix("/institutions/")) == "7"


def test_an_address_without_an_id_is_left_for_the_parser_to_refuse() -> None:
    assert paper_ident("not-a-paper") == "not-a-paper"
    assert row_ident("ada-lovelace") == "ada"


def test_one_id_type_for_paths_and_bodies() -> None:
    from litestar.exceptions import ClientException, NotFoundException

    from app.ids import MAX_ID, body_id, parse_id, path_id

    assert parse_id("42") == 42 and parse_id(7) == 7 and parse_id(str(MAX_ID)) == MAX_ID
    for bad in (
        "0",
        "-1",
        "+1",
        " 1",
        "1e3",
        "١",
        "1.0",
        "",
        str(MAX_ID + 1),
        "9" * 30,
        True,
        0,
        2**64,
        None,
        1.5,
    ):
        assert parse_id(bad) is None, bad
    with pytest.raises(NotFoundException):
        path_id("99999999999999999999", "token")
    with pytest.raises(ClientException):
        body_id(99999999999999999999, "conversation_id")


def test_names_and_titles_people_give_lose_invisible_format_characters() -> None:
    from catalog.text import human_text
    from chat.conversations import title_for

    assert human_text("\u202egnp.exe") == "gnp.exe"  # a right-to-left override shows text reversed
    assert human_text("a\u2066b\u2069 c\u200bd\u00ad") == "ab cd"  # isolates, zero-width space, soft hyphen
    assert human_text("👩\u200d💻 नमस्\u200dते") == "👩\u200d💻 नमस्\u200dते"  # joiners stay
    assert human_text(" \x00 two\n\tlines ") == "two lines"
    assert title_for("What \u202edoes it mean?") == "What does it mean?"
