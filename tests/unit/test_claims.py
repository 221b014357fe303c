"""Claims checked for what they say (chat.claims): numbers bound to what they count, names, the
direction of a comparison and negation must agree with the sentence of the passage a claim rests on."""

from __future__ import annotations

import pytest

from chat.claims import check_claim, check_claims
from chat.names import holds_name
from chat.numbers import tokens, values
from chat.worked import worked_factor
from retrieval.embedder import Embedder

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

PARITY = (
    "All the models used the same architecture, a simple RNN with a single hidden layer containing 128 "
    "tanh units and a single logistic sigmoid output unit."
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
        # "a single hidden layer" counts one layer (a real answer gave the Adam paper's "two")
        ("The models used two hidden layers with 128 tanh units.", PARITY, False),
        ("The models used a single hidden layer with 128 tanh units.", PARITY, True),
        ("The models used one hidden layer with 128 tanh units.", PARITY, True),
        ("A single logistic unit outputs the parity with 128 tanh units.", PARITY, True),
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


# -- what a number is said of beyond the words next to it (chat.number_binding; issue 24) ------------

SIZES = "The base and large models reach 84.6 and 86.7 F1 on the dev set, respectively."
SPLITS = "The training, validation and test splits contain 8,000, 1,000 and 1,000 dialogues respectively."
NAMED = "BERT and RoBERTa reach 84.6 and 86.7 F1 on SQuAD."
BRACKETED = "ResNet-50 (ResNet-101) reaches 76.1% (77.4%) top-1 accuracy on ImageNet."
SMOOTHING = "We set the smoothing weights λ, and μ to, respectively, 0.3 and 0.05."


@pytest.mark.parametrize(
    ("claim", "passage", "stated"),
    [
        # "A and B … respectively, x and y": x is A's, y is B's
        ("The large model reaches 86.7 F1.", SIZES, True),
        ("The base model scores 84.6 F1 on the dev set.", SIZES, True),
        ("The large model reaches 84.6 F1.", SIZES, False),
        ("The base and large models score 84.6 and 86.7 F1 respectively.", SIZES, True),
        ("The base and large models score 86.7 and 84.6 F1 respectively.", SIZES, False),
        ("The training split has 8,000 dialogues.", SPLITS, True),
        ("The validation split contains 8,000 dialogues.", SPLITS, False),
        ("The smoothing weight mu is 0.05.", SMOOTHING, True),
        ("The smoothing weight lambda is 0.05.", SMOOTHING, False),
        # names in the same clause align without "respectively"
        ("RoBERTa reaches 86.7 F1 on SQuAD.", NAMED, True),
        ("BERT gets 84.6 F1.", NAMED, True),
        ("RoBERTa reaches 84.6 F1 on SQuAD.", NAMED, False),
        # "X (Y) … a (b)": b is Y's
        ("ResNet-101 reaches 77.4% top-1 accuracy.", BRACKETED, True),
        ("ResNet-50 has a top-1 accuracy of 76.1%.", BRACKETED, True),
        ("ResNet-101 reaches 76.1% top-1 accuracy.", BRACKETED, False),
    ],
)
def test_numbers_of_a_list_belong_to_the_items_they_are_aligned_with(
    claim: str, passage: str, stated: bool
) -> None:
    result = check_claim(claim, passage)
    assert result.supported is stated, result
    if not stated:
        assert result.kind == "number"


NOISY = (
    "The classifier reaches 91.2% accuracy on the clean test set, but only 63.5% on the noisy test set "
    "collected from forums."
)
BENCHMARKS = (
    "On HotpotQA our retriever reaches a recall@5 of 71.3%, while on NQ it reaches 82.0% and on TriviaQA "
    "79.4%."
)
FEWER = "Our corpus has fewer documents (1,200) than PubMedQA does (5,000)."
DECODE = (
    "With greedy decoding the model solves 41% of the problems, and with self-consistency over 40 samples "
    "it solves 57%."
)
PRUNING = (
    "Pruning removes 40% of the weights in the encoder and 25% in the decoder, with an accuracy drop of "
    "0.3 points."
)
TRAILING = "Model A obtains 72.1 BLEU and Model B 70.4 BLEU on the test set."


@pytest.mark.parametrize(
    ("claim", "passage", "stated"),
    [
        # the condition of each clause, far from its number or after it
        ("On clean test data the classifier reaches 91.2% accuracy.", NOISY, True),
        ("The classifier's accuracy on the noisy forum data is 63.5%.", NOISY, True),
        ("On the noisy forum test set the classifier reaches 91.2% accuracy.", NOISY, False),
        ("On NQ the retriever reaches a recall@5 of 82.0%.", BENCHMARKS, True),
        ("On TriviaQA the retriever reaches 79.4%.", BENCHMARKS, True),
        ("On NQ the retriever reaches a recall@5 of 71.3%.", BENCHMARKS, False),
        ("On TriviaQA the retriever reaches 82.0%.", BENCHMARKS, False),
        # the subject after "than" is the second number's
        ("PubMedQA has 5,000 documents.", FEWER, True),
        ("Our corpus has 1,200 documents.", FEWER, True),
        ("The corpus holds 1,200 documents, against 5,000 for PubMedQA.", FEWER, True),
        ("PubMedQA has 1,200 documents.", FEWER, False),
        # a claim's fronted phrase scopes its sentence; the first clause's noun is said of the second too
        ("Using self-consistency over 40 samples, it solves 57% of problems.", DECODE, True),
        ("Greedy decoding solves 41% of the problems.", DECODE, True),
        ("With self-consistency, the model solves 41% of the problems.", DECODE, False),
        ("Pruning removes 25% of the decoder's weights.", PRUNING, True),
        ("Pruning removes 40% of the encoder weights.", PRUNING, True),
        ("Pruning removes 40% of the decoder weights.", PRUNING, False),
        # what follows the last number, with nothing after the first, is said of both
        ("Model A reaches 72.1 BLEU on the test set.", TRAILING, True),
    ],
)
def test_numbers_in_parallel_clauses_belong_to_their_clause(claim: str, passage: str, stated: bool) -> None:
    result = check_claim(claim, passage)
    assert result.supported is stated, result
    if not stated:
        assert result.kind == "number"


def test_a_parallel_clause_failure_names_the_other_clause() -> None:
    result = check_claim("PubMedQA has 1,200 documents.", FEWER)
    assert result.reason == "the passage gives 5,000 for 'PubMedQA', not 1,200"


def test_a_bracketed_aside_is_its_numbers_own_clause() -> None:
    passage = "Each batch holds 64 sequences (8 per device) and is split into micro-batches."
    assert check_claim("Each batch holds 64 sequences and is split into micro-batches.", passage).supported
    assert check_claim("Each device gets 8 sequences of the batch.", passage).supported
    assert not check_claim("Each batch holds 8 sequences and is split into micro-batches.", passage).supported


SWEEP = "The batch size was varied from 16 to 256 during the sweep."
RATINGS = "Annotators rated each summary on a scale from 1 to 5, and 67–73% of the ratings were 4 or higher."


@pytest.mark.parametrize(
    ("claim", "passage", "stated"),
    [
        ("The batch size ranged between 16 and 256.", SWEEP, True),
        ("The batch size was varied from 32 to 256.", SWEEP, False),
        ("Between 67% and 73% of ratings were 4 or higher.", RATINGS, True),
        ("Summaries were rated on a 1-5 scale.", RATINGS, True),
        ("Summaries were rated on a scale from 2 to 5.", RATINGS, False),
    ],
)
def test_a_range_is_stated_with_both_its_ends(claim: str, passage: str, stated: bool) -> None:
    result = check_claim(claim, passage)
    assert result.supported is stated, result
    if not stated:
        assert result.kind == "number" and "range" in result.reason


def test_an_enumeration_mark_is_not_a_value() -> None:
    passage = "Our contributions are: (1) a new dataset; (2) A user study with 12 participants."
    assert check_claim("The user study had 12 participants.", passage).supported
    result = check_claim("The user study had 2 participants.", passage)
    assert result.kind == "number" and "not in the passage" in result.reason


def test_a_word_broken_at_a_line_end_is_read_whole() -> None:
    from chat.numbers import clean

    text = (
        "a 762M parame- ter model out- performs the English- to-German single- or multi-doc LM- oriented"
        " on Trivi- aQA"
    )
    assert clean(text) == (
        "a 762M parameter model outperforms the English-to-German single- or multi-doc LM-oriented"
        " on TriviaQA"
    )


# -- reading numbers as scientific prose writes them (issue 24, dev3's misses) ---------------------------

INTERCONNECT = (
    "Within a node, each link carries 600GB/sec over NVLink; across nodes the fabric offers only "
    "25 GB/sec per link. Loading the 40GB checkpoint takes 90s and a forward pass 35ms."
)


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("Inside a node each NVLink link carries 600 GB/sec.", True),
        ("Across nodes a link offers 25GB/sec.", True),
        ("A forward pass takes 35 ms.", True),
        ("Across nodes a link offers 600 GB/sec.", False),  # the NVLink figure
        ("The checkpoint is 25 GB.", False),
    ],
)
def test_a_unit_written_onto_its_number_leaves_the_number_readable(claim: str, stated: bool) -> None:
    result = check_claim(claim, INTERCONNECT)
    assert result.supported is stated, result


PREFERENCE = (
    "Raters preferred the tuned model to the base model 78 ± 4% of the time, and to the prompted base "
    "model 64 ± 5% of the time. Ratings averaged 4.12 (σ= 0.81) for the tuned model and 3.35 (σ= 0.97) "
    "for the base model."
)


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("The tuned model was preferred to the base model about 78% of the time.", True),
        ("Against the prompted base model, the tuned model won 64% of comparisons.", True),
        ("The base model received a mean rating of 3.35.", True),
        ("Against the prompted base model, the tuned model won 78% of comparisons.", False),
        ("The base model received a mean rating of 4.12.", False),
    ],
)
def test_an_error_bar_is_the_values_spread_not_a_rival_value(claim: str, stated: bool) -> None:
    result = check_claim(claim, PREFERENCE)
    assert result.supported is stated, result


def test_mathematical_letters_are_read_as_their_plain_forms() -> None:
    """PDF text writes 𝜇 and 𝜎 (U+1D707, U+1D70E) and ligatures ("ﬁne-tuned"); they are read as μ, σ
    and "fine-tuned", and the evidence is the passage as given."""
    passage = (
        "The ﬁne-tuned readers scored 5.2 (𝜇= 5.2, 𝜎= 1.4) on the 7-point scale, the others 4.1 (𝜎= 2.0)."
    )
    stated = check_claim("The fine-tuned readers scored 5.2 on average.", passage)
    assert stated.supported and stated.evidence == passage[stated.evidence_span[0] : stated.evidence_span[1]]
    assert check_claim("The fine-tuned readers scored 4.1 on average.", passage).kind == "number"
    assert check_claim("The mu of the fine-tuned readers was 5.2.", passage).supported


def test_a_scale_word_is_the_scale_letter() -> None:
    passage = "The corpus has 52k documents and 3.4M sentences, split into 12 thousand training files."
    assert check_claim("The corpus has 52 thousand documents.", passage).supported
    assert check_claim("The corpus has 3.4 million sentences.", passage).supported
    assert check_claim("There are 12k training files.", passage).supported
    assert check_claim("The corpus has 52 million documents.", passage).kind == "number"
    assert check_claim("The corpus has 3.4 thousand sentences.", passage).kind == "number"


def test_a_scale_after_a_is_a_number() -> None:
    from chat.numbers import values

    found = values("half a million steps, then a thousand more, for a few thousand euros")[1]
    assert [(v.text, v.value) for v in found] == [("half a million", 500_000.0), ("a thousand", 1000.0)]
    passage = "We train models with over 100 layers, and explore models with over 1000 layers."
    claim = "They train models with over 100 layers and explore models with over a thousand layers."
    assert stated(claim, passage)
    assert not stated(claim.replace("a thousand", "a million"), passage)


def test_a_size_in_lower_case_is_the_scale_letter() -> None:
    from chat.numbers import values

    found = values("the 7b and 70b models (Lee et al. 2021b), see Figure 3b")[1]
    assert [(v.text, v.value) for v in found] == [("7b", 7e9), ("70b", 70e9)]
    passage = "The 7b model reaches 31% accuracy, whereas the 70b model reaches 58%."
    assert stated("The 70B model reaches 58%.", passage)
    assert not stated("The 7B model reaches 58%.", passage)


def test_a_spelled_count_glued_to_what_it_counts_is_read() -> None:
    from chat.numbers import values

    assert [(v.text, v.value) for v in values("a three-layer encoder and a one-shot prompt")[1]] == [
        ("three-layer", 3.0)
    ]
    passage = "Annotators gave 312 five-point ratings over three sessions."
    assert stated("Annotators gave five-point ratings.", passage)
    assert not stated("Annotators gave seven-point ratings.", passage)


def test_a_section_whose_mark_was_lost_is_no_value() -> None:
    from chat.numbers import values

    words, found = values(
        "similar to the results presented in 3. We train in 3 stages, as in 4.2. It fell to 3."
    )
    assert [(words[v.start - 1], words[v.start + 1 : v.start + 2]) for v in found] == [
        ("in", ["stages"]),
        ("to", []),
    ]
    passage = (
        "Precision, recall and F1 were 61.2, 48.0 and 53.8, respectively; these are close to the "
        "supervised figures presented in 5."
    )
    assert stated("F1 was 53.8, close to the supervised figures.", passage)


def test_a_spelled_number_of_two_words_is_read() -> None:
    from chat.numbers import values

    assert [v.value for v in values("Twenty-four people and thirty-one teams")[1]] == [24.0, 31.0]


SURVEY = (
    "Of the 40 clinicians we interviewed, 1 in 4 had used a chatbot at work, and 31 out of 40 said they "
    "would try one. Nine in ten nurses reported 88% satisfaction with the pilot."
)


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("About 25% of the interviewed clinicians had used a chatbot at work.", True),  # "1 in 4"
        ("Roughly 78% of the clinicians said they would try a chatbot.", True),  # 31 out of 40 = 77.5%
        ("One in four clinicians had used a chatbot at work.", True),
        ("About 78% of the interviewed clinicians had used a chatbot at work.", False),  # the other ratio
        ("Roughly 25% said they would try a chatbot.", False),
        ("About 30% of the interviewed clinicians had used a chatbot at work.", False),
    ],
)
def test_a_ratio_states_the_percentage_it_rounds_to(claim: str, stated: bool) -> None:
    result = check_claim(claim, SURVEY)
    assert result.supported is stated, result


def test_a_percentage_states_a_ratio_of_a_small_whole() -> None:
    passage = (
        "In the follow-up, 79% of the annotators (38) preferred the new interface. Another 12% had no "
        "preference."
    )
    assert check_claim("About four in five annotators preferred the new interface.", passage).supported
    assert check_claim("About one in ten annotators had no preference.", passage).supported
    assert not check_claim("About four in five annotators had no preference.", passage).supported
    assert (
        check_claim("About three in five annotators preferred the new interface.", passage).kind == "number"
    )


GAINS = (
    "Distillation keeps most of the teacher's quality, with 2-4 points lower exact match on the held-out "
    "domains (61.2/70.4 vs. 64.8/73.9 for Biology and Law, respectively), while beating the baseline "
    "retriever (48.0/55.5)."
)


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("The distilled model loses 2 to 4 points of exact match on held-out domains.", True),
        ("On held-out domains the student scores between 2 and 4 points below the teacher.", True),
        ("The distilled model loses 2 to 5 points of exact match on held-out domains.", False),
        ("On Law, the distilled model reaches 70.4 exact match against 73.9 for the teacher.", True),
        ("On Biology, the distilled model reaches 61.2 exact match.", True),
        ("On Biology, the distilled model reaches 70.4 exact match.", False),  # Law's
        ("On Law, the teacher reaches 64.8 exact match.", False),  # Biology's
    ],
)
def test_ranges_and_slash_pairs_with_respectively(claim: str, stated: bool) -> None:
    result = check_claim(claim, GAINS)
    assert result.supported is stated, result


def test_a_bracketed_list_of_names_aligns_with_a_list_of_numbers() -> None:
    passage = (
        "On three corpora (Wiki, PubMed, ArXiv), recall is limited by the small number of queries in each "
        "(120, 340, and 95 queries, respectively)."
    )
    assert check_claim("PubMed has 340 queries.", passage).supported
    assert check_claim("ArXiv has only 95 queries.", passage).supported
    assert check_claim("PubMed has only 95 queries.", passage).kind == "number"


def test_an_acronym_of_named_words_is_named() -> None:
    passage = (
        "We train the reader on Natural Questions and test it on TriviaQA, where it reaches 61.2 exact match."
    )
    assert check_claim("The NQ-trained reader reaches 61.2 exact match on TriviaQA.", passage).supported
    assert (
        check_claim("The SQuAD-trained reader reaches 61.2 exact match on TriviaQA.", passage).kind
        == "entity"
    )


def test_a_spelled_number_is_bound_like_a_written_one() -> None:
    passage = (
        "The benchmark scores three aspects of fluency and five aspects of faithfulness. A total of 36 "
        "annotators (21 students) rated the outputs."
    )
    assert check_claim("The benchmark scores five aspects of faithfulness.", passage).supported
    assert check_claim("Thirty-six annotators rated the outputs.", passage).supported
    assert check_claim("The benchmark scores three aspects of faithfulness.", passage).kind == "number"
    assert check_claim("Twenty-one annotators rated the outputs.", passage).kind == "number"


def test_the_order_of_a_comparison_is_read_around_its_comparative_word() -> None:
    passage = (
        "On CoNLL and OntoNotes, the distilled TagLM still clearly outperforms the CRF baseline, though "
        "the scores reported by earlier work are lower."
    )
    assert check_claim("On CoNLL, the distilled TagLM outperforms the CRF baseline.", passage).supported
    swapped = check_claim(
        "On CoNLL and OntoNotes, the CRF baseline outperforms the distilled TagLM.", passage
    )
    assert swapped.kind == "direction"


def test_a_comparison_with_a_number_is_read_in_the_numbers_clause() -> None:
    passage = (
        "Judges found GPT-J more fluent than T5 in only 9.4% of pairs, while T5 was more fluent in 51.3% "
        "of pairs."
    )
    assert check_claim("Judges found T5 more fluent than GPT-J in about 51% of pairs.", passage).supported
    assert (
        check_claim("Judges found T5 more fluent than GPT-J in 9.4% of pairs.", passage).kind == "direction"
    )


def test_a_negated_phrase_stated_in_another_sentence_of_the_passage_is_stated() -> None:
    passage = (
        "We apply the parser to legal text without any domain adaptation. It keeps 91.4 labelled "
        "attachment score, 2 points below the in-domain model."
    )
    claim = "Without domain adaptation, the parser keeps 91.4 labelled attachment score on legal text."
    assert check_claim(claim, passage).supported
    assert check_claim("The parser does not keep 91.4 labelled attachment score.", passage).kind == "negation"


def test_a_spelled_number_rivals_a_written_one_only_about_the_same_thing() -> None:
    # "three different ways" counts ways, not heads: the claim is held against h = 8.
    passage = HEADS + (
        " 3.2.3 Applications of Attention in our Model The Transformer uses multi-head attention in three "
        "different ways: In encoder-decoder attention layers, the queries come from the previous decoder "
        "layer, and the memory keys and values come from the output of the encoder."
    )
    wrong = check_claim("The base Transformer uses 64 parallel attention heads.", passage)
    assert wrong.kind == "number" and "8" in wrong.reason and "three" not in wrong.reason
    assert check_claim("The base Transformer uses 8 parallel attention heads.", passage).supported
    spelled = "Nine volunteers rated the tool, and twelve volunteers tested its search."
    assert check_claim("Twelve volunteers rated the tool.", spelled).kind == "number"


# -- numbers as PDFs and paraphrases write them (a fourth, blind set: dev4) ----------------------------


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("The encoder contains 4.2 million parameters.", True),
        ("The encoder contains 42 million parameters.", False),
        ("Fine-tuning uses a learning rate of 0.0003.", True),
        ("Fine-tuning uses a learning rate of 0.003.", False),
        ("Weight decay is set to 0.00002.", True),
    ],
)
def test_powers_of_ten_are_read_as_one_number(claim: str, stated: bool) -> None:
    # a superscript exponent set on the line ("10⁶" extracted as "106"), e-notation, "× 10^-5"
    passage = (
        "The encoder contains 4.2 · 106 parameters. We fine-tune with a learning rate of 3e−4 "
        "and a weight decay of 2 × 10^-5 for 12 epochs."
    )
    assert check_claim(claim, passage).supported is stated
    assert check_claim("The batch holds 2 × 1024 tokens.", "The batch holds 2 × 1024 tokens.").supported


def test_spelled_numbers_with_a_scale_and_counts_the_passage_does_not_write() -> None:
    passage = (
        "We collect about 3000 hours of transcribed speech. We compare against BERT, RoBERTa and "
        "ELECTRA. The tokenizer keeps 8 special tokens."
    )
    assert check_claim("We collect about three thousand hours of transcribed speech.", passage).supported
    fewer = check_claim("We collect about three hundred hours of transcribed speech.", passage)
    assert fewer.kind == "number"
    # a count of the list, and "one" as a pronoun: no number of the passage says otherwise
    assert check_claim("We compare against three models: BERT, RoBERTa and ELECTRA.", passage).supported
    assert check_claim("The tokenizer, a small one, keeps 8 special tokens.", passage).supported
    # but a count the passage gives otherwise is held against it
    assert check_claim("The tokenizer keeps five special tokens.", passage).kind == "number"


def test_a_math_letter_glued_to_the_next_word_is_a_unit() -> None:
    passage = "The adapter adds roughly 7𝑀parameters to each layer of the 1.3B model."
    assert check_claim("The adapter adds about 7M parameters per layer.", passage).supported
    assert check_claim("The adapter adds about 9M parameters per layer.", passage).kind == "number"


def test_a_scale_word_is_part_of_its_number_and_a_rounded_neighbour_agrees() -> None:
    # "13 billion parameters" counts parameters (not "billion"); "about 41%" is the passage's 40.7%
    passage = (
        "The closed-book model reaches 40.7% accuracy with 13B parameters, whereas the retrieval model "
        "reaches 47.2% with 800M parameters and a search index."
    )
    assert check_claim(
        "The closed-book model, with 13 billion parameters, gets about 41% accuracy.", passage
    ).supported
    swapped = check_claim(
        "The closed-book model, with 800 million parameters, gets about 41% accuracy.", passage
    )
    assert swapped.kind == "number"


def test_two_numbers_of_the_claim_swapped_with_each_other_are_caught() -> None:
    passage = "The probe is trained on 20k sentences for 3k updates with a batch size of 64."
    assert check_claim("The probe is trained on 20,000 sentences for 3,000 updates.", passage).supported
    swapped = check_claim("The probe is trained on 3,000 sentences for 20,000 updates.", passage)
    assert swapped.kind == "number"
    # the claim's other number is no rival where the two are not crossed
    other = "Its test split has far fewer samples (350) than the training split does (9,000)."
    assert check_claim(
        "The training split has 9,000 samples, against 350 in the test split.", other
    ).supported


PRUNING = (
    "We prune the attention heads of a trained encoder. Removing the top layers gives steady speed-ups "
    "without hurting the accuracy on the held-out tasks. Neither the tokenizer nor the embeddings are "
    "changed. During the evaluation, the raters were unaware of the model that wrote each summary."
)


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        # "without" negates what follows it, not the speed-ups before it
        ("Removing the top layers gives steady speed-ups.", True),
        ("Removing the top layers fails to give speed-ups.", False),
        # "neither … nor" is one negation
        ("Neither the tokenizer nor the embeddings are changed.", True),
        ("Neither the tokenizer nor the embeddings are kept as they were.", True),
        ("The tokenizer and the embeddings are changed.", False),
        # a negative-prefixed predicate ("were unaware") is a negation
        ("The raters were not told which model wrote each summary.", True),
        ("The raters knew which model wrote each summary.", False),
    ],
)
def test_negation_cues_and_their_scope(claim: str, stated: bool) -> None:
    result = check_claim(claim, PRUNING)
    assert result.supported is stated, result
    if not stated:
        assert result.kind in ("negation", "direction"), result


DECODER = (
    "In the decoder we replace beam search with nucleus sampling, and the GELU activations are replaced "
    "by SwiGLU. Memory grows logarithmically with the context length, rather than linearly."
)


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("The decoder replaces beam search with nucleus sampling.", True),
        ("The decoder replaces nucleus sampling with beam search.", False),
        ("In the decoder, SwiGLU is used instead of GELU activations.", True),
        ("In the decoder, GELU activations are used in place of SwiGLU.", False),
        ("Memory grows logarithmically with the context length.", True),
        ("Memory grows linearly with the context length.", False),  # named only as what it does not do
    ],
)
def test_replacements_keep_their_roles(claim: str, stated: bool) -> None:
    result = check_claim(claim, DECODER)
    assert result.supported is stated, result
    if not stated:
        assert result.kind == "direction", result


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        # "Unlike A, B is …" says it of B
        ("Unlike Adam, Lion keeps a single momentum buffer per weight.", True),
        ("Unlike Lion, Adam keeps a single momentum buffer per weight.", False),
        # a claim that drops what the passage says ("rather than"), keeping nothing it says
        ("Each update reads only the current gradient rather than a window of past gradients.", True),
        ("Each update reads a window of past gradients rather than only the current gradient.", False),
    ],
)
def test_unlike_and_rather_than_keep_their_roles(claim: str, stated: bool) -> None:
    passage = (
        "Unlike Adam, Lion keeps a single momentum buffer per weight, which halves the optimiser's "
        "memory. Each update reads only the current gradient and that buffer."
    )
    result = check_claim(claim, passage)
    assert result.supported is stated, result


CONTRASTS = (
    "Our tokenizer is trained on the target corpus, in contrast to earlier systems that reuse a generic "
    "vocabulary. The adapters are layer specific, as opposed to task specific. Unlike Llama, Qwen is "
    "trained with a code-heavy mixture. We leave an analysis of multilingual transfer to future work. All "
    "four runs were configured identically (except the random seed) with the same optimiser and schedule."
)


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        # a contrast with what others do ("in contrast to systems that …") denies it of the subject
        ("The tokenizer does not reuse a generic vocabulary but is trained on the target corpus.", True),
        ("Like earlier systems, the tokenizer reuses a generic vocabulary.", False),
        # … but not what the sentence says of the subject, nor the name contrasted
        ("The adapters are layer specific.", True),
        ("Qwen is trained with a code-heavy mixture.", True),
        # what is left to future work is not done
        ("An analysis of multilingual transfer is not part of this work.", True),
        ("An analysis of multilingual transfer is part of this work.", False),
        # "except" sets apart only what it names
        ("The four runs were configured identically apart from the random seed.", True),
        ("The four runs were configured identically except for the optimiser.", False),
    ],
)
def test_contrasts_deferrals_and_exceptions_are_negations(claim: str, stated: bool) -> None:
    assert check_claim(claim, CONTRASTS).supported is stated


def test_each_statement_of_a_semicolon_claim_is_held_against_its_own_sentence() -> None:
    passage = (
        "Earlier pruning methods rely on fixed schedules. Our method is different: the "
        "sparsity of each layer is learned jointly with its weights. No schedule is tuned by hand."
    )
    stated = "The method does not tune a sparsity schedule by hand; each layer's sparsity is learned."
    assert check_claim(stated, passage).supported
    wrong = "The method tunes a sparsity schedule by hand; each layer's sparsity is learned."
    assert check_claim(wrong, passage).kind == "negation"


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        # less of a quantity of which less is better is better: "a lower latency" is "faster"
        ("The distilled parser is faster than the full parser.", True),
        ("The distilled parser is slower than the full parser.", False),
        ("Quantisation reduces the word error rate of the recogniser.", True),
        ("Quantisation increases the word error rate of the recogniser.", False),
    ],
)
def test_less_of_a_cost_is_better(claim: str, stated: bool) -> None:
    passage = (
        "The distilled parser has a much lower latency than the full parser on every treebank. With "
        "quantisation, the recogniser's word error rate improves slightly, from 7.9 to 7.6."
    )
    assert check_claim(claim, passage).supported is stated


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        # two contrasted clauses: each says what the passage's clause with most of its words says
        ("Hydra solved the maze in every run, whereas Gorgon never got past the first room.", True),
        ("Gorgon solved the maze in every run, whereas Hydra never got past the first room.", False),
        ("Shorter prompts work best for short answers, while longer prompts help on essays.", True),
        ("Longer prompts work best for short answers, while shorter prompts help on essays.", False),
    ],
)
def test_two_contrasted_clauses_keep_their_subjects(claim: str, stated: bool) -> None:
    passage = (
        "In the navigation study, Hydra solved the maze in every run, whereas Gorgon never got past the "
        "first room. For writing, shorter prompts work best for short answers, while longer prompts help "
        "on essays."
    )
    assert check_claim(claim, passage).supported is stated


def test_a_name_that_begins_the_claim_counts_in_the_order_of_a_comparison() -> None:
    passage = "Because it stores every gradient, Lion is three times slower per step than Sophia."
    assert check_claim("Lion is three times slower per step than Sophia.", passage).supported
    assert check_claim("Sophia is three times slower per step than Lion.", passage).kind == "direction"


def test_the_two_sides_of_a_comparison_keep_their_order_when_they_are_not_names() -> None:
    passage = (
        "In our runs, a cosine learning-rate schedule was more robust than a constant schedule across "
        "all seeds. Larger batches helped little."
    )
    stated = "Across all seeds, a cosine learning-rate schedule was more robust than a constant schedule."
    assert check_claim(stated, passage).supported
    swapped = "Across all seeds, a constant learning-rate schedule was more robust than a cosine schedule."
    assert check_claim(swapped, passage).kind == "direction"


def test_a_superlative_is_said_of_the_passage_s_own_subject() -> None:
    passage = (
        "We varied the optimiser settings one at a time. Tuning the warmup length produced the largest "
        "gains on every benchmark. Tuning the weight decay changed little."
    )
    assert check_claim("Tuning the warmup length produced the largest gains.", passage).supported
    assert check_claim("Tuning the weight decay produced the largest gains.", passage).kind == "direction"


def test_a_comparison_agrees_with_the_numbers_the_passage_gives_each_side() -> None:
    passage = (
        "After pruning half of its heads, the compact tagger reaches 91.2% accuracy. For reference, a dense "
        "tagger trained on the same 20,000 sentences reaches 88.4% accuracy."
    )
    stated = "The compact tagger outperforms the dense tagger trained on 20,000 sentences."
    assert check_claim(stated, passage).supported
    swapped = "The dense tagger trained on 20,000 sentences outperforms the compact tagger."
    assert check_claim(swapped, passage).kind == "direction"


def test_two_names_listed_with_their_numbers_are_not_ordered_by_the_passage() -> None:
    passage = "We measure perplexities of 14.2 (Hyena) and 19.8 (Mamba) on PG-19, and both train stably."
    assert check_claim("On PG-19, Mamba's perplexity of 19.8 is well above Hyena's 14.2.", passage).supported


def test_names_all_before_the_comparative_word_are_a_condition_and_a_subject() -> None:
    passage = (
        "Adding the retrieved abstracts improved Falcon-7B on SciQ by more than 4 points (from 71.2% to "
        "75.6%), and on PubMedQA by 2 points."
    )
    claim = "On SciQ, Falcon-7B gained more than four points, reaching about 76%."
    assert check_claim(claim, passage).supported


def test_a_comparative_broken_at_a_line_end_still_orders_the_names() -> None:
    passage = "On CoLA, we find that the Pythia models consistently out- perform the Bloom models."
    stated = check_claim("On CoLA, the Pythia models consistently outperform the Bloom models.", passage)
    assert stated.supported
    swapped = check_claim("On CoLA, the Bloom models consistently outperform the Pythia models.", passage)
    assert swapped.kind == "direction"


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("The model reaches 28.4 BLEU on WMT 2014 English-to-German.", True),
        ("The model reaches 28.4 BLEU on WMT 2014 English-to-Japanese.", False),
        ("The Fusion-in-Encoder reader is trained on 100 passages.", False),
        ("The Fusion-in-Decoder reader is trained on 100 passages.", True),
    ],
)
def test_a_name_of_joined_words_with_one_part_swapped_is_another_name(claim: str, stated: bool) -> None:
    passage = (
        "The Fusion-in-Decoder reader is trained on 100 passages per question. On WMT 2014 English-to-German "
        "it reaches 28.4 BLEU, and on WMT 2014 English-to-French 41.0 BLEU."
    )
    assert (check_claim(claim, passage).status == "supported") is stated


# A chunk as the PDF gives it: it starts with the section's and the subsection's headings.
RESULTS = (
    "6 Results 6.1 Machine Translation On the WMT 2014 English-to-German translation task, the big "
    "transformer model (Transformer (big) in Table 2) outperforms the best previously reported models "
    "(including ensembles) by more than 2.0 BLEU, establishing a new state-of-the-art BLEU score of 28.4. "
    "The configuration of this model is listed in the bottom line of Table 3. Training took 3.5 days on "
    "8 P100 GPUs."
)


def stated(claim: str, passage: str) -> bool:
    return check_claim(claim, passage).status == "supported"


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The Transformer reached a BLEU score of 28.4 on the English-to-German translation task.", True),
        ("The big Transformer reaches 28.4 BLEU on English-to-German.", True),
        ("The big Transformer beats the best earlier models by over 2 BLEU.", True),
        ("The big Transformer reaches 2.0 BLEU on English-to-German.", False),
        ("The big Transformer reaches 3.5 BLEU on English-to-German.", False),
    ],
)
def test_headings_and_margins_are_not_rivals_of_a_score(claim: str, said: bool) -> None:
    """ "6.1" heads a subsection and "by more than 2.0 BLEU" is a margin: neither is a score."""
    assert stated(claim, RESULTS) is said


def test_a_margin_is_no_rival_of_the_level_it_leads_to() -> None:
    passage = (
        "On the held-out split our reader improves over the strongest baseline by about 3.1 points, reaching "
        "an exact match of 71.4 on the English questions."
    )
    assert stated("The reader reaches an exact match of 71.4 on the English questions.", passage)
    assert not stated("The reader reaches an exact match of 3.1 on the English questions.", passage)
    assert stated("The reader beats the strongest baseline by about 3 points.", passage)


def test_the_numbers_of_a_section_heading_at_a_chunk_s_start_are_no_values() -> None:
    passage = (
        "5 Experiments 5.2 Image Classification We fine-tune the large model for 20 epochs and reach 84.2% "
        "top-1 accuracy on the validation images."
    )
    assert stated("The large model reaches 84.2% top-1 accuracy in image classification.", passage)
    assert not stated("The large model reaches 20% top-1 accuracy in image classification.", passage)


@pytest.mark.parametrize(
    ("claim", "passage", "said"),
    [
        # a factor written with a capital X
        (
            "The kernel gives a speedup of at least 2.5 times.",
            "Our kernel gives a speedup of 2.5X or more.",
            True,
        ),
        (
            "The kernel gives a speedup of at least 3.5 times.",
            "Our kernel gives a speedup of 2.5X or more.",
            False,
        ),
        # the number after "@" is part of a metric's name, not a value
        (
            "The reranker improves nDCG@10 by about 7%.",
            "The reranker improves nDCG@1 and nDCG@10 by 4.2% and 6.9%, respectively.",
            True,
        ),
        # a round figure with a scale states the exact number it rounds ("8K" for 8192)
        (
            "Training uses batches of about 8K tokens for 3 days.",
            "We train with batches of 8192 tokens for 3 days.",
            True,
        ),
        (
            "Training uses batches of about 3K tokens for 3 days.",
            "We train with batches of 8192 tokens for 3 days.",
            False,
        ),
        # a version number that the passage writes onto its name
        ("On GLUE 2.0 the model scores 81.", "On GLUE2.0 the model scores 81, and 77 on SuperGLUE.", True),
        # thousands set apart by a space, as typeset papers write them
        (
            "Each of the 12 tasks has one thousand training examples.",
            "The suite has 12 tasks, using 1 000 training examples per task and 600 for testing.",
            True,
        ),
        (
            "Each of the 12 tasks has 600 training examples.",
            "The suite has 12 tasks, using 1 000 training examples per task and 600 for testing.",
            False,
        ),
        # a lower-case section reference is no value
        (
            "Without the correction, a decay close to 1 leads to very large steps and divergence.",
            "This matters for a decay close to 1, since not correcting leads to very large steps and "
            "divergence, as shown in section 6.4.",
            True,
        ),
    ],
)
def test_numbers_as_papers_write_them(claim: str, passage: str, said: bool) -> None:
    assert stated(claim, passage) is said


def test_a_name_s_size_broken_at_a_line_end_is_no_value() -> None:
    from chat.numbers import values

    _, found = values("adding documents improved OPT- 66B by more than 4 points")
    assert [v.text for v in found] == ["4"]


def test_a_row_of_table_cells_is_not_read_as_thousands() -> None:
    from chat.numbers import values

    _, found = values("ViT-Base 12 768 3072 12 86M, using 1 000 examples")
    assert [v.value for v in found] == [12, 768, 3072, 12, 86e6, 1000]


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # two statements of one subject from two sentences of the passage
        ("The ranker reaches an F1 score of 81% and a recall of 90%.", True),
        # a number of another subject's sentence does not carry the name over
        ("The baseline reaches an F1 score of 81% and a recall of 90%.", False),
    ],
)
def test_a_claim_may_join_two_sentences_of_one_subject(claim: str, said: bool) -> None:
    passage = (
        "We compare our ranker against a BM25 baseline on 300 queries. The results show that our ranker "
        "achieves an F1 score of 81%, ahead of the baseline by 9%. With reasoning before the decision, the "
        "performance is comparable. Lastly, the ranker's recall reaches "
        "90%, which matters most for RL training."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # two facts joined: the numbers choose the first sentence, the denial is the second's
        ("The probes were run on 4, 8 and 16 layers, with no extra warm-up for the deeper ones.", True),
    ],
)
def test_a_negated_claim_with_numbers_may_rest_on_a_sentence_that_denies_it(claim: str, said: bool) -> None:
    passage = (
        "We train probes on 4, 8 and 16 layers of the encoder. We do not add an extra warm-up for the "
        "deeper probes and keep the schedule of the shallow ones."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # "without using" denies the labels, not every use
        ("Our tagger does not use gold labels; it only uses the raw sentences of the corpus.", True),
        ("Our tagger uses gold labels and the raw sentences of the corpus.", False),
        # a bound is no negation
        ("Most annotators (14 people) had labelled no more than two corpora before.", True),
    ],
)
def test_light_verbs_and_bounds_do_not_carry_a_negation(claim: str, said: bool) -> None:
    passage = (
        "A related tagger is trained with gold labels from the treebank. Our tagger only leverages the "
        "raw sentences of the corpus, without using gold labels. 70% of annotators (14) had labelled 2 or "
        "fewer corpora before and 85% (17) had never joined a shared task."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Per-channel gating cannot be used when sequence lengths vary.", True),
        # the other sentence denies something else than this claim does
        ("Per-channel gating does not improve perplexity for fixed length sequences.", False),
    ],
)
def test_a_negated_claim_rests_on_the_sentence_that_denies_it(claim: str, said: bool) -> None:
    passage = (
        "Per-Channel Gating: the model has per-channel learnable gating scalars after the softmax, which "
        "improves perplexity for fixed length sequences. However, these scalars cannot be used for "
        "variable sequence lengths."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Layer norm is applied after each pooling step and before the nonlinearity.", True),
        # what the passage puts before, the claim puts after
        ("Layer norm is applied after the nonlinearity rather than before it.", False),
        ("The gating weights sit before the output softmax.", False),
    ],
)
def test_before_and_after_are_held_to_what_they_place(claim: str, said: bool) -> None:
    passage = (
        "We apply layer norm right after each pooling step and before the nonlinearity. "
        "The model also has learnable gating weights after the output softmax."
    )
    assert stated(claim, passage) is said


def test_every_opposite_is_a_stem_the_checker_meets() -> None:
    """A pair written as stems the tokenizer never makes ("before" is stemmed "befor") can never
    fire; the pairs are written as words and stemmed once."""
    from chat.polarity import _ANTONYMS

    assert ("befor", "after") in _ANTONYMS
    assert ("supervis", "unsupervis") in _ANTONYMS
    assert stated("Unsupervised pre-training is used.", "Supervised pre-training is used.") is False


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The base models were trained for 100,000 steps.", True),
        ("The big models were trained for 300,000 steps.", True),
        # the count of the big models said of the base ones, and the other way round
        ("The base models were trained for 300,000 steps.", False),
        ("The big models were trained for 100,000 steps.", False),
    ],
)
def test_one_of_two_kinds_the_passage_contrasts_is_not_the_other(claim: str, said: bool) -> None:
    passage = (
        "We trained the base models for a total of 100,000 steps or 12 hours. For our big models, step "
        "time was 1.0 seconds. The big models were trained for 300,000 steps (3.5 days)."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # the words after "instead of 12" are the 8's too
        ("The encoder uses eight transformer layers.", True),
        ("The encoder uses 12 attention heads.", False),
        # a short form of what is measured, and a number in words with two scales
        ("On the held-out set the model reaches a perplexity of 10.7.", True),
        ("On the held-out set the model reaches a perplexity of 9.7.", False),
        ("The test set holds one hundred thousand images.", True),
    ],
)
def test_numbers_given_in_place_of_others_short_forms_and_spelled_scales(claim: str, said: bool) -> None:
    passage = (
        "The encoder uses 8 instead of 12 transformer layers and 16 attention heads. On the held-out "
        "set the model reaches 10.7 ppl, and on the dev set a perplexity of 9.7. The test set holds "
        "100000 images."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # ".211" is 0.211; the sentence names the test set too, so "validation" near it is no contrast
        ("On the hidden test set the model reaches 0.211 unigram F1.", True),
        ("On the hidden test set the model reaches 0.311 unigram F1.", False),
    ],
)
def test_a_decimal_without_its_zero_and_a_sentence_naming_both_sets(claim: str, said: bool) -> None:
    passage = (
        "We also evaluated the model on the hidden test set, which was never released, and achieved "
        "12.4 ppl and .211 UF1, matching the performance of the validation set. On the public split "
        "it obtained a perplexity of 11.2."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # a list that gives the shared prefix once ("Mixer-S/32, B/16 and H/14") names each
        ("Mixer-H/14 was trained for 30 epochs.", True),
        ("Mixer-X/14 was trained for 30 epochs.", False),
    ],
)
def test_a_name_in_a_list_that_gives_its_prefix_once(claim: str, said: bool) -> None:
    passage = (
        "We compare three sizes. The models Mixer-S/32, B/16 and H/14 were trained for 30 epochs; "
        "the hybrids R26+Mixer-S/16 and L/16 were trained for 10 epochs on the same data."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # what a part is said to be ("… were female") is its number's, as much as "annotators"
        ("Five of the annotators were female.", True),
        ("Seven of the annotators were female.", False),
        ("Nine of the annotators were PhD students.", True),
        ("Three of the annotators were PhD students.", False),
    ],
)
def test_a_part_of_a_group_is_bound_to_what_it_is_said_to_be(claim: str, said: bool) -> None:
    passage = (
        "We hired twelve annotators from two labs (median age 31; 7 male and 5 female; 9 PhD students "
        "and 3 engineers)."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "passage", "said"),
    [
        # "seven" is a number the number checks judge, not a word the passage must hold
        ("Seven ResNets, six ViTs and five hybrids were compared.", "SIZES", True),
        ("Seven ResNets, five ViTs and five hybrids were compared.", "SIZES", False),
        # the "times" of "five to ten times" is the factor's, not the "wall-clock time" of another sentence
        (
            "As its curvature updates are costly, SFO is five to ten times slower per iteration than Adam.",
            "SFO",
            True,
        ),
        (
            "As its curvature updates are costly, Adam is five to ten times slower per iteration than SFO.",
            "SFO",
            False,
        ),
    ],
)
def test_numbers_in_words_are_judged_as_numbers_not_looked_for_as_words(
    claim: str, passage: str, said: bool
) -> None:
    passages = {
        "SIZES": "The comparison covers 7 ResNets, 6 ViTs and 5 hybrids, all pre-trained on the same corpus. "
        "Every model is then fine-tuned for 10 epochs.",
        "SFO": "Figure 2 shows that Adam makes faster progress in both iterations and wall-clock time. "
        "Due to the cost of its curvature updates, SFO is 5-10x slower per iteration than Adam.",
    }
    assert stated(claim, passages[passage]) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # a scale word joined to its number by a hyphen ("30-million passages") scales it
        ("Embedding the 30 million passages takes six hours.", True),
        ("Embedding the 4 million passages takes six hours.", False),
    ],
)
def test_a_scale_joined_to_its_number_by_a_hyphen(claim: str, said: bool) -> None:
    passage = "Computing embeddings on 30-million passages takes 6 hours on 4 GPUs, and indexing 2 hours."
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("text", "name", "held"),
    [
        ("a variant of Adam based on the infinity norm", "Adam", True),
        ("AdaMax, based on the infinity norm", "Adam", False),
        ("RoBERTa and DistilBERT", "BERT", False),
        ("fine-tuned mBERT", "BERT", False),
        ("GPT-3.5 and GPT-4", "GPT-3", False),
        ("as reported for GPT-3.", "GPT-3", True),
        ("FlashAttention is 3× faster", "FlashAttention-3", False),
        ("Transformer XL", "Transformer-XL", True),
        ("SQuAD1.1", "SQuAD 1.1", True),
        ("ColBERT v2", "ColBERTv2", True),
        ("two LSTMs", "LSTM", True),
        ("ResNet50 features", "ResNet", True),
        ("BERTBASE and BERTLARGE", "BERT", True),  # a subscript lost in the PDF's text
        ("DMLP = 2048", "MLP", True),
        ("only 215Gb", "GB", True),
        ("ResNet-152", "ResNet-15", False),
        ("15.3/19.6 bil- lion FLOPs", "Lion", False),
        ("Jakob Uszkoreit, Llion Jones", "Lion", False),
        ("we clip the gradients", "CLIP", False),
        ("Retro models", "RETRO", True),
    ],
)
def test_a_name_is_held_alone_not_as_a_piece_of_another(text: str, name: str, held: bool) -> None:
    assert holds_name(text, name) is held


ADAMAX = (
    "Algorithm 2: AdaMax, a variant of Adam based on the infinity norm. See section 7.1 for details. "
    "Good default settings for the tested machine learning problems are α = 0.002, β1 = 0.9 and "
    "β2 = 0.999. With βt1 we denote β1 to the power t."
)


def test_a_sentence_naming_nothing_is_about_the_name_before_it_not_a_kindred_one(
    embedder: Embedder | None,
) -> None:
    """The defaults are AdaMax's: the paragraph names Adam too, but only as what AdaMax varies."""
    claim = "The default settings for Adam are α = 0.002, β1 = 0.9 and β2 = 0.999."
    wrong = check_claim(claim, ADAMAX, embedder)
    assert not wrong.supported and "AdaMax" in wrong.reason
    # the title names Adam and would run into the passage's first sentence
    titled = check_claim(claim, ADAMAX, embedder, context="Adam: A Method for Stochastic Optimization")
    assert not titled.supported and "AdaMax" in titled.reason
    right = "Good default settings for AdaMax are α = 0.002, β1 = 0.9 and β2 = 0.999."
    assert check_claim(right, ADAMAX, embedder).supported
    base = (
        "Table 1: BERTBASE results on GLUE. We fine-tune for 3 epochs. "
        "The batch size is 32 and the learning rate is 2e-5."
    )
    assert check_claim("BERT is fine-tuned with a batch size of 32.", base, embedder).supported


def test_a_passage_cut_after_its_name_is_read_with_the_text_before_the_cut(embedder: Embedder | None) -> None:
    """A small model reads "See section 7.1 … α = 0.002" cut from the AdaMax paragraph: the claim
    check reads what was cut away before it to know the numbers are AdaMax's."""
    cut = ADAMAX.index("See section")
    lead, passage = ADAMAX[:cut], ADAMAX[cut:]
    claim = "The default settings for Adam are α = 0.002, β1 = 0.9 and β2 = 0.999."
    title = "Adam: A Method for Stochastic Optimization"
    assert check_claims([claim], passage, embedder, title)[0].supported  # what it read names nothing
    [found] = check_claims([claim], passage, embedder, title, lead)
    assert not found.supported and "AdaMax" in found.reason
    assert found.evidence and found.evidence in passage  # held against what the model read
    right = "Good default settings for AdaMax are α = 0.002, β1 = 0.9 and β2 = 0.999."
    assert check_claims([right], passage, embedder, title, lead)[0].supported


def test_a_joined_name_said_the_other_way_round_is_another_name(embedder: Embedder | None) -> None:
    passage = (
        "On the WMT 2014 English-to-German translation task, the big Transformer reaches a BLEU score "
        "of 28.4, and 41.8 on English-to-French, at a fraction of the training cost."
    )
    wrong = "The big Transformer reaches 28.4 BLEU on WMT 2014 German-to-English translation."
    checked = check_claim(wrong, passage, embedder)
    assert not checked.supported and "English-to-German" in checked.reason
    right = "The big Transformer reaches 28.4 BLEU on WMT 2014 English-to-German translation."
    assert check_claim(right, passage, embedder).supported


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The default β2 is 0.995.", True),
        ("The default settings are α = 0.002 and β1 = 0.85.", True),
        ("With a batch of 64, β1 = 0.85 and β2 = 0.995.", True),
        # the value of another symbol ("β1 = 0.85"), said of this one
        ("We train with 0.85 as the default setting of β2.", False),
        ("The default settings have β2 = 0.85.", False),
    ],
)
def test_a_value_assigned_to_a_symbol_is_that_symbols(claim: str, said: bool) -> None:
    passage = "We train with the default settings α = 0.002, β1 = 0.85, β2 = 0.995 and a batch of 64."
    checked = check_claim(claim, passage)
    assert (checked.status == "supported") is said
    assert said or checked.kind == "number"


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The encoder has 12 layers.", True),
        ("The encoder uses 12 layers rather than 24.", True),
        ("The encoder has 24 layers.", False),  # the number put aside
    ],
)
def test_a_number_put_aside_is_not_the_one_used(claim: str, said: bool) -> None:
    passage = "The encoder uses the same blocks as BERT, but with 12 instead of 24 layers and 768 units."
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The kernel speeds up training on BERT by 3.2×.", True),
        ("The kernel speeds up training on BERT by 1.5×.", False),
    ],
)
def test_a_factor_after_by_is_the_factor_not_a_difference(claim: str, said: bool) -> None:
    passage = "The new kernel speeds up training 3.2× on BERT. It speeds up inference 1.5× on GPT-2."
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The 350M model keeps gaining up to 8 retrieved passages.", True),
        ("The 13B model keeps gaining up to 32 retrieved passages.", True),
        ("The 350M model keeps gaining up to 32 retrieved passages.", False),
        ("The 13B model keeps gaining up to 8 retrieved passages.", False),
    ],
)
def test_models_named_by_their_size_tell_parallel_clauses_apart(claim: str, said: bool) -> None:
    passage = (
        "We find that bigger readers make better use of more context: the 350M model keeps gaining up "
        "to 8 retrieved passages, whereas the 13B model keeps gaining up to 32 retrieved passages."
    )
    assert stated(claim, passage) is said


def test_a_rank_is_no_name() -> None:
    from chat.names import names

    assert names("Our ensemble won the 1st place in the ILSVRC 2015 competition, and the 2nd in COCO.") == [
        "ILSVRC",
        "COCO",
    ]


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # "without" and "with" of one thing are the two sides of a comparison, not a negation
        ("The 3B model reaches 61.4% utilization when the cache is counted and 58.9% without it.", True),
        ("Without the cache the 3B model reaches 58.9% utilization.", True),
        # a condition denied where the passage states none
        ("The 3B model reaches its utilization without gradient checkpointing.", False),
    ],
)
def test_with_and_without_one_thing_is_a_pair_not_a_negation(claim: str, said: bool) -> None:
    passage = (
        "The 3B model is trained with gradient checkpointing on 64 chips. Its utilization is 58.9% "
        "without the cache or 61.4% with it, well above the 42.0% of the 1B baseline."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # a claim giving each side its number is held to its own numbers' order, not the passage's others
        ("The sparse kernel performs more GFLOPs than the dense one, 81.4 versus 70.2.", True),
        ("The sparse kernel needs less memory traffic than the dense one, 3.9 GB against 38.5 GB.", True),
        ("The sparse kernel performs fewer GFLOPs than the dense one, 81.4 versus 70.2.", False),
        ("The sparse kernel needs more memory traffic than the dense one, 3.9 GB against 38.5 GB.", False),
    ],
)
def test_a_comparison_with_both_numbers_follows_them(claim: str, said: bool) -> None:
    passage = (
        "Kernel Dense Sparse GFLOPs 70.2 81.4 Memory traffic (GB) 38.5 3.9 Runtime (ms) 44.0 6.1 "
        "Figure 3: the dense and the sparse kernel on one layer; block sizes 2 4 8 16."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # "independent of" denies a dependence as "does not depend on" does
        ("The memory cost per token does not depend on the batch size.", True),
        ("The memory cost per token depends on the batch size.", False),
    ],
)
def test_independent_of_is_a_negation(claim: str, said: bool) -> None:
    passage = (
        "The cache needs 2(LD) floats per token, so the memory cost per token is independent of the "
        "batch size. It grows linearly with the number of layers L."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        (
            "The fused kernel is a little faster than cuDNN at inference and a little slower in training.",
            True,
        ),
        # the two clauses' directions exchanged
        (
            "The fused kernel is a little slower than cuDNN at inference and a little faster in training.",
            False,
        ),
    ],
)
def test_two_comparisons_joined_by_and_keep_their_directions(claim: str, said: bool) -> None:
    passage = (
        "On the A100 the fused kernel is a little faster than cuDNN at inference and a little slower "
        "than cuDNN in training, because it recomputes the attention matrix in the backward pass."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("DeiT-B has a 2.1% higher AP@[.5, .95] than ViT-B.", True),
        # the two compared the other way round, the clause read past the comma inside brackets
        ("ViT-B has a 2.1% higher AP@[.5, .95] than DeiT-B.", False),
    ],
)
def test_a_comma_inside_brackets_ends_no_clause(claim: str, said: bool) -> None:
    passage = "On the detection benchmark, DeiT-B has a 2.1% gain of AP@[.5, .95] over ViT-B, at equal cost."
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The 34-layer network beats the 18-layer network by 2.8%.", True),
        # one name on both sides, told apart by the number joined to it, and "beats" compares
        ("The 18-layer network beats the 34-layer network by 2.8%.", False),
        ("The 18-layer network surpasses the 34-layer network by 2.8%.", False),
    ],
)
def test_sides_of_one_name_told_apart_by_their_numbers(claim: str, said: bool) -> None:
    passage = (
        "With residual learning the situation is reversed: the 34-layer network is better than the "
        "18-layer network (by 2.8%), and it has a considerably lower training error."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Each epoch consisted of 250 gradient steps.", True),
        ("The corpus splits into shards of 64 documents.", True),
        # a difference "by" a comparative verb is still one
        ("Each epoch consisted of 12 gradient steps.", False),
    ],
)
def test_by_after_a_verb_of_making_or_dividing_is_no_difference(claim: str, said: bool) -> None:
    passage = (
        "Training ran for 40 epochs, each one formed by 250 gradient steps, and the corpus was divided by "
        "64 into shards of documents. The schedule improved accuracy by 12 points over the baseline."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The corpus holds about 31 billion tokens of Spanish.", True),
        # the other item of the pair, whose scale both share
        ("The corpus holds about 35 billion tokens of Spanish.", False),
    ],
)
def test_a_scale_word_after_a_pair_scales_both(claim: str, said: bool) -> None:
    passage = (
        "Most languages are well covered: Spanish and Italian have roughly 31 and 35 billion tokens in the "
        "corpus respectively, while Basque has only 90 million tokens."
    )
    assert stated(claim, passage) is said


def test_a_word_broken_at_a_line_end_is_read_whole_in_a_name() -> None:
    passage = (
        "Table 2 shows our contrastive decoder on all models. We saw large gains from Contras- tive "
        "Decoding on every model. The error rate of the small model fell from 12.4 to 9.1, and that of the "
        "large one from 8.0 to 7.2."
    )
    assert stated("Contrastive decoding cut the small model's error rate from 12.4 to 9.1.", passage)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The ConvNet ensemble reaches 4.1% error on the test set.", True),
        # a name the passage writes nowhere, in whole words or in short
        ("The MobileNet ensemble reaches 4.1% error on the test set.", False),
    ],
)
def test_a_joined_name_stands_for_the_words_it_joins(claim: str, said: bool) -> None:
    passage = "Our ensemble of deep convolutional nets reaches 4.1% error on the test set, a new best."
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Falcon, a 40B-parameter model, saw 1.5 trillion tokens.", True),
        ("Falcon, a 40B-parameter model, saw 1.2 trillion tokens.", False),
    ],
)
def test_a_heading_gives_its_row_a_scale(claim: str, said: bool) -> None:
    passage = (
        "Falcon Llama MPT Parameters (Billions) 40 65 30 Tokens (Billions) 1500 1400 1000 "
        "Accuracy 71.3 72.5 68.9 Table 2: The three models compared."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Fine-tuning the large model took roughly 4 to 13 hours.", True),
        ("Fine-tuning the large model took roughly 2 to 13 hours.", False),
    ],
)
def test_a_range_may_round_its_ends(claim: str, said: bool) -> None:
    passage = (
        "Fine-tuning the small model takes between 1.6-5.2 hours, and fine-tuning the large model takes "
        "between 4.1-13.0 hours on one node."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The runs lasted from 18 to 95 minutes.", True),
        # the least of the list is not where the range starts
        ("The runs lasted from 40 to 95 minutes.", False),
    ],
)
def test_a_range_may_span_a_list(claim: str, said: bool) -> None:
    passage = "All five runs finished before the deadline (18, 40, 52, 77, 95 minutes respectively)."
    assert stated(claim, passage) is said


def test_a_scale_may_round_a_count() -> None:
    passage = "After deduplication we keep 4,317,092 documents as the corpus and 2110 queries for testing."
    assert stated("About 4.32 million documents remain after deduplication.", passage)
    assert not stated("About 4.12 million documents remain after deduplication.", passage)


def test_a_task_number_is_no_value() -> None:
    passage = (
        "FiQA-2018 Task 2 consists of opinion questions. We randomly sample out 500 and 648 queries from "
        "the original training split as dev and test splits."
    )
    assert stated("For FiQA-2018, 500 queries were sampled for dev and 648 for test.", passage)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The best learning rate was 10−5.", True),
        ("Fine-tuning used a learning rate of 1e-5.", True),
        # the grid's other end
        ("The best learning rate was 10−3.", False),
    ],
)
def test_ten_and_a_minus_sign_is_a_power_of_ten(claim: str, said: bool) -> None:
    passage = (
        "We searched learning rates from 10−8 to 10−3 with a batch of 16 sequences. We found that 10−5 "
        "was the best-performing learning rate for fine-tuning."
    )
    assert stated(claim, passage) is said


def test_a_number_the_claim_rounds_elsewhere_is_no_rival() -> None:
    # "about 4 tCO2e" is the 3.97: not a rival of "roughly 1.6" (the 1.59 it rounds)
    passage = (
        "To estimate the carbon emissions for our sweep, we build off of the measurements of Lee et al. "
        "Their emissions estimate for a sweep is 5.1 tCO2e for 900 days of GPU usage. Here, we use 700.5 "
        "days of GPU compute for our sweep. Thus, the proportional emissions estimate for our sweep is "
        "5.1 tCO2e ∗700.5 900 = 3.97 tCO2e. For comparison, a round trip plane ticket from Paris to Tokyo "
        "for a single passenger is ∼2.5 tCO2e [12] and so our sweep costs roughly 1.59 such plane tickets."
    )
    claim = (
        "The sweep is estimated to have emitted about 4 tCO2e, roughly 1.6 round-trip Paris to Tokyo plane "
        "tickets for one passenger."
    )
    assert stated(claim, passage)


def test_a_power_of_ten_may_end_a_sentence() -> None:
    passage = "Good default settings are α = 0.002, β1 = 0.8 and ϵ = 10−7. All operations are element-wise."
    assert stated("Good defaults are α = 0.002 and ϵ = 10^-7.", passage)
    assert not stated("Good defaults are α = 0.002 and ϵ = 10^-8.", passage)


def test_seconds_glued_to_a_number_are_read_whole() -> None:
    # "412.5s" is 412.5 seconds, not 412 and a stray ".5s"
    passage = (
        "We save checkpoints at the 412.5s, 930.2s and 1,861.0s marks of a run, and a full run takes "
        "3 hours or 10,800 seconds."
    )
    assert stated("Checkpoints are saved at 412.5 and 930.2 seconds into a run.", passage)
    assert not stated("Checkpoints are saved at 412.9 and 930.2 seconds into a run.", passage)


def test_a_trillion_written_as_t() -> None:
    passage = (
        "During training we retrieve from 600B tokens of the training data. The evaluation retrieval "
        "database is larger and contains 1.75T tokens."
    )
    assert stated("The evaluation retrieval database contains 1.75 trillion tokens.", passage)
    assert not stated("The evaluation retrieval database contains 1.5 trillion tokens.", passage)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Fine-tuning gains 7.7 points on the test set, from 70.4% to 78.1%.", True),
        ("Fine-tuning gains about 8 points on the test set, from 70.4% to 78.1%.", True),
        ("Fine-tuning gains 6.7 points on the test set, from 70.4% to 78.1%.", False),
    ],
)
def test_a_difference_the_claim_works_out(claim: str, said: bool) -> None:
    passage = (
        "Fine-tuning on the filtered data raises accuracy on the test set from 70.4% to 78.1%, while "
        "the validation set stays at 69.0%."
    )
    assert stated(claim, passage) is said


def test_an_advantage_is_a_difference() -> None:
    passage = "Our agent also exceeds the strongest baseline by 12.5% in recall and 3.1% in precision."
    assert stated(
        "Its advantage over the strongest baseline is larger in recall (12.5%) than in precision (3.1%).",
        passage,
    )
    assert not stated("The agent reaches a recall of 12.5%.", passage)


def test_a_table_read_in_other_words_by_its_numbers(embedder: Embedder | None) -> None:
    # the reader does not read this table's rows (its rows have empty cells); the claim shares few
    # of its words, but its two numbers are its cells
    passage = (
        "System Dev Test Avg Baseline (Lee et al., 2020) 61.2 - 60.4 - Ours 66.8 65.9 - 66.3 "
        "Ours + rerank 68.0 67.1 67.5 67.6"
    )
    claim = (
        "Once a reranker is added, the proposed system climbs to 68.0 on development data and 67.1 on "
        "held-out data."
    )
    assert check_claim(claim, passage, embedder).status == "supported"


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Of the five batch sizes tried, 128 worked best.", True),
        ("Of the four batch sizes tried, 128 worked best.", False),
    ],
)
def test_a_count_in_words_of_a_list(claim: str, said: bool) -> None:
    passage = (
        "We tried batch sizes of 32, 64, 128, 256, and 512 for the small model. A batch size of 128 "
        "worked best, and we used it for the 4 larger models as well."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The two small encoders are fine-tuned with a learning rate of 5e-5.", True),
        ("The two small encoders are fine-tuned with a learning rate of 1e-5.", False),
        ("The large encoder is fine-tuned with a learning rate of 1e-5.", True),
    ],
)
def test_each_clause_says_the_same_of_a_subject_of_its_own(claim: str, said: bool) -> None:
    # the first clause's subject is its own where the second names another ("the large encoder"),
    # and a count in words ("two") is part of it, not a value beside 5e-5 and 1e-5
    passage = (
        "All encoders share one vocabulary. The two small encoders are fine-tuned with a learning rate of "
        "5e-5 and the large encoder is fine-tuned with a learning rate of 1e-5. Training stops early."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Self-training lifts MultiArith accuracy from 70.5% to 73.9%.", True),
        ("Self-training lifts MultiArith accuracy from 61.2% to 73.9%.", False),
        ("On ASDiv the gain is 3.2 points, from 55.1% to 58.3%.", True),
        ("On ASDiv the gain is 4.8 points, from 55.1% to 58.3%.", False),
    ],
)
def test_pairs_said_on_the_name_after_them(claim: str, said: bool) -> None:
    # each before→after pair belongs to the benchmark named after it, not to the one before it; and
    # "not only improves" adds to what it says, it does not deny it
    passage = (
        "We evaluate self-training with a frozen verifier. It not only improves the training tasks "
        "(61.2%→66.0% on SVAMP, 70.5%→73.9% on MultiArith, and 55.1%→58.3% on ASDiv), but also transfers "
        "to unseen tasks."
    )
    assert stated(claim, passage) is said


STAR = (  # arXiv 2203.14465, p. 6
    "We compared our method to several baselines. The ﬁrst baseline is to ﬁnetune GPT-J to directly "
    "output the ﬁnal answer, which we call “GPT-J Finetuned”. We also compare to GPT-3 ﬁnetuned to "
    "directly predict the ﬁnal answer, based on Xu et al. [2021], which we label “GPT-3 Finetuned” and a "
    "137B parameter Lambda model few-shot prompted with chain-of-thought rationales from Wei et al. "
    "[2022], labeled “Few-shot CoT LaMDA 137B.” We found that, as shown in Table 1, STaR without "
    "rationalization outperformed GPT-J ﬁne-tuned directly on the ﬁnal answer for the entire dataset, "
    "despite training on less of the data. However, the inclusion of rationalization improved this "
    "performance to 72.3%, far closer to the 73% of the 30× larger GPT-3. As expected, we also see our "
    "model surpassed the few-shot baselines, including the much-larger 137B LaMDA model [Thoppilan et "
    "al., 2022, Wei et al., 2022]."
)


def test_the_sentence_stating_the_claims_numbers_is_the_one_it_rests_on(minilm: Embedder) -> None:
    # the sentence sharing most words compares STaR with GPT-J; the one stating 72.3% and 30× is
    # where the claim is said, and it compares nothing the other way round
    claim = (
        "With rationalization, STaR reaches 72.3%, less than a point short of the 30× larger "
        "fine-tuned GPT-3."
    )
    assert check_claim(claim, STAR, minilm).status == "supported"


def test_a_subject_and_its_verb_are_no_kind_of_thing() -> None:
    # "perturbations uses" and "Evaluations use" are subjects of "use", not two kinds of use
    passage = (
        "We study how the number of perturbations used to estimate the score affects detection. "
        "Detection accuracy keeps improving as more are added, where it converges. Evaluations use 150 "
        "examples from each of three datasets."
    )
    claim = "The study of the number of perturbations uses three datasets, with 150 examples from each."
    assert stated(claim, passage)


def test_except_that_introduces_a_clause_not_an_exclusion() -> None:
    passage = (
        "We use this checkpoint for all baseline numbers in Table 3, except that Table 3 reports a stride "
        "of 256 tokens, which slightly lowers the perplexity of our baseline to 18.42 on the test split."
    )
    assert stated("A stride of 256 tokens slightly lowers the baseline's test perplexity, to 18.42.", passage)
    assert not stated(
        "A stride of 256 tokens does not lower the baseline's test perplexity, which stays at 18.42.", passage
    )


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The results on the number of samples are presented in Figure 5.", True),
        ("The results on the number of samples are presented in Figure 4.", False),
        ("Figure 4 shows the effect of the scorer's size.", True),
    ],
)
def test_a_figure_cited_where_the_passage_cites_another(claim: str, said: bool) -> None:
    passage = (
        "We study the effect of the scorer's size; the results are shown in Figure 4. Larger scorers "
        "separate the two classes better. Number of samples. We vary the number of samples drawn per "
        "input from 10 to 200. The results are presented in Figure 5."
    )
    assert stated(claim, passage) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("With the new prompts, the overall build rate reached 83.4%.", True),
        ("With the new prompts, the overall build rate reached 70.2%.", False),
        ("The pass rate for fixes of at most five lines rose from 66.8% to 70.2%.", True),
    ],
)
def test_parallel_clauses_of_before_and_after_pairs(claim: str, said: bool) -> None:
    passage = (
        "Using the new prompts, every metric improved. For instance, the overall build rate improved from "
        "82.1% to 83.4% and the pass rate for at most 5 lines changed improved from 66.8% to 70.2%."
    )
    assert stated(claim, passage) is said


PLAIN = (  # arXiv 1512.03385, p. 3
    "Plain Network. Our plain baselines (Fig. 3, middle) are mainly inspired by the philosophy of VGG "
    "nets [41] (Fig. 3, left). The convolutional layers mostly have 3×3 ﬁlters and follow two simple "
    "design rules: (i) for the same output feature map size, the layers have the same number of ﬁl- "
    "ters; and (ii) if the feature map size is halved, the num- ber of ﬁlters is doubled so as to "
    "preserve the time com- plexity per layer. We perform downsampling directly by convolutional "
    "layers that have a stride of 2. The network ends with a global average pooling layer and a "
    "1000-way fully-connected layer with softmax. The total number of weighted layers is 34 in Fig. 3 "
    "(middle). It is worth noticing that our model has fewer ﬁlters and lower complexity than VGG "
    "nets [41] (Fig. 3, left). Our 34- layer baseline has 3.6 billion FLOPs (multiply-adds), which is "
    "only 18% of VGG-19 (19.6 billion FLOPs)."
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The 34-layer plain baseline requires 3.6 billion FLOPs.", True),
        ("The 34-layer plain baseline requires 19.6 billion FLOPs.", False),
        ("VGG-19 requires 19.6 billion FLOPs.", True),
    ],
)
def test_a_number_in_brackets_after_a_name_is_that_names(claim: str, said: bool) -> None:
    # "18% of VGG-19 (19.6 billion FLOPs)": the bracket's number is VGG-19's
    assert stated(claim, PLAIN) is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # the wrong answer: "64" twice, the second clause said where dk = 64 is
        ("The base Transformer uses 64 attention heads, and each head has a dimension of 64.", False),
        ("The base Transformer uses 8 attention heads, and each head has a dimension of 64.", True),
    ],
)
def test_each_clause_of_a_joined_claim_is_held_against_its_own_sentence(
    claim: str, said: bool, embedder: Embedder | None
) -> None:
    assert (check_claim(claim, HEADS, embedder).status == "supported") is said


# 71.35 - 64.10 is about seven (the section number 7 states no such thing)
HEDGED_DIFFERENCE = (
    "REVIEWS NEWSQA Lexicon-based (POLARITY) 68.40 64.10 RoBERTa fine-tuned 90.30 71.35 Table 4: "
    "Tagging accuracies on review data (Hu and Liu, 2004) and our dataset (NEWSQA). these words’, "
    "‘is it worth’ etc.) in ShopQA indicate product queries rather than opinions. 7 Tagging"
)
# "four" is no rounding of 3.8231: a count in words is exact unless hedged
COUNTED = (
    "β0 βA 1 βB 2 βC 2 βD 2 Effort (1–5) 2.0884 0.3750 1.9835 1.4851 0.3444 Clarity (1–5) 3.8231 "
    "-0.5000 -1.1769 -0.7194 0.1037 Trust (1–5) 3.9316 -0.5833 -1.1675 -0.7524 0.1934 Table 3. "
    "Estimated fixed-effect coefficients for the model described in Appendix C for each measure."
)


@pytest.mark.parametrize(
    ("claim", "passage"),
    [
        (
            "On NewsQA fine-tuned RoBERTa beats Polarity by only about seven points, 71.35 against 64.10.",
            HEDGED_DIFFERENCE,
        ),
        ("For effort, the B coefficient of 1.9835 is the largest of the four view coefficients.", COUNTED),
    ],
)
def test_numbers_in_words_worked_out_or_counted(claim: str, passage: str) -> None:
    assert stated(claim, passage) is True


def test_a_without_condition_held_against_a_table_is_no_negation() -> None:
    # the table says "without retrieval" with a "-" in its Retrieval column, in no words
    passage = (
        "Model Retrieval Books News word ppl token ppl Pythia 1.4B - 18.2 12.9 BM25, §4 15.3 10.1 "
        "Pythia 2.8B - 15.8 11.4 BM25, §4 13.1 9.3 Falcon 7B - 12.0 9.6 BM25, §4 10.4 7.9 Table 6: The "
        "performance of models from the Pythia family, measured by word-level perplexity on the test "
        "set of Books and token-level perplexity on the development set of News."
    )
    claim = (
        "Even with BM25 retrieval, Pythia 2.8B's Books perplexity of 13.1 stays above that of Falcon 7B "
        "without retrieval, 12.0."
    )
    assert stated(claim, passage) is True


DETECTION = (
    "We find our detector is more discriminative than existing zero-shot methods, notably improving "
    "detection of fake news articles generated by 20B parameter GPT-NeoX from 0.81 AUROC for the "
    "strongest zero-shot baseline to 0.95 AUROC for our method. On ObjectNet the model reaches 82.1% "
    "top-5 accuracy and 61.7% top-1 accuracy."
)


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        # a gap between two numbers of one sentence, the claim stating neither
        ("The detector's gain over the best zero-shot baseline is 0.14 AUROC.", True),
        ("The detector's gain over the best zero-shot baseline is 0.24 AUROC.", False),
        ("On ObjectNet, top-5 accuracy is about 20 points higher than top-1 accuracy.", True),
        ("On ObjectNet, top-5 accuracy is about 30 points higher than top-1 accuracy.", False),
        # "generated by 20B parameter GPT-NeoX" names a model's size, not a margin
        (
            "On fake news articles from the 20B-parameter GPT-NeoX, our method reaches 0.95 AUROC, up "
            "from 0.81 for the strongest zero-shot baseline.",
            True,
        ),
    ],
)
def test_worked_gaps_and_a_size_after_by(claim: str, stated: bool) -> None:
    assert check_claim(claim, DETECTION).supported is stated


@pytest.mark.parametrize(
    ("claim", "worked"),
    [
        ("The agent scores 56.60, more than five times the human score of 9.61.", True),
        ("The agent scores 56.60, about six times the human score of 9.61.", True),
        ("The agent scores 56.60, more than seven times the human score of 9.61.", False),
        ("The agent scores 56.60, about five times the human score of 9.61.", False),
        ("The agent scores 56.60, five points above the human score of 9.61.", False),
    ],
)
def test_a_factor_in_words_the_claims_numbers_work_out(claim: str, worked: bool) -> None:
    claim_values = values(claim)[1]
    factor = next(v for v in claim_values if v.unit == "word")
    assert worked_factor(tokens(claim), factor, claim_values) is worked


SETTINGS = (
    "We set the sampling temperature to a range of 0.25 to 0.5, depending on the generation, and the "
    "batch size to between 16 and 64."
)


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("The highest sampling temperature was 0.5.", True),
        ("The highest sampling temperature was 0.25.", False),
        ("The sampling temperature went up to 0.5.", True),
        ("The sampling temperature went up to 0.25.", False),
        ("The smallest batch size was 16.", True),
        ("The smallest batch size was 64.", False),
        ("The sampling temperature ranged from 0.25 to 0.5.", True),
    ],
)
def test_a_ranges_end_said_to_be_its_other(claim: str, stated: bool) -> None:
    assert check_claim(claim, SETTINGS).supported is stated


MEMORISED = (
    "Examples seen exactly once in the training have a memorization rate of 0.75% for our largest model, "
    "while examples seen more than 500 times have a memorization rate of over 40%."
)


@pytest.mark.parametrize(
    ("claim", "passage", "stated"),
    [
        # the authors' own system, which the passage speaks of in the first person, called by its name
        ("Examples seen once were memorized at 0.75% by PaLM's largest model.", MEMORISED, True),
        # … but not where the passage names no one as its own
        (
            "Examples seen once were memorized at 0.75% by PaLM's largest model.",
            MEMORISED.replace("our largest", "the largest"),
            False,
        ),
        # … and a name not in the passage beside the system, not its owner, is still not stated
        ("The largest model memorized 0.75% of the examples seen once with RMSProp.", MEMORISED, False),
    ],
)
def test_a_possessive_name_for_the_authors_own_system(claim: str, passage: str, stated: bool) -> None:
    assert check_claim(claim, passage).supported is stated


def test_a_bracketed_name_after_without_is_not_denied() -> None:
    passage = (
        "Our InstructGPT models (PPO-ptx) as well as its variant trained without pretraining mix (PPO) "
        "outperform the GPT-3 baselines; outputs from our 1.3B PPO-ptx model are preferred to those from "
        "the 175B GPT-3."
    )
    assert check_claim(
        "Outputs of the 1.3B PPO-ptx model were preferred to the 175B GPT-3's.", passage
    ).supported
    assert not check_claim(
        "Outputs of the 1.3B PPO-ptx model were not preferred to the 175B GPT-3's.", passage
    ).supported


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("In memory-efficiency, large ViTs have a clear advantage over ResNets.", True),
        ("In memory-efficiency, large CNNs have a clear advantage over ResNets.", False),
    ],
)
def test_a_plural_of_a_name_the_passage_writes_is_named(claim: str, stated: bool) -> None:
    passage = (
        "This shows that large ViT models have a clear advantage in terms of memory-efficiency over "
        "ResNet models."
    )
    assert check_claim(claim, passage).supported is stated


@pytest.mark.parametrize(
    ("claim", "stated"),
    [
        ("Training the 175B SFT model required 4.9 petaflop/s-days.", True),
        ("Training the 175B SFT model required 60 petaflop/s-days.", False),
        ("Training the 175B PPO-ptx model required 60 petaflop/s-days.", True),
    ],
)
def test_a_size_before_a_variants_name_names_the_model(claim: str, stated: bool) -> None:
    passage = (
        "Training our 175B SFT model requires 4.9 petaflops/s-days and training our 175B PPO-ptx model "
        "requires 60 petaflops/s-days, compared to 3,640 petaflops/s-days for GPT-3."
    )
    assert check_claim(claim, passage).supported is stated


def test_a_superlative_gainsays_only_the_range_end_it_qualifies() -> None:
    passage = (
        "In the county, 23.50% were under the age of 18, 8.70% from 18 to 24, 29.70% from 25 to 44 and "
        "13.30% 65 years of age or older."
    )
    claim = "The largest age group is 25 to 44 at 29.7%, and the under-18 share is 23.5%."
    assert check_claim(claim, passage).supported
    assert not check_claim("The largest age group starts at 18 years.", passage).supported
