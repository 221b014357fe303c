"""Citations checked by code: keys filtered in the stream, however the model's deltas split them;
references built from the passages; post-hoc attribution, quotes and numbers checked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chat.citations import KeyFilter, declines, references, verify
from chat.context import KeyedPassage
from chat.quotes import Quote
from retrieval.embedder import Embedder, EmbedderError

ADAM = KeyedPassage(
    key="S1",
    arxiv_id="1412.6980",
    version=9,
    title="Adam: A Method for Stochastic Optimization",
    pages=(2, 3),
    text="Adam computes individual adaptive learning rates for different parameters from estimates of "
    "first and second moments of the gradients. Good default settings are alpha = 0.001 and beta1 = 0.9.",
    chunk_ids=("1412.6980v9#3",),
    kind="body",
    coverage=1.0,
    pdf_url="https://arxiv.org/pdf/1412.6980v9",
)
RESNET = KeyedPassage(
    key="S2",
    arxiv_id="1512.03385",
    version=1,
    title="Deep Residual Learning for Image Recognition",
    pages=(1,),
    text="We present a residual learning framework to ease the training of networks that are "
    "substantially deeper than those used previously, with depths of up to 152 layers.",
    chunk_ids=("1512.03385v1#1",),
    kind="body",
    coverage=1.0,
    pdf_url="https://arxiv.org/pdf/1512.03385v1",
)
# Says what ADAM's passage says in mostly other words: under half of its content words are there.
PARAPHRASE = (
    "Every parameter has its own adaptive learning rate in Adam, based on the gradient's mean and variance."
)


@pytest.fixture(params=["lexical", "lexical+embedding"])
def embedder(request: pytest.FixtureRequest, minilm: Embedder) -> Embedder | None:
    """Attribution without and with the embedding overlap: the checks below hold for both."""
    return None if request.param == "lexical" else minilm


class BrokenEmbedder:
    name = "broken"
    dim = 384

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbedderError("the embedding server is down")


ANSWER = "Adam adapts learning rates [S1] and residual nets reach 152 layers [S2][S7]. See [4] and [S1, S9]."


def streamed(text: str, cuts: list[int]) -> str:
    keys = KeyFilter(["S1", "S2"])
    pieces, last = [], 0
    for cut in sorted(set(cuts)):
        pieces.append(text[last:cut])
        last = cut
    pieces.append(text[last:])
    return "".join(keys.feed(p) for p in pieces) + keys.finish()


def test_given_keys_become_numbers_and_others_are_removed() -> None:
    assert streamed(ANSWER, []) == (
        "Adam adapts learning rates [1] and residual nets reach 152 layers [2]. See  and [1]."
    )


@given(st.lists(st.integers(min_value=0, max_value=len(ANSWER)), max_size=12))
def test_keys_split_across_deltas_are_filtered_the_same(cuts: list[int]) -> None:
    assert streamed(ANSWER, cuts) == streamed(ANSWER, [])


def test_an_unfinished_bracket_is_text_and_prose_brackets_pass() -> None:
    assert (
        streamed("Values in [0, 1] and the set [a, b] and [S", [3, 12])
        == "Values in  and the set [a, b] and [S"
    )


def test_references_are_built_from_passages_in_citation_order() -> None:
    keys = KeyFilter(["S1", "S2"])
    keys.feed("x [S2] y [S1]")
    refs = references([ADAM, RESNET], keys.numbers)
    assert [(r["n"], r["key"], r["arxiv_id"]) for r in refs] == [
        (1, "S2", "1512.03385"),
        (2, "S1", "1412.6980"),
    ]
    assert refs[1]["pdf_url"] == "https://arxiv.org/pdf/1412.6980v9#page=2"
    assert str(refs[1]["paper_url"]).startswith("/papers/1412.6980-")
    assert refs[1]["reader_url"] == "/papers/1412.6980/pages/2"  # no key quote: the first page


def test_a_reference_opens_the_page_reader_at_its_best_key_quote() -> None:
    keys = KeyFilter(["S1", "S2"])
    keys.feed("x [S1] y [S2]")
    quotes = [
        Quote("S2", "We present a residual learning framework", 0, 40, (1,), 0.9),
        Quote("S1", "Good default settings are alpha = 0.001", 150, 190, (3,), 0.8),
        Quote("S1", "Adam computes individual adaptive learning rates", 0, 49, (2,), 0.5),
    ]
    refs = references([ADAM, RESNET], keys.numbers, quotes)
    assert (
        refs[0]["reader_url"] == "/papers/1412.6980/pages/3?quote=Good+default+settings+are+alpha+%3D+0.001"
    )
    assert (
        refs[1]["reader_url"] == "/papers/1512.03385/pages/1?quote=We+present+a+residual+learning+framework"
    )
    assert ADAM.to_json()["reader_url"] == "/papers/1412.6980/pages/2"


def test_an_uncited_sentence_a_passage_supports_gets_its_citation(embedder: Embedder | None) -> None:
    checked = verify(
        "Residual learning eases training of substantially deeper networks.", [ADAM, RESNET], {}, embedder
    )
    assert checked.answer == "Residual learning eases training of substantially deeper networks [1]."
    assert checked.numbers == {"S2": 1} and not checked.unsupported and checked.flags == []


def test_unsupported_sentences_numbers_and_quotes_are_flagged(embedder: Embedder | None) -> None:
    answer = (
        "Adam computes adaptive learning rates from moment estimates [1]. "
        'It was "tuned on a billion images by hand" [1] with alpha = 0.001 and 7 restarts. '
        "Penguins migrate across frozen southern oceans every winter."
    )
    checked = verify(answer, [ADAM, RESNET], {"S1": 1}, embedder)
    kinds = {(f.kind, f.text) for f in checked.flags}
    stated = [f for f in checked.flags if f.kind == "not_stated"]
    assert len(stated) == 1 and stated[0].detail and stated[0].key == "S1"
    assert stated[0].against and stated[0].against in ADAM.text  # the sentence it was held against
    assert ("quote", "tuned on a billion images by hand") in kinds
    assert any(k == "sentence" and t.startswith("Penguins") for k, t in kinds)
    assert not checked.unsupported


def test_a_verbatim_quote_passes() -> None:
    answer = 'Adam uses "estimates of first and second moments of the gradients" [1].'
    assert verify(answer, [ADAM], {"S1": 1}).flags == []


def test_a_cut_passage_is_checked_with_what_was_cut_before_it(embedder: Embedder | None) -> None:
    """The small model read the AdaMax defaults cut from their algorithm's caption (a real answer)."""
    adamax = replace(
        ADAM,
        pages=(9,),
        text="See section 7.1 for details. Good default settings for the tested machine learning "
        "problems are α = 0.002, β1 = 0.9 and β2 = 0.999.",
        lead="Algorithm 2: AdaMax, a variant of Adam based on the infinity norm. ",
    )
    answer = "The good default settings for Adam are α = 0.002, β1 = 0.9 and β2 = 0.999 [1]."
    [flag] = verify(answer, [adamax], {"S1": 1}, embedder).flags
    assert flag.kind == "not_stated" and "AdaMax" in flag.detail
    assert verify(answer, [replace(adamax, lead="")], {"S1": 1}, embedder).flags == []


def test_a_name_the_passage_leaves_implicit_counts_where_its_paper_writes_it(
    embedder: Embedder | None,
) -> None:
    """The answer echoes the question's "on ImageNet"; the cited page only says "the mini-batch size
    of 32", another page of the same paper says what it trains on."""
    bn = replace(
        ADAM,
        arxiv_id="1502.03167",
        title="Batch Normalization: Accelerating Deep Network Training",
        text="The model was trained using Stochastic Gradient Descent with momentum, using the mini-batch "
        "size of 32. The training was performed using a large-scale, distributed architecture.",
    )
    same = replace(RESNET, arxiv_id="1502.03167", text="We applied Batch Normalization to the ImageNet task.")
    answer = "The batch-normalized network was trained on ImageNet with a mini-batch size of 32 [1]."
    assert verify(answer, [bn, same], {"S1": 1}, embedder).flags == []
    other = replace(same, arxiv_id="1512.03385")  # another paper naming ImageNet says nothing of this one
    [flag] = verify(answer, [bn, other], {"S1": 1}, embedder).flags
    assert flag.kind == "not_stated" and "ImageNet" in flag.detail


def test_a_quote_is_held_against_the_passage_as_the_model_read_it() -> None:
    # The prompt leaves the paper's reference marks out; a quote copied from it is still verbatim.
    marked = replace(ADAM, text=ADAM.text.replace("of the gradients", "of the gradients [12, 13]"))
    answer = 'Adam uses "estimates of first and second moments of the gradients" [1].'
    assert verify(answer, [marked], {"S1": 1}).flags == []


def test_an_answer_citing_nothing_is_unsupported(embedder: Embedder | None) -> None:
    penguins = "Penguins migrate across frozen southern oceans every winter."
    checked = verify(penguins, [ADAM, RESNET], {}, embedder)
    assert checked.unsupported and checked.numbers == {}


def test_a_paraphrase_is_attributed_by_its_embedding_overlap(minilm: Embedder) -> None:
    """Lexical overlap alone (under half the words) leaves the paraphrase unsupported; its meaning,
    close to one of ADAM's sentences, attributes it to ADAM and not to RESNET."""
    lexical = verify(PARAPHRASE, [ADAM, RESNET], {})
    assert lexical.unsupported and [f.kind for f in lexical.flags] == ["sentence"]
    checked = verify(PARAPHRASE, [RESNET, ADAM], {}, minilm)
    assert checked.numbers == {"S1": 1} and checked.answer.endswith("variance [1].")
    assert checked.flags == []


def test_a_wrong_citation_is_corrected_to_the_passage_that_supports_it(minilm: Embedder) -> None:
    checked = verify(PARAPHRASE.replace(".", " [1]."), [ADAM, RESNET], {"S2": 1}, minilm)
    assert checked.numbers == {"S2": 1, "S1": 2} and checked.answer.endswith("[1] [2].")


def test_a_failing_embedder_leaves_the_lexical_overlap_to_decide() -> None:
    broken = verify(PARAPHRASE, [ADAM, RESNET], {}, BrokenEmbedder())
    assert broken == verify(PARAPHRASE, [ADAM, RESNET], {})


def test_a_refusal_is_not_dressed_up_as_a_cited_answer(embedder: Embedder | None) -> None:
    checked = verify("The passages do not answer how Adam is initialised.", [ADAM, RESNET], {}, embedder)
    assert checked.numbers == {} and checked.flags == []
    assert not checked.unsupported  # it declines; it does not pretend
    assert declines(checked.answer) and not declines("Adam uses 0.001 as its step size [1].")


def _row(key: str, text: str) -> KeyedPassage:
    return KeyedPassage(
        key, "2101.00001", 1, "Scaling study", (4,), text, (f"2101.00001v1#{key}",), "body", 1.0
    )


SMALL = _row("S1", "In Table 2, the small model reaches 71.2% accuracy on the reading benchmark.")
LARGE = _row("S2", "In Table 3, the large model reaches 78.9% accuracy on the reading benchmark.")


def test_a_citation_of_a_passage_that_does_not_state_the_sentence_moves_to_one_that_does(
    embedder: Embedder | None,
) -> None:
    """The model cites the small model's row for the large model's figure: both rows share the
    sentence's words (attribution is satisfied), but only the other one states its number."""
    answer = "The large model reaches 78.9% accuracy on the reading benchmark [1]."
    checked = verify(answer, [SMALL, LARGE], {"S1": 1}, embedder)
    assert checked.answer == answer and checked.numbers == {"S2": 1}
    assert checked.flags == [] and not checked.unsupported
    assert [r["key"] for r in references([SMALL, LARGE], checked.numbers)] == ["S2"]


def test_a_sentence_no_given_passage_states_keeps_its_citation_and_its_flag(
    embedder: Embedder | None,
) -> None:
    answer = "The large model reaches 80.4% accuracy on the reading benchmark [1]."
    checked = verify(answer, [SMALL, LARGE], {"S1": 1}, embedder)
    assert checked.answer == answer and checked.numbers == {"S1": 1}
    assert [f.kind for f in checked.flags] == ["not_stated"]


def test_numbers_follow_the_answer_after_a_citation_moves(embedder: Embedder | None) -> None:
    answer = (
        "The large model reaches 78.9% accuracy on the reading benchmark [1]. "
        "The small model reaches 71.2% accuracy on the reading benchmark [1]."
    )
    checked = verify(answer, [SMALL, LARGE], {"S1": 1}, embedder)
    assert checked.answer == (
        "The large model reaches 78.9% accuracy on the reading benchmark [1]. "
        "The small model reaches 71.2% accuracy on the reading benchmark [2]."
    )
    assert checked.numbers == {"S2": 1, "S1": 2} and checked.flags == []


ABSTRACT = _row("S3", "We train networks with depths of up to 152 layers on ImageNet and win the contest.")
EXPERIMENTS = _row(
    "S4", "On ImageNet our deepest network has 152 layers, eight times deeper than VGG nets, with 3.6% error."
)


def test_a_sentence_also_cites_the_next_given_passage_that_states_it(embedder: Embedder | None) -> None:
    """Said both in the abstract and on the experiments' page: the answer cites both, best first,
    and a passage that does not state it (another figure) is not added."""
    answer = "The deepest networks trained on ImageNet have 152 layers [1]."
    checked = verify(answer, [ABSTRACT, EXPERIMENTS, SMALL], {"S3": 1}, embedder)
    assert checked.answer == "The deepest networks trained on ImageNet have 152 layers [1] [2]."
    assert checked.numbers == {"S3": 1, "S4": 2} and checked.flags == []
    wrong = verify(
        "The deepest networks trained on ImageNet have 101 layers [1].",
        [ABSTRACT, EXPERIMENTS],
        {"S3": 1},
        embedder,
    )
    assert wrong.numbers == {"S3": 1} and [f.kind for f in wrong.flags] == ["not_stated"]
