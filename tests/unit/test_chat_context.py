"""Evidence for a question: judged per chunk, widened around the best sentence, key quotes found,
ordered by them, trimmed and packed into the budget, keyed — over a fake of retrieval's one
interface (:class:`chat.context.Evidence`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from chat.context import LEAD_CHARS, Budget, _overlap_join, coverage, gather, is_evidence
from retrieval.evidence import EvidenceChunk, EvidencePage, EvidenceRanking, question_terms
from retrieval.tokens import count_tokens
from settings import ChatSettings

PAPER = "1706.03762"
HEADS = (
    "The decoder is also composed of a stack of N = 6 identical layers. Multi-head attention allows the "
    "model to jointly attend to information from different representation subspaces at different "
    "positions. In this work we employ h = 8 parallel attention layers, or heads."
)
DIMS = (
    "For each of these we use dk = dv = dmodel/h = 64. Due to the reduced dimension of each head, the "
    "total computational cost is similar to that of single-head attention with full dimensionality. "
    "The Transformer uses multi-head attention in three different ways."
)
OTHER = (
    "Residual learning eases the training of very deep networks. We evaluate residual nets with a depth "
    "of up to 152 layers on the ImageNet dataset, 8 times deeper than VGG nets."
)


def chunk(n: int, text: str, pages: tuple[int, ...], paper: str = PAPER, similarity: float | None = None):
    return EvidenceChunk(
        f"{paper}v7#{n}",
        paper,
        7,
        n,
        f"Title of {paper}",
        f"https://arxiv.org/pdf/{paper}",
        pages,
        None,
        text,
        similarity,
    )


class FakeEvidence:
    """Retrieval's interface over a fixed ranking: pages in the given order, chunks by id."""

    def __init__(self, ranked: Sequence[EvidenceChunk], others: Sequence[EvidenceChunk] = ()) -> None:
        self.ranked = list(ranked)
        self.all = {c.chunk_id: c for c in [*ranked, *others]}
        self.asked: list[str] = []

    def evidence(self, question: str, papers: Collection[str] | None, *, depth: int = 30) -> EvidenceRanking:
        pages = [
            EvidencePage(c.arxiv_id, c.pages[0], (c,))
            for c in self.ranked
            if not papers or c.arxiv_id in papers
        ]
        return EvidenceRanking(pages[:depth], dict.fromkeys(question_terms(question), 1.0))

    def chunks(self, like: EvidenceChunk, chunk_ids: Sequence[str]) -> dict[str, EvidenceChunk]:
        self.asked.extend(chunk_ids)
        return {i: self.all[i] for i in chunk_ids if i in self.all}


QUESTION = "How many attention heads does the base Transformer use, and what is the dimension of each head?"


def test_a_best_sentence_leaning_on_the_chunk_before_widens_the_passage_and_the_quote() -> None:
    source = FakeEvidence(
        [chunk(12, DIMS, (5,)), chunk(30, OTHER, (1,), "1512.03385")], [chunk(11, HEADS, (5,))]
    )
    found = gather(source, QUESTION, None, ChatSettings(), Budget(1800), None)
    first = found.passages[0]
    assert first.chunk_ids == (f"{PAPER}v7#11", f"{PAPER}v7#12")
    assert "h = 8 parallel attention layers, or heads" in first.text and "dmodel/h = 64" in first.text
    top = found.quotes[0]
    assert top.key == first.key
    assert (
        "In this work we employ h = 8 parallel attention layers, or heads. For each of these we use dk = dv "
        "= dmodel/h = 64." in top.text
    )
    assert first.text[top.start : top.end] == top.text  # offsets in the passage given


def test_a_neighbour_on_another_page_is_not_added() -> None:
    source = FakeEvidence([chunk(12, DIMS, (6,))], [chunk(11, HEADS, (5,))])
    found = gather(source, QUESTION, None, ChatSettings(), Budget(1800), None)
    assert found.passages[0].chunk_ids == (f"{PAPER}v7#12",)
    assert f"{PAPER}v7#11" in source.asked


def test_nothing_clearing_the_threshold_gives_no_evidence() -> None:
    source = FakeEvidence([chunk(30, OTHER, (1,), "1512.03385", similarity=0.1)])
    found = gather(
        source,
        "Which optimiser schedule warms up the learning rate?",
        None,
        ChatSettings(),
        Budget(1800),
        None,
    )
    assert found.passages == [] and found.quotes == []


def test_passages_holding_the_best_quotes_come_first_and_the_budget_is_kept() -> None:
    weak = chunk(
        3,
        "Attention heads in the base Transformer use a learned projection. The dimension of the model is "
        "described later.",
        (2,),
    )
    strong = chunk(12, "The base Transformer uses h = 8 attention heads, each of dimension 64. " + DIMS, (5,))
    source = FakeEvidence([weak, strong])
    found = gather(source, QUESTION, None, ChatSettings(), Budget(1800), None)
    assert found.passages[0].chunk_ids == (strong.chunk_id,)
    assert [p.key for p in found.passages] == ["S1", "S2"]
    tight = gather(source, QUESTION, None, ChatSettings(), Budget(60), None)
    assert [p.chunk_ids for p in tight.read] == [(strong.chunk_id,)]


def test_a_key_quote_from_a_passage_the_model_does_not_read_is_shown_with_it_marked_unread() -> None:
    weak = chunk(3, "Attention heads in the base Transformer use a learned projection of each head.", (2,))
    strong = chunk(12, "The base Transformer uses h = 8 attention heads, each of dimension 64. " + DIMS, (5,))
    found = gather(FakeEvidence([weak, strong]), QUESTION, None, ChatSettings(), Budget(60), None)
    assert [(p.key, p.chunk_ids, p.read) for p in found.passages] == [
        ("S1", (strong.chunk_id,), True),
        ("S2", (weak.chunk_id,), False),
    ]
    shown = found.passages[1]
    quote = next(q for q in found.quotes if q.key == "S2")
    assert shown.text[quote.start : quote.end] == quote.text
    assert shown.to_json()["read_by_model"] is False


def test_a_small_model_reads_its_quote_and_the_sentences_around_it() -> None:
    long = " ".join(f"Filler sentence {chr(65 + i)} is about the base Transformer." for i in range(12))
    text = f"{long} In this work we employ h = 8 parallel attention layers, or heads. {long}"
    source = FakeEvidence([chunk(12, text, (5,))])
    whole = gather(source, QUESTION, None, ChatSettings(), Budget(1800), None)
    trimmed = gather(source, QUESTION, None, ChatSettings(), Budget(1800, radius=1), None)
    assert whole.passages[0].text.startswith("Filler sentence A")
    assert trimmed.passages[0].text == (
        "Filler sentence L is about the base Transformer. In this work we employ h = 8 parallel attention "
        "layers, or heads. Filler sentence A is about the base Transformer."
    )
    quote = trimmed.quotes[0]
    assert trimmed.passages[0].text[quote.start : quote.end] == quote.text == trimmed.passages[0].text
    # What was cut away just before stays with the passage for the claim check (what it is about).
    assert whole.passages[0].lead == ""
    lead = trimmed.passages[0].lead
    assert lead.endswith("Filler sentence K is about the base Transformer. ") and len(lead) <= LEAD_CHARS
    assert text.index(trimmed.passages[0].text) == text.index(lead) + len(lead)


def test_chunks_of_one_paper_next_to_each_other_become_one_passage_without_their_overlap() -> None:
    first = chunk(
        4, "Most competitive models have an encoder-decoder structure: the encoder maps an input", (2, 3)
    )
    second = chunk(5, "the encoder maps an input sequence to a sequence of continuous representations.", (3,))
    source = FakeEvidence([second, first])
    found = gather(
        source, "What does the encoder map an input sequence to?", None, ChatSettings(), Budget(1800), None
    )
    assert len(found.passages) == 1
    assert found.passages[0].text == (
        "Most competitive models have an encoder-decoder structure: the encoder maps an input sequence "
        "to a sequence of continuous representations."
    )
    assert found.passages[0].pages == (2, 3)


def test_overlap_is_written_once_and_unrelated_text_is_joined_with_a_space() -> None:
    assert _overlap_join("alpha beta gamma delta epsilon", "gamma delta epsilon zeta eta") == (
        "alpha beta gamma delta epsilon zeta eta"
    )
    assert _overlap_join("one two", "three four") == "one two three four"


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


def test_a_name_the_evidence_never_writes_is_reported() -> None:
    """The pages match the question's other words; the name it asks about is in none of them."""
    source = FakeEvidence(
        [chunk(12, DIMS, (5,)), chunk(11, HEADS, (5,)), chunk(30, OTHER, (1,), "1512.03385")]
    )
    asked = (
        "How many attention heads does the base Transformer-XL use, and what is the dimension of each head?"
    )
    found = gather(source, asked, None, ChatSettings(), Budget(1800), None)
    assert found.passages and found.unnamed == "Transformer-XL"
    assert gather(source, QUESTION, None, ChatSettings(), Budget(1800), None).unnamed is None


def test_a_name_written_only_inside_a_longer_name_is_reported() -> None:
    """ "RoBERTa" does not write "BERT", nor "FlashAttention 3× faster" "FlashAttention-3"."""
    text = "RoBERTa is trained with a batch size of 8K sequences; FlashAttention makes it 3× faster."
    source = FakeEvidence([chunk(5, text, (9,), "1907.11692")])

    def unnamed_in(question: str) -> str | None:
        return gather(source, question, None, ChatSettings(), Budget(1800), None).unnamed

    assert unnamed_in("What batch size is RoBERTa trained with?") is None
    assert unnamed_in("What batch size are RoBERTa-based models trained with?") is None
    assert unnamed_in("What batch size is BERT trained with?") == "BERT"
    assert unnamed_in("How much faster does FlashAttention-3 make RoBERTa?") == "FlashAttention-3"
    assert unnamed_in("What batch size is RoBERTa 2 trained with?") == "RoBERTa 2"  # a version apart
    assert unnamed_in("What batch size is RoBERTa-B/8 trained with?") == "RoBERTa-B/8"
    assert unnamed_in("What batch size of sequences is RoBERTa trained with by Lion?") == "Lion"


def test_names_only_different_papers_write_are_missing_together_unless_compared() -> None:
    """One paper names RETRO, another TriviaQA: none says what RETRO gets on TriviaQA."""
    retro = chunk(
        4, "RETRO retrieves from a 2 trillion token database with exact match on NQ.", (4,), "2112.04426"
    )
    fid = chunk(
        5, "Fusion-in-Decoder reaches 67.6 exact match on TriviaQA and 51.4 on NQ.", (5,), "2007.01282"
    )
    source = FakeEvidence([fid, retro])

    def unnamed_in(question: str) -> str | None:
        return gather(source, question, None, ChatSettings(), Budget(1800), None).unnamed

    assert unnamed_in("What exact match does RETRO get on TriviaQA?") == "RETRO together with TriviaQA"
    assert unnamed_in("What exact match does RETRO get on NQ?") is None  # one paper writes both
    assert unnamed_in("Does RETRO reach a higher exact match than Fusion-in-Decoder?") is None
    assert unnamed_in("What exact match do RETRO and Fusion-in-Decoder get?") is None
    # Beside the name of the best paper's title when there is one (the chunk's title here).
    titled = chunk(6, "DetectGPT gets 0.95 AUROC on WMT16 English news articles.", (6,), "2301.11305")
    titled = replace(titled, title="DetectGPT: zero-shot detection")
    other = chunk(7, "French and German news articles were translated.", (7,), "1706.03762")
    source = FakeEvidence([titled, other])
    assert (
        unnamed_in("What AUROC does DetectGPT get on French news from WMT16?")
        == "French together with DetectGPT"
    )


def test_a_joined_name_counts_as_written_without_its_joining_word() -> None:
    text = "On WMT'16 German-English the 62B model gains 13 BLEU over the 8B model with one shot."
    source = FakeEvidence([chunk(5, text, (28,), "2204.02311")])
    said = gather(
        source,
        "How many BLEU does the 62B model gain on German-to-English?",
        None,
        ChatSettings(),
        Budget(1800),
        None,
    )
    assert said.passages and said.unnamed is None
    other = gather(
        source,
        "How many BLEU does the 62B model gain on German-to-Japanese?",
        None,
        ChatSettings(),
        Budget(1800),
        None,
    )
    assert other.unnamed == "German-to-Japanese"


def test_a_passage_that_does_not_fit_is_read_as_its_best_quote_alone() -> None:
    """The budget is nearly spent: the next passage is not passed over but cut to its key quote."""
    filler = " ".join(f"Filler sentence {chr(65 + i)} is about the base Transformer." for i in range(6))
    first = chunk(3, f"The base Transformer uses attention heads in every layer. {filler}", (2,))
    second = chunk(
        12, f"{filler} In this work we employ h = 8 parallel attention layers, or heads. {filler}", (5,)
    )
    budget = Budget(count_tokens(first.text) + 25, radius=2)
    found = gather(FakeEvidence([first, second]), QUESTION, None, ChatSettings(), budget, None)
    read = [p for p in found.passages if p.read]
    assert len(read) == 2
    # the passage whose number counts the heads asked for is read first, then the other, which
    # does not fit, as its key quote: whole, and still shown first among that passage's quotes
    whole, cut = read
    assert whole.chunk_ids == (second.chunk_id,) and "h = 8 parallel attention layers" in whole.text
    quote = next(q for q in found.quotes if q.key == cut.key)
    assert cut.chunk_ids == (first.chunk_id,) and cut.text == quote.text
    assert len(cut.text) < len(first.text)
    assert len(cut.text) < len(second.text) // 2


def test_a_key_quote_outside_the_cut_the_model_reads_is_shown_in_its_whole_passage_unread() -> None:
    """The model reads the passage trimmed around its best sentence; a key quote further on is not
    dropped but shown in the whole passage, marked unread."""
    filler = " ".join(f"Filler sentence {chr(65 + i)} is about the encoder stack." for i in range(8))
    text = (
        f"The base Transformer has attention heads in each layer. {filler} "
        "The dimension of each head is dk = dv = 64 in the base Transformer."
    )
    only = chunk(4, text, (5,))
    found = gather(FakeEvidence([only]), QUESTION, None, ChatSettings(), Budget(1800, radius=1), None)
    read = [p for p in found.passages if p.read]
    assert len(read) == 1 and len(read[0].text) < len(text) // 2  # the model reads a cut
    by_key = {p.key: p for p in found.passages}
    for quote in found.quotes:
        assert by_key[quote.key].text[quote.start : quote.end] == quote.text
    outside = [q for q in found.quotes if q.text not in read[0].text]
    assert outside and all(not by_key[q.key].read and by_key[q.key].text == text for q in outside)
    assert any("attention heads in each layer" in q.text for q in outside)
