"""The chat's markdown answer (``app.chat_turns.answer_markdown``): key quotes with their pages."""

from __future__ import annotations

from app.chat_turns import answer_markdown
from chat.context import KeyedPassage
from chat.pipeline import Outcome
from chat.quotes import Quote


def _outcome(pages: tuple[int, ...]) -> Outcome:
    text = "In this work we employ h = 8 parallel attention layers, or heads."
    passage = KeyedPassage(
        "S1", "1706.03762", 7, "Attention Is All You Need", pages, text, ("c",), "body", 1.0
    )
    quote = Quote("S1", text, 0, len(text), pages, 0.9)
    return Outcome(answer="Eight [1].", passages=[passage], quotes=[quote])


def test_a_quote_names_every_page_its_passage_spans() -> None:
    """A quote from a chunk across a page break may be on either page: both are named."""
    assert "Attention Is All You Need](/papers/1706.03762-attention-is-all-you-need), pp. 4–5" in (
        answer_markdown(_outcome((4, 5)))
    )
    one = answer_markdown(_outcome((5,)))
    assert "attention-is-all-you-need), p. 5 · [the page, highlighted]" in one and "pp." not in one


def test_a_quote_links_to_the_page_reader_at_its_first_page() -> None:
    quoted = "In+this+work+we+employ+h+%3D+8+parallel+attention+layers%2C+or+heads."
    link = f"[the page, highlighted](/papers/1706.03762/pages/4?quote={quoted})"
    assert link in answer_markdown(_outcome((4, 5)))
