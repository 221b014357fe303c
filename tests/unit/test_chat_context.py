"""Passages: neighbouring chunks of one paper merged without their overlap, packing best first
within the token budget, the evidence measure."""

from __future__ import annotations

from chat.context import _merge, _overlap_join, _pack, _Piece, coverage, is_evidence, question_terms
from settings import ChatSettings


def piece(n: int, text: str, pages: tuple[int, ...], rank: int, paper: str = "1706.03762") -> _Piece:
    return _Piece(f"{paper}v7#{n}", paper, 7, n, "body", pages, text, 0.5, rank)


def test_neighbouring_chunks_of_one_paper_are_merged_in_reading_order_without_overlap() -> None:
    second = piece(
        5, "the encoder maps an input sequence to a sequence of continuous representations.", (3,), 0
    )
    first = piece(
        4, "Most competitive models have an encoder-decoder structure: the encoder maps an input", (2, 3), 1
    )
    far = piece(9, "Attention weights are visualised in the appendix figures for layer five.", (13,), 2)
    other = piece(
        6, "A different paper's chunk six about residual learning in deep networks.", (3,), 3, "1512.03385"
    )
    merged = _merge([second, first, far, other])
    assert [m.chunk_id for m in merged] == ["1706.03762v7#5", "1706.03762v7#9", "1512.03385v7#6"]
    assert merged[0].merged == ["1706.03762v7#4"] and merged[0].pages == (2, 3)
    assert merged[0].text == (
        "Most competitive models have an encoder-decoder structure: the encoder maps an input sequence "
        "to a sequence of continuous representations."
    )


def test_overlap_is_written_once_and_unrelated_text_is_joined_with_a_space() -> None:
    assert _overlap_join("alpha beta gamma delta epsilon", "gamma delta epsilon zeta eta") == (
        "alpha beta gamma delta epsilon zeta eta"
    )
    assert _overlap_join("one two", "three four") == "one two three four"


def test_packing_takes_the_best_that_fit_the_budget() -> None:
    long = piece(1, "word " * 300, (1,), 0)
    short = [piece(n, f"short passage number {n}", (n,), n) for n in range(2, 6)]
    chosen = _pack([long, *short], budget=30, most=3)
    assert [p.n for p in chosen] == [2, 3, 4]


def test_coverage_counts_stemmed_content_words() -> None:
    question = question_terms("How are the estimates of the moments corrected, according to the paper?")
    assert coverage(question, "Adam corrects the bias of its moment estimate.") == 1.0
    assert coverage(question, "Unrelated words entirely.") == 0.0


def test_weighted_coverage_counts_rare_words_more() -> None:
    question = question_terms("Which BLEU score did the model reach on Japanese?")
    weights = {"bleu": 5.0, "score": 1.0, "model": 0.1, "reach": 3.0, "japanes": 6.0}
    text = "The big model reaches a BLEU score of 28.4 on English-to-German."
    assert coverage(question, text) == 0.8  # four of five words
    assert round(coverage(question, text, weights), 3) == round(9.1 / 15.1, 3)  # without "Japanese"
    assert coverage(question, text, dict.fromkeys(question, 0.0)) == 0.0


def test_a_chunk_is_evidence_by_its_words_or_its_own_similarity() -> None:
    conf = ChatSettings(chat_min_term_coverage=0.55, chat_min_similarity=0.5)
    assert is_evidence(0.55, None, conf)
    assert is_evidence(0.2, 0.5, conf)
    assert not is_evidence(0.54, 0.49, conf)
    assert not is_evidence(0.54, None, conf)  # not found by the embedding search
