"""Claims checked for what they say (chat.claims): numbers bound to what they count, names, the
direction of a comparison and negation must agree with the sentence of the passage a claim rests on."""

from __future__ import annotations

import pytest

from chat.claims import check_claim, check_claims
from retrieval.embedder import Embedder, MiniLMEmbedder

HEADS = (
    "Multi-head attention allows the model to jointly attend to information from different representation "
    "subspaces at different positions. With a single attention head, averaging inhibits this. In this work "
    "we employ h = 8 parallel attention layers, or heads. For each of these we use dk = dv = dmodel/h = 64. "
    "Due to the reduced dimension of each head, the total computational cost is similar to that of "
    "single-head attention with full dimensionality."
)
BLEU = (
    "On the WMT 2014 English-to-German translation task, the big transformer model outperforms the best "
    "previously reported models (including ensembles) by more than 2.0 BLEU, establishing a new "
    "state-of-the-art BLEU score of 28.4. On the WMT 2014 English-to-French translation task, our big model "
    "achieves a BLEU score of 41.0, outperforming all of the previously published single models, at less "
    "than 1/4 the training cost of the previous state-of-the-art model."
)
TABLE = (
    "Training time reported on 8×A100s GPUs. Model implementations OpenWebText (ppl) Training time (speedup) "
    "GPT-2 small - Huggingface 18.2 9.5 days (1.0×) GPT-2 small - FlashAttention 18.2 2.7 days (3.5×) "
    "GPT-2 medium - Huggingface 14.2 21.0 days (1.0×) GPT-2 medium - FlashAttention 14.3 6.9 days (3.0×)"
)


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return MiniLMEmbedder(threads=1)


@pytest.fixture(params=["rules", "rules+embedding"])
def embedder(request: pytest.FixtureRequest, minilm: Embedder) -> Embedder | None:
    """The checks hold with and without the embedder (it only helps find where a claim is said)."""
    return None if request.param == "rules" else minilm


@pytest.mark.parametrize(
    ("claim", "passage", "stated"),
    [
        ("The base Transformer uses 64 attention heads.", HEADS, False),  # 64 is the heads' dimension
        ("The Transformer employs 8 parallel attention heads.", HEADS, True),
        ("Each head has a dimension of 64.", HEADS, True),
        ("Each head has a dimension of 8.", HEADS, False),
        ("The big Transformer reaches 28.4 BLEU on English-to-German.", BLEU, True),
        ("The big Transformer reaches 41.0 BLEU on English-to-German.", BLEU, False),  # French's number
        ("On English-to-French the big model scores 41.0 BLEU.", BLEU, True),
        ("On English-to-Spanish the big model beats earlier systems by over 2 BLEU.", BLEU, False),
        ("The big transformer does not outperform earlier models on English-to-German.", BLEU, False),
        (
            "On English-to-German the big model beats earlier systems, ensembles included, by over 2 BLEU.",
            BLEU,
            True,
        ),
        ("Huggingface needs 21.0 days for GPT-2 medium.", TABLE, True),
        ("With FlashAttention, GPT-2 small trains in 2.7 days, a 3.5× speedup.", TABLE, True),
        ("Penguins migrate across frozen southern oceans every winter.", HEADS, False),
    ],
)
def test_claims_are_stated_or_not(claim: str, passage: str, stated: bool, embedder: Embedder | None) -> None:
    result = check_claim(claim, passage, embedder)
    assert result.supported is stated, result
    if not stated:
        assert result.kind and result.reason
    assert (
        passage[result.evidence_span[0] : result.evidence_span[1]] == result.evidence or not result.evidence
    )


ABSTRACT = (
    "Our model achieves 28.4 BLEU on the WMT 2014 English-to-German translation task, improving over the "
    "existing best results, including ensembles, by over 2 BLEU. On the WMT 2014 English-to-French "
    "translation task, our model establishes a new single-model state-of-the-art BLEU score of 41.8 after "
    "training for 3.5 days on eight GPUs."
)


def test_a_metric_named_next_to_another_number_does_not_take_the_claim_from_its_own() -> None:
    """From a real answer: "BLEU score of 41.8" sits nearer the words "BLEU score" than 28.4 does,
    but 28.4 is what the passage states about English-to-German."""
    claim = (
        "The Transformer achieves a BLEU score of 28.4 on the WMT 2014 English-to-German translation task."
    )
    assert check_claim(claim, ABSTRACT).supported
    assert check_claim(claim.replace("28.4", "41.8"), ABSTRACT).kind == "number"


def test_a_failed_claim_names_the_passage_sentence_it_was_held_against() -> None:
    result = check_claim("The base Transformer uses 64 attention heads.", HEADS)
    assert result.kind == "number" and "8" in result.reason
    assert "h = 8 parallel attention layers, or heads" in result.evidence


def test_direction_order_and_opposites() -> None:
    passage = "ViT-H/14 outperforms BiT-R152x4 on the Natural and Structured tasks. Accuracy is low."
    assert check_claim("ViT-H/14 outperforms BiT-R152x4 on the Natural tasks.", passage).supported
    assert check_claim("BiT-R152x4 outperforms ViT-H/14 on the Natural tasks.", passage).kind == "direction"
    assert check_claim("Accuracy is high.", passage).kind == "direction"


def test_odd_input_gets_a_verdict_not_an_error() -> None:
    assert check_claim("Anything at all.", "").status == "not_stated"
    assert check_claim("", HEADS).status == "not_stated"
    assert check_claim("Ünïcödé 42 % ☃", "Ünïcödé 42 % ☃ appears here.").status in ("supported", "not_stated")
    long = " ".join(["The model has 12 layers."] * 500)
    assert check_claim("The model has 12 layers.", long).supported
    assert [c.status for c in check_claims([], HEADS)] == []


CAPTION = (
    "Figure 4: Batch-Normalized Inception comparison with previous state of the art on the provided "
    "validation set comprising 50000 images. *BN-Inception ensemble has reached 4.82% top-5 error on the "
    "100000 images of the test set of the ImageNet as reported by the test server."
)


def test_a_number_stated_for_the_test_set_is_not_a_validation_figure() -> None:
    """From a real answer: "4.82% top-5 validation error" cited to the sentence that gives 4.82% for
    the test set (the caption's sentence before it names the validation set)."""
    wrong = check_claim(
        "The batch-normalized ensemble reaches 4.82% top-5 validation error on ImageNet.", CAPTION
    )
    assert wrong.kind == "number" and "test" in wrong.reason
    assert check_claim(
        "The batch-normalized ensemble reaches 4.82% top-5 test error on ImageNet.", CAPTION
    ).supported


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("On the noisy split with the large encoder the accuracy is 64%.", True),
        ("On the noisy split with the large encoder the accuracy is 81%.", False),
        ("On the clean split with the small encoder the accuracy is 81%.", True),
    ],
)
def test_numbers_listed_in_parallel_clauses_keep_their_own_words(claim: str, stated: bool) -> None:
    # Each number's words run to the clause break before the next: "…, 64% on the noisy split"
    # binds "noisy" to 64%, not to the 81% just before the comma.
    passage = (
        "Accuracy varies with the data (81% on the clean split with the small encoder, "
        "64% on the noisy split with the large encoder)."
    )
    assert check_claim(claim, passage).supported is stated


def test_a_failure_names_the_words_as_written_not_their_stems() -> None:
    passage = (
        "Figure 4: comparison on the provided validation set. *BN-Inception ensemble has reached 4.82% "
        "top-5 error on the images of the test set of the ImageNet."
    )
    qualified = check_claim("The ensemble reaches 4.82% top-5 validation error on ImageNet.", passage, None)
    assert qualified.reason == "the passage gives 4.82% for 'test', not 'validation'"
    turned = check_claim("The loss increases with more layers.", "The loss decreases with more layers.", None)
    assert turned.reason == "the passage says 'decreases' where this says 'increases'"


DATASETS = (
    "There are around 200,000 training questions and 25,000 test questions in the dataset. MNLI (SNLI) "
    "contains 400,000 (550,000) training pairs and 20,000 (10,000) test pairs respectively."
)
DECODING = (
    "We decode for 10 timesteps with a beam size of 15, and set the hyperparameters α, and β to, "
    "respectively, 2.0 and 0.8. The hyperparameters have been tuned on the development set (§5.1)."
)
SHOTS = (
    "For example, if you trained a model for 5-shot, 5-way classification, then you would show it 25 "
    "examples (5 per class) and ask it to classify a 26th example."
)


@pytest.mark.parametrize(
    ("claim", "passage", "stated"),
    [
        # the words a number counts ("25,000 test questions") or is the value of ("beam size of 15")
        ("The dataset has about 200,000 training questions.", DATASETS, True),
        ("The dataset has about 25,000 training questions.", DATASETS, False),
        ("MNLI has 400,000 training pairs.", DATASETS, True),  # past the bracketed parallel figure
        ("Decoding uses a beam size of 15.", DECODING, True),
        ("Decoding uses a beam size of 10.", DECODING, False),
        ("The model is shown 25 examples.", SHOTS, True),
        ("The model is shown 5 examples.", SHOTS, False),
        ("Each class contributes 5 examples.", SHOTS, True),  # "5 per class", said otherwise
    ],
)
def test_a_number_is_bound_to_the_words_it_counts(claim: str, passage: str, stated: bool) -> None:
    result = check_claim(claim, passage)
    assert result.supported is stated, result
    if not stated:
        assert result.kind == "number"


def test_a_section_sign_is_not_a_value() -> None:
    """ "(§5.1)" is where, not how much: a claim's 5.1 is not in the passage."""
    result = check_claim("The hyperparameter β is set to 5.1.", DECODING)
    assert result.kind == "number" and "not in the passage" in result.reason


def test_a_rounded_number_is_the_number_it_rounds() -> None:
    claim = "The Transformer scores about 28 BLEU on WMT 2014 English-to-German translation."
    assert check_claim(claim, ABSTRACT).supported
    # rounded, but the passage gives it for English-to-French
    assert check_claim(claim.replace("28", "42"), ABSTRACT).kind == "number"
    assert check_claim(claim.replace("28", "29"), ABSTRACT).kind == "number"


LEADERS = (
    "RAG answers 70% correctly using the 2016 index for 2016 world leaders and 68% using the 2018 index "
    "for 2018 world leaders. Accuracy with mismatched indices is low (12% with the 2018 index and 2016 "
    "leaders, 4% with the 2016 index and 2018 leaders)."
)


def test_the_numbers_around_a_number_must_not_gainsay_the_claims() -> None:
    """4% is stated next to "2016 index" and "2018 leaders": a claim of 4% for the 2018 index and
    2016 leaders says what the passage gives 12% for."""
    assert check_claim("With the 2016 index and 2018 leaders accuracy falls to 4%.", LEADERS).supported
    result = check_claim("With the 2018 index and 2016 leaders accuracy falls to 4%.", LEADERS)
    assert result.kind == "number" and "12%" in result.reason
