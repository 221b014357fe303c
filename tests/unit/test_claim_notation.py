"""How papers write numbers, lists and labels, read by the claim checker (chat.claims): arrows, sets
in braces, chances in words, half-way roundings, values each said "on" an item, baselines named
"No …" in a legend, a side of a comparison owned by a possessive, a name that says whose; negative
prefixes, the noun a count is of, an algorithm's numbered lines, and a symbol given two values."""

from __future__ import annotations

import pytest

from chat.claims import check_claim
from retrieval.embedder import Embedder

SELF_IMPROVE = (  # arXiv 2210.11610, p. 1
    "We show that our approach improves the general reasoning ability of a 540B-parameter LLM "
    "(74.4%→82.1% on GSM8K, 78.2%→83.0% on DROP, 90.0%→94.4% on OpenBookQA, and 63.4%→67.9% on ANLI-A3) "
    "and achieves state-of-the-art-level performance, without any ground truth label."
)
VIT = (  # arXiv 2010.11929, p. 2
    "When pre-trained on the public ImageNet-21k dataset or the in-house JFT-300M dataset, ViT approaches "
    "or beats state of the art on multiple image recognition benchmarks. In particular, the best model "
    "reaches the accuracy of 88.55% on ImageNet, 90.72% on ImageNet-ReaL, 94.55% on CIFAR-100, and 77.63% "
    "on the VTAB suite of 19 tasks."
)
RAG = (  # arXiv 2005.11401, p. 4
    "Each Wikipedia article is split into disjoint 100-word chunks, to make a total of 21M documents. "
    "During training, we retrieve the top k documents for each query. We consider k ∈{5, 10} for "
    "training and set k for test time using dev data."
)
SOFT_TARGETS = (  # arXiv 1503.02531, p. 2
    "For example, one version of a 2 may be given a probability of 10−6 of being a 3 and 10−9 of being "
    "a 7 whereas for another version it may be the other way around."
)
LEGEND = (  # arXiv 2302.00083, p. 5: a figure's legend run into its caption
    "Perplexity 10 20 30 40 GPT-2 117M (S) GPT-2 1.5B (XL) No Retrieval BERT Contriever Spider BM25 "
    "Figure 3: The performance of four off-the-shelf retrievers used for In-Context RALM on the "
    "development set of WikiText-103. All RALMs are run with s = 4 (i.e., retrieval is applied every "
    "four tokens)."
)
DPR = (  # arXiv 2004.04906, p. 2
    "Our Dense Passage Retriever (DPR) is exceptionally strong. It not only outperforms BM25 by a large "
    "margin (65.2% vs. 42.9% in Top-5 accuracy), but also results in a substantial improvement on the "
    "end-to-end QA accuracy compared to ORQA (41.5% vs. 33.3%)."
)
MEMORY = (  # arXiv 2205.14135, p. 2: Figure 1's labels and axis, then its caption
    "GPU SRAM GPU HBM Main Memory (CPU DRAM) SRAM: 19 TB/s (20 MB) HBM: 1.5 TB/s (40 GB) DRAM: 12.8 GB/s "
    "(>1 TB) 0 5 10 15 Figure 1: Left: FlashAttention uses tiling to prevent materialization of the large "
    "N× N attention matrix (dotted box) on (relatively) slow GPU HBM. In the outer loop (red arrows), "
    "FlashAttention loops through blocks of the K and V matrices and loads them to fast on-chip SRAM. In "
    "each block, FlashAttention loops over blocks of Q matrix (blue arrows), loading them to SRAM, and "
    "writing the output of the attention computation back to HBM."
)
PODS = (  # arXiv 2204.02311, p. 4
    "PaLM 540B is trained over two TPU v4 Pods connected over data center network (DCN) using a "
    "combination of model and data parallelism (Xu et al., 2021). We use 3072 TPU v4 chips in each Pod "
    "attached to 768 hosts. Previous reports of end-to-end model training at comparable scale have used "
    "one of two approaches. LaMDA and GLaM were each trained on a single TPU system without leveraging "
    "either pipeline parallelism or DCN."
)


@pytest.mark.parametrize(
    ("claim", "passage", "stated"),
    [
        # "88.55" is a float just under 88.55: "88.6" rounds it as fairly as "88.5"
        ("The best model scores about 88.6% on ImageNet.", VIT, True),
        ("The best model scores about 88.5% on ImageNet.", VIT, True),
        ("The best model scores about 88.7% on ImageNet.", VIT, False),
        # an arrow is a change, and the item after it is the change's; the model may be called otherwise
        ("Self-improvement lifted the model's GSM8K accuracy from 74.4% to 82.1%.", SELF_IMPROVE, True),
        ("On DROP the model went from 78.2% to 83.0%.", SELF_IMPROVE, True),
        ("Self-improvement raised accuracy on DROP from 74.4% to 82.1%.", SELF_IMPROVE, False),
        ("Before self-improvement, the 540B-parameter LLM scored 78.2% on GSM8K.", SELF_IMPROVE, False),
        # values each said "on" an item
        ("VTAB, on which the best model reaches 77.63%, is a suite of nineteen tasks.", VIT, True),
        ("The best model reaches 94.55% on CIFAR-100.", VIT, True),
        ("On the VTAB suite of 19 tasks, the best model's accuracy is 88.55%.", VIT, False),
        ("The best model reaches 90.72% on CIFAR-100.", VIT, False),
        # a set in braces, said as the claim's own list of the same numbers
        ("During training either 5 or 10 documents are retrieved for each query.", RAG, True),
        # a chance in words
        ("A 2 may get a probability of one in a million of being a 3.", SOFT_TARGETS, True),
        ("A 2 may get a probability of one in a thousand of being a 3.", SOFT_TARGETS, False),
    ],
)
def test_numbers_as_papers_write_them(claim: str, passage: str, stated: bool) -> None:
    result = check_claim(claim, passage)
    assert result.supported is stated, result
    if not stated:
        assert result.kind == "number", result


def test_a_baseline_named_no_something_is_a_label_not_a_negation() -> None:
    assert check_claim("Figure 3 compares four off-the-shelf retrievers on WikiText-103.", LEGEND).supported
    no_retrieval = "Figure 3 compares four retrievers with no retrieval on WikiText-103."
    assert check_claim(no_retrieval, LEGEND).supported
    denied = check_claim("Figure 3 does not compare off-the-shelf retrievers on WikiText-103.", LEGEND)
    assert denied.kind == "negation", denied


def test_a_possessive_gives_its_owner_the_side_of_the_comparison() -> None:
    assert check_claim("DPR's top-5 retrieval accuracy of 65.2% is above BM25's 42.9%.", DPR).supported
    swapped = check_claim("BM25's top-5 accuracy is above DPR's.", DPR)
    assert swapped.kind == "direction", swapped


def test_a_name_on_several_heads_says_whose_not_which_kind(minilm: Embedder) -> None:
    """ "GPU SRAM … GPU HBM": the passage's "on-chip SRAM" is the same memory; "model and data
    parallelism … data center" still tells data from pipeline parallelism."""
    claim = (
        "In Figure 1's memory hierarchy, on-chip SRAM runs at 19 TB/s but holds only 20 MB, "
        "while HBM offers 40 GB at 1.5 TB/s."
    )
    assert check_claim(claim, MEMORY, minilm).supported
    pipeline = "PaLM 540B's training relied on pipeline parallelism between its two Pods."
    swapped = check_claim(pipeline, PODS, minilm)
    assert not swapped.supported and swapped.kind == "entity", swapped


DISTILL = (  # arXiv 1503.02531, p. 2
    "Caruana and his collaborators circumvent this problem by using the logits (the inputs to the final "
    "softmax) rather than the probabilities produced by the softmax as the targets for learning the small "
    "model."
)


ZERO = (  # arXiv 1910.02054, p. 1
    "We implement and evaluate ZeRO: it trains large models of over 100B parameter with super-linear "
    "speedup on 400 GPUs, achieving throughput of 15 Petaflops. This represents an 8x increase in model "
    "size and 10x increase in achievable performance over state-of-the-art."
)


SUBJQA = (  # arXiv 2004.14283, p. 1
    "According to McAuley and Yang (2016a), around 20% of product queries were labeled as being "
    "'subjective' by workers. Although QA over customer reviews has gained traction recently with the "
    "availability of new datasets and architectures, these are agnostic with respect to how subjectivity "
    "is expressed in the questions and the reviews. Furthermore, the datasets are either very small "
    "(< 2000 questions) or have target-specific question types (e.g., yes-no)."
)
ZERO_POS = (  # arXiv 1910.02054, p. 10
    "We perform an all-gather across the data parallel process at the end of each training step to get "
    "the fully updated parameters across all data parallel process. As the concrete example depicted in "
    "Figure 1, a 7.5 B parameter model requires 31.4GB of memory using Pos with 64-way DP (Nd = 64), "
    "while requiring 120 GB with standard DP."
)


def test_the_papers_own_name_as_source_or_as_the_we_of_the_passage() -> None:
    """The checker is not told the paper's name: a claim may give it as its source, or as the subject
    of what the passage says "we" do; another name as a plain mention is still not named."""
    source = "Citing McAuley and Yang, the SubjQA paper says about 20% of product queries were subjective."
    assert check_claim(source, SUBJQA).supported
    subject = "At the end of each training step, ZeRO runs an all-gather to get the updated parameters."
    assert check_claim(subject, ZERO_POS).supported
    other = check_claim(
        "The all-gather of the data parallel processes is borrowed from Megatron-LM.", ZERO_POS
    )
    assert other.kind == "entity", other


def test_a_scale_letter_apart_from_its_number_and_a_bound_written_as_a_sign() -> None:
    assert check_claim(
        "A 7.5B-parameter model needs 31.4GB of memory with Pos and 64-way DP.", ZERO_POS
    ).supported
    few = "Earlier review QA datasets are very small, with fewer than 2,000 questions."
    assert check_claim(few, SUBJQA).supported


DPR_ABSTRACT = (  # arXiv 2004.04906, p. 1
    "When evaluated on a wide range of open-domain QA datasets, our dense retriever outperforms a strong "
    "Lucene-BM25 system greatly by 9%-19% absolute in terms of top-20 passage retrieval accuracy."
)


REPTILE = (  # arXiv 1803.02999, p. 2: a curly apostrophe, as PDFs write it
    "Unlike FOMAML, Reptile doesn’t need a training-test split for each task, which may make it a more "
    "natural choice in certain settings."
)

SCALING = (  # arXiv 1706.03762, p. 4
    "While for small values of dk the two mechanisms perform similarly, additive attention outperforms "
    "dot product attention without scaling for larger values of dk [3]."
)

REALM = (  # arXiv 2002.08909, p. 1: a word broken at the line's end
    "For the first time, we show how to pre- train such a knowledge retriever in an unsuper- vised "
    "manner, using masked language model- ing as the learning signal."
)

RERANK = (  # arXiv 2302.00083, p. 7 (Table 3): a table states no change in words
    "Model Reranking Model WikiText-103 RealNews word ppl token ppl GPT-2 345M (M) GPT-2 110M (S) 20.8 "
    "12.1 GPT-2 345M (M) 20.8 12.0 GPT-2 762M (L) GPT-2 110M (S) 17.7 10.7 GPT-2 762M (L) 17.6 10.6"
)

MUZERO = (  # arXiv 1911.08265, p. 14
    "The input to the representation function consists of 26 frames of 40 Mel-scaled filterbank "
    "coefficients. Both the representation and dynamics function use the same architecture as "
    "AlphaZero, but with 16 instead of 20 residual blocks."
)

STAR = (  # arXiv 2203.14465, p. 4: an algorithm's numbered lines run together as PDF text
    "Algorithm 2 STaR Input M0: an initial pretrained LLM; questions X w/ few-shot prompts, ground truth "
    "answers Y 1: M ←M0 2: for iteration in n_iterations do # Outer loop 3: (rationales, ˆY ) ←M(X) # "
    "Perform rationale generation 4: D, Xwrong ←filter_correct(rationales, ˆY ) 5: (rationaleshint, "
    "ˆYhint) ←M(add_hint(Xwrong)) # Perform rationalization 6: Drat ←filter_correct(rationaleshint, "
    "ˆYhint) 7: M ←train(M0, D ∪Drat) # Finetune original model on correct solutions – inner loop 8: "
    "end for Fine-tuning on the dataset generated by rationalization has a crucial benefit."
)

LISTING = (  # arXiv 2206.10883, p. 16: a code example's numbered lines, without colons
    "we develop one Python script: 1 from datasets import load_dataset 2 multi_lexsum = "
    'load_dataset("multi_lexsum.py", name="v20220616") 3 # Download multi_lexsum locally and load it as a '
    'Dataset object 4 example = multi_lexsum["test"][0] # The first instance of the test set 5 '
    'example["sources"] # A list of source document text for the case 6 for sum_len in ["long", "short", '
    '"tiny"]: 7 print(example["summary/" + sum_len ]) # Summaries of three lengths'
)

FID = (  # arXiv 2007.01282, p. 1
    "Roberts et al. (2020) introduced a generative model for open domain question answering. Without "
    "relying on external knowledge, this method obtained competitive results on several benchmarks. "
    "However, it requires models containing billions of parameters, since all the information needs to "
    "be stored in the weights."
)

TOXICITY = (  # arXiv 2204.02311, p. 44 (Table 19 and its caption)
    "First-sentence 128-decode steps Model Toxic Non-toxic Toxic Non-toxic PaLM 8B 0.78 0.44 0.90 0.53 "
    "PaLM 62B 0.81 0.46 0.91 0.58 PaLM 540B 0.80 0.46 0.91 0.56 Table 19: Probability of generating a "
    "comment that could be perceived as toxic (i.e. toxicity score > 0.5) at least once in 25 "
    "continuations for different model sizes."
)

SAMPLING = (  # arXiv 2203.02155, p. 44
    "All model sampling is performed at temperature T = 0 and truncated at the first newline. Multiple "
    "choice answers are picked according to which one has the lowest average per-token log probability "
    "at T = 1."
)


@pytest.mark.parametrize(
    ("claim", "passage", "kind"),  # kind "": stated
    [
        # what is kept, set off by a bracket or by commas, is still what is kept
        (
            "Caruana and his collaborators use the logits rather than the softmax probabilities as targets.",
            DISTILL,
            "",
        ),
        (
            "Caruana and his collaborators use the probabilities, rather than the logits, as targets.",
            DISTILL,
            "direction",
        ),
        (
            "Caruana uses the probabilities produced by the softmax instead of the logits.",
            DISTILL,
            "direction",
        ),
        # the phrase after the last item scopes the list; the item's own noun says whose the number is
        ("ZeRO represents an 8x increase in model size over the state of the art.", ZERO, ""),
        ("ZeRO gives a 10x increase in achievable performance over the state of the art.", ZERO, ""),
        ("ZeRO represents a 10x increase in model size over the state of the art.", ZERO, "number"),
        ("ZeRO gives an 8x increase in achievable performance over the state of the art.", ZERO, "number"),
        # a range written with its unit on both ends, and "as much as" for its top
        (
            "The dense retriever beats Lucene-BM25 by 9% to 19% absolute in top-20 retrieval accuracy.",
            DPR_ABSTRACT,
            "",
        ),
        (
            "The dense retriever beats Lucene-BM25 by as much as 19% in top-20 retrieval accuracy.",
            DPR_ABSTRACT,
            "",
        ),
        (
            "The dense retriever beats Lucene-BM25 by as much as 9% in top-20 retrieval accuracy.",
            DPR_ABSTRACT,
            "number",
        ),
        # a curly "n't" is a negation
        ("Reptile does not require a training-test split for each task.", REPTILE, ""),
        ("Reptile needs a training-test split for each task.", REPTILE, "negation"),
        # a negative prefix denies its stem, where the other side writes the stem without one
        ("Additive attention outperforms unscaled dot-product attention for larger dk.", SCALING, ""),
        ("Additive attention outperforms scaled dot-product attention for larger dk.", SCALING, "negation"),
        ("The knowledge retriever is pre-trained without supervision.", REALM, ""),
        ("The knowledge retriever is pre-trained with supervision.", REALM, "negation"),
        ("For GPT-2 345M, a GPT-2 110M reranker leaves word perplexity unchanged at 20.8.", RERANK, ""),
        # a count is of the noun after it: the frames are counted as 26, the coefficients as 40
        ("The input consists of 26 frames of Mel-scaled filterbank coefficients.", MUZERO, ""),
        ("The input consists of 40 frames of Mel-scaled filterbank coefficients.", MUZERO, "number"),
        ("Each frame holds 40 filterbank coefficients.", MUZERO, ""),
        ("The representation and dynamics functions each use sixteen residual blocks.", MUZERO, ""),
        # a listing's line is the one that says the claim's words
        ("Rationalization with hints is performed at line 5 of Algorithm 2.", STAR, ""),
        ("Rationalization with hints is performed at line 3 of Algorithm 2.", STAR, "number"),
        ("Line 7 fine-tunes the original model on the correct solutions.", STAR, ""),
        ("In the example code, the first instance of the test set is loaded on line 4.", LISTING, ""),
        ("In the example code, the first instance of the test set is loaded on line 6.", LISTING, "number"),
        # "it requires models" is no kind of model that gainsays "generative model"
        ("The generative model of Roberts and colleagues needs billions of parameters.", FID, ""),
        # a sign after a name states a condition ("score > 0.5"), not the caption's direction
        (
            "PaLM 8B has a lower first-sentence toxicity probability for toxic prompts than PaLM 540B.",
            TOXICITY,
            "",
        ),
        (
            "PaLM 8B has a higher first-sentence toxicity probability for toxic prompts than PaLM 540B.",
            TOXICITY,
            "direction",
        ),
        # a symbol the passage gives two values: which one is the words around it
        ("Model sampling is done at temperature T = 0.", SAMPLING, ""),
        ("Multiple choice answers use the average per-token log probability at T = 1.", SAMPLING, ""),
        ("All model sampling is done at temperature T = 1.", SAMPLING, "number"),
        ("Multiple choice answers use the average per-token log probability at T = 0.", SAMPLING, "number"),
    ],
)
def test_sides_items_negations_counts_lines_and_symbols(claim: str, passage: str, kind: str) -> None:
    result = check_claim(claim, passage)
    assert result.supported is (not kind), result
    assert result.kind == kind, result


def test_with_the_papers_title_its_own_name_must_be_written() -> None:
    """The chat knows each passage's paper: there a name in the place of the paper's own is held
    against the title, and one that is neither there nor in the passage is flagged."""
    own = "At the end of each training step, ZeRO runs an all-gather to get the updated parameters."
    title = "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models"
    assert check_claim(own, ZERO_POS, context=title).supported
    swapped = check_claim(own.replace("ZeRO", "DeepSpeed"), ZERO_POS, context=title)
    assert swapped.kind == "entity", swapped
    assert check_claim(own.replace("ZeRO", "DeepSpeed"), ZERO_POS).supported  # no title: not known
