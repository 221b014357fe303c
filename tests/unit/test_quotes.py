"""Key quotes without the model: sentences split with their offsets, scored against the question
(weighted words, numbers bound to the question's words, the embedder), joined where one leans on
the one before."""

from __future__ import annotations

from collections.abc import Sequence

from chat.quotes import (
    SentenceScorer,
    asked_thing,
    best_span,
    bound_numbers,
    counts,
    is_quantity_question,
    key_quotes,
    leans_back,
)
from chat.sentences import MAX_CHARS, split
from retrieval.evidence import question_terms

PAGE = (
    "Multi-head attention allows the model to jointly attend to information from different "
    "representation subspaces. In this work we employ h = 8 parallel attention layers, or heads. For "
    "each of these we use dk = dv = dmodel/h = 64. Due to the reduced dimension of each head, the total "
    "computational cost is similar to that of single-head attention with full dimensionality."
)


def test_sentences_keep_their_offsets_and_skip_abbreviations_initials_and_decimals() -> None:
    text = (
        "We follow Vaswani et al. (2017) and use e.g. Adam. The rate is 0.001 (see Fig. 3). "
        "J. Smith agrees!  Is it? yes, it is."
    )
    found = split(text)
    assert [s.text for s in found] == [
        "We follow Vaswani et al. (2017) and use e.g. Adam.",
        "The rate is 0.001 (see Fig. 3).",
        "J. Smith agrees!",
        "Is it?",
        "yes, it is.",
    ]
    assert all(text[s.start : s.end] == s.text for s in found)


def test_a_table_without_full_stops_is_cut_into_pieces_of_bounded_length() -> None:
    table = " ".join(f"{n}.{n} {n * 3}" for n in range(400))
    pieces = split(table)
    assert len(pieces) > 1 and all(len(p.text) <= MAX_CHARS for p in pieces)
    assert " ".join(p.text for p in pieces) == table
    assert split("") == [] and split("   ") == []


def test_quantity_questions_and_numbers_bound_to_their_words() -> None:
    assert is_quantity_question("How many parallel attention heads does the base model use?")
    assert is_quantity_question("What BLEU score does it reach?")
    assert not is_quantity_question("Why are dot products scaled?")
    wanted = question_terms("How many attention heads are used?")
    assert bound_numbers("we employ h = 8 parallel attention layers, or heads", wanted)
    assert not bound_numbers("For each of these we use dk = dv = dmodel/h = 64.", wanted)


def test_the_sentence_that_answers_wins_and_a_sentence_leaning_on_it_is_joined() -> None:
    question = "How many attention heads does the Transformer employ?"
    scorer = SentenceScorer(question, dict.fromkeys(question_terms(question), 1.0), None)
    quotes, scored = key_quotes([("S1", PAGE, (5,))], scorer, most=1)
    (quote,) = quotes
    assert "h = 8 parallel attention layers, or heads." in quote.text
    assert "For each of these we use dk = dv = dmodel/h = 64." in quote.text  # leans on it: joined
    assert PAGE[quote.start : quote.end] == quote.text
    assert quote.pages == (5,) and quote.key == "S1"
    assert leans_back("For each of these we use dk = 64.") and not leans_back("Forty heads were used.")
    span = best_span(scored["S1"])
    assert span is not None and span[0] <= 1 <= span[1]


def test_a_quantity_question_prefers_a_sentence_with_a_number() -> None:
    question = "What dimension does each attention head have?"
    text = (
        "The dimension of each attention head is discussed at length in the appendix of this paper. "
        "Each head projects queries to 64 dimensions."
    )
    scorer = SentenceScorer(question, dict.fromkeys(question_terms(question), 1.0), None)
    scored = scorer.score([("S1", text)])["S1"]
    assert scored[1].score > scored[0].score  # fewer of the question's words, but the number


def test_a_number_counting_the_thing_asked_for_beats_one_beside_the_question_words() -> None:
    question = "How many FLOPs does the 50-layer ResNet with bottleneck blocks have?"
    assert asked_thing(question) == {"flop"}
    assert asked_thing("How many training tokens did the model see?") == {"token"}
    assert asked_thing("What BLEU score does it reach?") == set()
    assert asked_thing("How many fewer training steps does it need?") == set()  # a factor, not a count
    assert counts("This model has 3.8 billion FLOPs.", {"flop"})
    assert not counts("FLOPs grow with depth: 152 layers.", {"flop"})
    text = "The ResNet stacks its bottleneck blocks in 4 stages. This model has 3.8 billion FLOPs."
    scorer = SentenceScorer(question, dict.fromkeys(question_terms(question), 1.0), None)
    scored = scorer.score([("S1", text)])["S1"]
    assert scored[1].score > scored[0].score  # one of the question's words, but it counts the FLOPs


def test_a_number_counts_what_its_noun_is_glossed_as() -> None:
    assert counts("In this work we employ h = 8 parallel attention layers, or heads.", {"head"})
    assert not counts("We employ 8 parallel attention layers, or more if memory allows heads.", {"head"})
    assert not counts("We use 8 layers, and the heads are split.", {"head"})


def test_a_reference_list_entry_weighs_less_than_prose_with_the_same_words() -> None:
    question = "Which optimizer trained the reader?"
    entry = "Kingma, D. and Ba, J. Adam: a method for stochastic optimization. arXiv preprint, 2014."
    prose = "The reader was trained with Adam, a stochastic optimizer, for two epochs."
    scorer = SentenceScorer(question, dict.fromkeys(question_terms(question), 1.0), None)
    first, second = scorer.score([("S1", f"{entry} {prose}")])["S1"]
    assert first.listing and not second.listing
    assert first.score < first.words * 0.6  # words alone would give it more: it is scaled down


def test_a_figure_s_axes_are_no_quote_though_their_labels_are_words() -> None:
    question = "How many heads attend far across the image in the lowest layers?"
    axes = (
        "1 2 3 4 5 6 7 Input patch row Position embedding similarity 0 5 10 15 20 Network depth (layer) "
        "0 20 40 60 80 100 120 Mean attention distance (pixels) Head 1 Head 2 Head 3"
    )
    said = "Some heads attend to most of the image already in the lowest layers."
    scorer = SentenceScorer(question, dict.fromkeys(question_terms(question), 1.0), None)
    scored = scorer.score([("S1", f"{axes}. {said}")])["S1"]
    assert scored[0].prose == 0.0
    assert max(scored, key=lambda s: s.score).sentence.text == said
    # a table row or a doubling schedule is no axis
    assert all(
        s.prose > 0 for s in scorer.score([("S2", "BERT 86.5 78.5 ELMo 81.8 72.2 at k = 1 2 4 8")])["S2"]
    )


class FakeEmbedder:
    """Vectors by topic word, L2-normalised: a paraphrase shares no word but its meaning."""

    dim = 2
    name = "fake-topics"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] if ("speed" in t or "fast" in t) else [0.0, 1.0] for t in texts]


def test_the_embedder_lifts_a_paraphrase_that_shares_few_words() -> None:
    question = "How fast is the kernel?"
    text = "The kernel was written in CUDA by the authors. It gives a speed-up of three times over PyTorch."
    words_only = SentenceScorer(question, {"fast": 1.0, "kernel": 1.0}, None)
    with_meaning = SentenceScorer(question, {"fast": 1.0, "kernel": 1.0}, FakeEmbedder())
    assert words_only.score([("S1", text)])["S1"][0].score > words_only.score([("S1", text)])["S1"][1].score
    scored = with_meaning.score([("S1", text)])["S1"]
    assert scored[1].cosine == 1.0 and scored[0].cosine == 0.0
