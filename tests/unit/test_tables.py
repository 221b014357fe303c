"""Flattened tables read back into rows and columns (chat.tables), and claims held against the cell
of the row and column they name."""

from __future__ import annotations

import pytest

from chat.claims import check_claim
from chat.numbers import values
from chat.tables import Row, Table, read, read_all, verdict

# a header word per column, group headings over equal spans, labels of one to three words
GROUPED = (
    "Method Top-5 Top-50 Alpha Beta Gamma Alpha Beta Gamma None Lexical 41.2 38.0 50.3 66.1 60.4 71.9 "
    "Single Dense 55.7 49.1 48.2 77.3 70.8 69.0 Lexical + Dense 57.9 52.6 56.1 79.4 74.2 78.8 "
    "Table 3: Retrieval accuracy on the test sets."
)
# the label is the row's first number (a model size)
NUMBERED = (
    "Size #L #H Width LR 100M 12 12 768 6.0e-4 1B 24 16 2048 2.0e-4 10B 40 40 5120 1.0e-4 "
    "Table 1: Model details: layers (#L), heads (#H), width and peak learning rate (LR)."
)
# a schedule written in prose: two numbers at a time, but no table
SCHEDULE = (
    "We use batch size 256 (0.5M tokens) until step 20k, then double it to 512 (1M tokens) until step "
    "60k, and finally double it again to 1024 (2M tokens) until training ends at step 100k."
)


def test_a_table_with_group_headings_is_read_by_row_and_column() -> None:
    table = read(GROUPED)
    assert table is not None
    assert [r.label for r in table.rows] == ["None Lexical", "Single Dense", "Lexical + Dense"]
    assert table.columns[0] == "Top-5 Alpha" and table.columns[-1] == "Top-50 Gamma"
    assert [c.text for c in table.rows[1].cells] == ["55.7", "49.1", "48.2", "77.3", "70.8", "69.0"]


def test_a_table_whose_rows_are_named_by_their_first_number_is_read() -> None:
    table = read(NUMBERED)
    assert table is not None
    assert [r.label for r in table.rows] == ["100M", "1B", "10B"]
    assert table.columns == ("#L", "#H", "Width", "LR")


def test_prose_with_numbers_in_pairs_is_no_table() -> None:
    assert read(SCHEDULE) is None


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The lexical retriever reaches 50.3% top-5 accuracy on Gamma.", True),
        ("The lexical retriever reaches 66.1% top-50 accuracy on Alpha.", True),
        # the other group's cell of the same row and dataset
        ("The lexical retriever reaches 50.3% top-50 accuracy on Gamma.", False),
        # another row's cell of the same column
        ("The lexical retriever reaches 55.7% top-5 accuracy on Alpha.", False),
        # numbers in a table stand without the words a sentence would give them
        ("On Beta, the single dense retriever reaches a top-50 accuracy of 70.8%.", True),
    ],
)
def test_a_claim_is_held_against_its_row_and_column(claim: str, said: bool) -> None:
    assert check_claim(claim, GROUPED).supported is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The 10B model has 40 layers and a peak learning rate of 1e-4.", True),
        ("The 1B model was trained with a peak learning rate of 0.0002.", True),
        # a value of another row
        ("The 1B model was trained with a peak learning rate of 0.0006.", False),
    ],
)
def test_a_row_named_by_a_number_is_found_by_it(claim: str, said: bool) -> None:
    assert check_claim(claim, NUMBERED).supported is said


# labels that repeat: a row is named by one of its cells (the depth)
REPEATED = (
    "method depth params error (%) VGG 16 138M 7.4 ResNet 34 21.8M 5.7 ResNet 50 25.6M 5.2 "
    "ResNet 101 44.5M 4.6 Table 2: Top-5 error on the validation set."
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The 50-layer ResNet has a top-5 error of 5.2%.", True),
        ("ResNet 101 reaches 4.6% top-5 error with 44.5M parameters.", True),
        ("The 50-layer ResNet has a top-5 error of 5.2%, against 7.4% for VGG.", True),
        ("The 50-layer ResNet has a top-5 error of 4.6%.", False),  # the 101-layer row's
    ],
)
def test_a_row_whose_label_repeats_is_found_by_a_cell(claim: str, said: bool) -> None:
    checked = check_claim(claim, REPEATED)
    assert (checked.status == "supported") is said
    assert said or "ResNet 50" in checked.reason  # the row its cell names, and that row's error


# a caption before the header, the labels' heading ("Dataset") ending it; a footnote mark on a cell
CAPTIONED = (
    "Table 2: Sentences in each corpus. *Held out from training Dataset Train Dev Test Alpha 51200 6400 "
    "7100 Beta 48000 5300 9900* Gamma 12500 1900 2400"
)


def test_a_caption_before_the_header_and_a_footnote_mark_do_not_hide_the_table() -> None:
    table = read(CAPTIONED)
    assert table is not None
    assert table.columns == ("Train", "Dev", "Test")
    assert [r.label for r in table.rows] == ["Alpha", "Beta", "Gamma"]
    assert [c.text for c in table.rows[1].cells] == ["48000", "5300", "9900"]
    assert check_claim("The Beta test set holds 9,900 sentences.", CAPTIONED).status == "supported"
    assert check_claim("The Beta test set holds 5,300 sentences.", CAPTIONED).status == "not_stated"


# a bracketed number after a label's word is the label's ("Lumen Web (10%)"); sizes name the rows
SHARES = (
    "Model Corpus #Tokens #Keys Valid Test Lumen Books 4B 4B 18.46 18.97 Lumen News 174B 2.9B 12.87 10.23 "
    "Lumen Web (1%) 18B 0.8B 18.92 20.33 Lumen Web (10%) 179B 4B 13.54 14.95 Lumen Web (100%) 1792B 28B "
    "3.21 3.92"
)


def test_a_bracketed_number_in_a_label_is_the_label_s_and_a_size_names_its_row() -> None:
    table = read(SHARES)
    assert table is not None
    assert [r.label for r in table.rows][-3:] == ["Lumen Web (1%)", "Lumen Web (10%)", "Lumen Web (100%)"]
    claim = "Retrieving from all of the Web corpus, 1792B tokens, Lumen reaches a test perplexity of {}."
    assert check_claim(claim.format("3.92"), SHARES).status == "supported"
    assert check_claim(claim.format("20.33"), SHARES).status == "not_stated"


# an ablation table of one column: a short label and one number a row
ONE_COLUMN = (
    "Table 4: Ablations of the reader, exact match on the dev set. Variant EM Full reader 41.5 "
    "No passage ranking 38.2 Shared encoder 40.9 Frozen retriever 39.7 No retrieval 27.4 Top-1 only 35.8"
)
# prose that lists a number after each few words is no table
LISTED = (
    "The model answers 70% of the questions with the 2016 index and 68% with the 2018 index, "
    "but only 4% when the index is 2 years older than the questions and 12% in the reverse case."
)


def test_a_table_of_one_column_is_read_and_prose_is_not() -> None:
    table = read(ONE_COLUMN)
    assert table is not None
    assert [r.label for r in table.rows][1:] == [
        "No passage ranking",
        "Shared encoder",
        "Frozen retriever",
        "No retrieval",
        "Top-1 only",
    ]
    assert [r.cells[0].text for r in table.rows] == ["41.5", "38.2", "40.9", "39.7", "27.4", "35.8"]
    assert read(LISTED) is None


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # each number of a claim naming two rows is held against the row named in its clause
        ("Without retrieval the reader scores 27.4 EM, against 41.5 for the full reader.", True),
        ("A frozen retriever gives 39.7 EM, below the 41.5 of the full reader.", True),
        # the other row's number
        ("Without retrieval the reader scores 39.7 EM, against 41.5 for the full reader.", False),
        ("A shared encoder scores 38.2 EM.", False),
    ],
)
def test_a_claim_is_held_against_the_row_of_a_one_column_table(claim: str, said: bool) -> None:
    assert check_claim(claim, ONE_COLUMN).supported is said


# models and their sizes as the columns, tasks as the rows
SIZED = (
    "Mistral 7B Mistral 22B Falcon Pythia Model Size (B) 7 22 40 12 ARC easy 0-shot 71.2 78.9 70.0 "
    "64.1 OpenBookQA 0-shot 40.6 46.8 44.2 38.0 SciQ 0-shot 92.3 95.1 93.8 90.4 Average 68.0 73.6 "
    "69.3 64.2 Table 6: Zero-shot results."
)


def test_columns_named_by_models_and_their_sizes_are_read() -> None:
    table = read(SIZED)
    assert table is not None
    assert table.columns == ("Mistral 7B", "Mistral 22B", "Falcon", "Pythia")


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Mistral 22B scores 46.8 on zero-shot OpenBookQA.", True),
        ("Mistral 22B has the best average, 73.6, ahead of Falcon at 69.3.", True),
        # the other size's cell, another model's cell
        ("Mistral 22B scores 40.6 on zero-shot OpenBookQA.", False),
        ("Falcon scores 95.1 on zero-shot SciQ.", False),
    ],
)
def test_a_claim_is_held_against_the_column_its_model_names(claim: str, said: bool) -> None:
    assert check_claim(claim, SIZED).supported is said


# two rows, each cell followed by its bracketed partner, named in the caption
PAIRED = (
    "NQ HotpotQA FEVER Fusion 52.4 (44.1) 61.0 (49.5) 88.2 (85.0) Cascade 47.9 (40.3) 55.6 (46.2) "
    "84.7 (80.9) Table 5: Accuracy (macro F1) of the two readers on three datasets."
)


def test_a_two_row_table_of_bracketed_pairs_is_read() -> None:
    table = read(PAIRED)
    assert table is not None
    assert [r.label for r in table.rows] == ["Fusion", "Cascade"]
    assert table.columns[:2] == ("NQ Accuracy", "NQ macro F1")


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Cascade has a macro F1 of 46.2 on HotpotQA.", True),
        ("Fusion reaches 88.2 accuracy on FEVER.", True),
        # the bracketed partner for the main cell, another dataset's partner
        ("Fusion reaches 85.0 accuracy on FEVER.", False),
        ("Cascade has a macro F1 of 40.3 on HotpotQA.", False),
    ],
)
def test_a_claim_is_held_against_the_cell_of_a_bracketed_pair(claim: str, said: bool) -> None:
    assert check_claim(claim, PAIRED).supported is said


# a label repeated over rows that differ by their cells
REPEATED_LABELS = (
    "Model Steps TPU Hours PPLX Baseline 1M 12.0K 9.40 Mixer 310K 4.1K 9.40 Mixer 1M 13.3K 8.95 "
    "Table 2: Steps and accelerator hours to reach a target perplexity."
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        # two rows named in one clause: each number is the row's named last before it
        ("Mixer needed 4.1K hours to match the baseline's perplexity of 9.40.", True),
        ("Mixer needed 12.0K hours to match the baseline's perplexity of 9.40.", False),
    ],
)
def test_the_row_named_last_before_a_number_is_its_row(claim: str, said: bool) -> None:
    assert check_claim(claim, REPEATED_LABELS).supported is said


# headings the caption spells out in words, with the heading in brackets after them
ABBREVIATED = (
    "Model #B #A W 300M 12 8 1024 2B 16 24 2560 9B 36 32 4096 Table 4: Architectures. We list the "
    "number of transformer blocks (#B), the number of attention heads (#A) and the hidden width (W)."
)


def test_a_caption_spells_out_the_headings_it_brackets() -> None:
    table = read(ABBREVIATED)
    assert table is not None
    assert table.columns == ("#B", "#A", "W")
    assert table.spelled == ("transformer blocks", "attention heads", "hidden width")


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The 2B model has 24 attention heads.", True),
        ("The 9B model stacks 36 transformer blocks.", True),
        # a cell of the same row, in the column the caption names otherwise
        ("The 2B model has 16 attention heads.", False),
        ("The 9B model stacks 32 transformer blocks.", False),
    ],
)
def test_a_claim_is_held_against_the_column_the_caption_names(claim: str, said: bool) -> None:
    assert check_claim(claim, ABBREVIATED).supported is said


# two rows, both named by a comparing claim, cells paired with a bracketed partner
COMPARED = (
    "Alpha Beta Gamma Delta Ranger 71.2 (60.1) 44.5 (30.2) 52.8 (41.7) 38.9 (25.0) "
    "Seeker 69.4 (58.3) 47.1 (33.9) 50.2 (40.8) 41.6 (27.4) "
    "Table 5: Accuracy (exact match) of the two agents trained on Alpha and tested on all four."
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("On Delta, Seeker does better than Ranger, 41.6 accuracy against 38.9.", True),
        ("On Gamma, Ranger does better than Seeker, 52.8 accuracy against 50.2.", True),
        # another column's cell for a row the claim names
        ("On Delta, Seeker does better than Ranger, 47.1 accuracy against 38.9.", False),
    ],
)
def test_a_claim_naming_two_rows_is_held_against_their_cells_in_its_column(claim: str, said: bool) -> None:
    assert check_claim(claim, COMPARED).supported is said


# headings of several words after the labels' heading
SEVERAL_WORDS = (
    "Table 2: Encoder variants. Model Blocks Hidden size D Feed-forward size Heads Params "
    "Enc-Small 6 512 2048 8 40M Enc-Medium 12 768 3072 12 110M Enc-Wide 12 1536 6144 24 420M"
)
# group headings before the labels' heading, each over the same multi-word headings with sizes
SHOTS = (
    "0-shot 5-shot Task Orca 3B Orca 30B Orca 3B Orca 30B ARC (acc) 41.0 55.2 47.3 63.9 "
    "BoolQ (acc) 60.4 71.8 66.0 78.5 PIQA (acc) 70.2 77.4 72.9 80.1 Table 6: Zero- and few-shot accuracy."
)
# model columns led by their sizes, and a group of rows of a corpus's subsets
SUBSETS = (
    "Table 9 | Bits per byte on each subset. Subset 2B Dense (Ours) Falcon Mosaic 2.5B Mixer "
    "wiki 0.702 0.811 0.744 0.650 code 0.391 0.512 0.433 0.288 legal 0.604 0.655 0.630 0.571"
)
# sub-headings repeated under groups named before the labels' heading
REPEATED_UNDER_GROUPS = (
    "News Stories Method greedy beam greedy beam Likelihood 0.71 0.66 0.74 0.69 "
    "Ranker 0.82 0.79 0.85 0.80 Probe 0.90 0.88 0.93 0.91 Table 3: Detection AUROC by decoding."
)


def test_headings_of_several_words_are_read() -> None:
    table = read(SEVERAL_WORDS)
    assert table is not None
    assert table.columns == ("Blocks", "Hidden size D", "Feed-forward size", "Heads", "Params")
    shots, subsets, grouped = read(SHOTS), read(SUBSETS), read(REPEATED_UNDER_GROUPS)
    assert (
        shots is not None and shots.columns[1] == "0-shot Orca 30B" and shots.columns[2] == "5-shot Orca 3B"
    )
    assert subsets is not None and subsets.columns == ("2B Dense (Ours)", "Falcon", "Mosaic", "2.5B Mixer")
    assert grouped is not None and grouped.columns[3] == "Stories beam"


@pytest.mark.parametrize(
    ("passage", "claim", "said"),
    [
        (SEVERAL_WORDS, "Enc-Medium has 12 attention heads and a hidden size of 768.", True),
        (SEVERAL_WORDS, "Enc-Wide has a hidden size of 6144.", False),
        # the column named by its group ("zero-shot" for "0-shot") and its model's size
        (SHOTS, "Orca 30B reaches 71.8% on BoolQ zero-shot and 78.5% five-shot.", True),
        (SHOTS, "Zero-shot, Orca 30B reaches 78.5% on BoolQ.", False),
        (
            SUBSETS,
            "On the code subset, the 2.5B Mixer model gets 0.288 bits per byte, below Falcon's 0.512.",
            True,
        ),
        (SUBSETS, "On the code subset, the 2.5B Mixer model gets 0.433 bits per byte.", False),
        # one number: the whole sentence names its column ("beam" on "Stories")
        (REPEATED_UNDER_GROUPS, "With beam search on Stories, Probe reaches an AUROC of 0.91.", True),
        (REPEATED_UNDER_GROUPS, "With beam search on Stories, Probe reaches an AUROC of 0.93.", False),
        # the claim's own list of columns, in order
        (
            REPEATED_UNDER_GROUPS,
            "On Stories, Ranker scores 0.85 and 0.80 with greedy and beam decoding, respectively.",
            True,
        ),
    ],
)
def test_a_claim_is_held_against_a_column_of_several_words(passage: str, claim: str, said: bool) -> None:
    assert check_claim(claim, passage).supported is said


# a table whose words a claim need not share: its row and column say what the number is of
DOMAINS = (
    "Table 4 | Results per domain, as accuracy. Domain Baseline Tuned Gain Finance 61.2 68.9 7.7 "
    "Medicine 55.0 66.3 11.3 Law 58.4 60.1 1.7 Sports 70.5 71.0 0.5"
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("For Medicine the fine-tuned system scores 66.3 against the untouched system's 55.0.", True),
        ("For Medicine the fine-tuned system scores 60.1 against the untouched system's 55.0.", False),
    ],
)
def test_a_claim_the_table_states_needs_not_share_its_words(claim: str, said: bool) -> None:
    assert check_claim(claim, DOMAINS).supported is said


# the first row's label is a name and a bracket ("Alpha (F1)"), the other labels one word each
BRACKETED_LABELS = (
    "Task 0-shot 5-shot Alpha (F1) 21.0 30.2 Beta 33.1 40.8 Gamma 12.5 0.96 Delta 11.0 14.2 "
    "Table 2: Scores with nucleus sampling, p = 0.96."
)


def test_a_first_label_is_not_a_bracket_alone() -> None:
    table = read(BRACKETED_LABELS)
    assert table is not None
    assert [r.label for r in table.rows] == ["Alpha (F1)", "Beta", "Gamma", "Delta"]


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Zero-shot, the model scores 21.0 F1 on Alpha, against 33.1 on Beta.", True),
        # a setting the claim states is not a cell of another row
        ("With p = 0.96, the model scores 40.8 on Beta five-shot.", True),
        ("Zero-shot, the model scores 33.1 F1 on Alpha.", False),
    ],
)
def test_a_claim_on_bracketed_labels_and_a_setting(claim: str, said: bool) -> None:
    assert check_claim(claim, BRACKETED_LABELS).supported is said


def test_rows_that_cannot_be_told_apart_decide_nothing_between_them() -> None:
    # two rows of one label and one first cell ("Big 400"): the number in the other is no reason
    cells = [values("400 50 8192")[1], values("400 175 6144")[1]]
    table = Table(tuple(Row("Big", tuple(c)) for c in cells), ())
    claim = "The Big run with 50 layers has 6144 units."
    assert verdict(claim, table, values(claim)[1][-1]) == (False, "")


# a heading abbreviated ("Avg.") names the column a claim spells out ("average")
ABBREVIATED_HEADING = (
    "Method Alpha Beta Avg. Ranker 0.82 0.79 0.81 Probe 0.90 0.88 0.89 Likelihood 0.71 0.66 0.69 "
    "Table 5: AUROC."
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Probe's average AUROC is 0.89.", True),
        ("Probe's average AUROC is 0.90.", False),
    ],
)
def test_an_abbreviated_heading_names_its_column(claim: str, said: bool) -> None:
    assert check_claim(claim, ABBREVIATED_HEADING).supported is said


# group headings over repeated two-heading groups, footnote letters on the earlier best's cells and
# the shots a cell took in brackets ("88.1 (4)"): neither is a cell
FOOTNOTED = (
    "0-shot Few-shot Task Prior SOTA Ours 30B Prior SOTA Ours 30B SciQ (acc) 61.2a 66.4 70.3b (8) "
    "74.9 (4) ARC (acc) 45.0c 43.7 52.8a (16) 57.1 (8) OBQA (acc) 50.6a 55.2 58.4c (32) 60.0 (8)"
)


def test_footnote_letters_and_bracketed_shots_are_no_cells() -> None:
    table = read(FOOTNOTED)
    assert table is not None
    assert table.columns == (
        "0-shot Prior SOTA",
        "0-shot Ours 30B",
        "Few-shot Prior SOTA",
        "Few-shot Ours 30B",
    )
    assert [c.text for c in table.rows[1].cells] == ["45.0", "43.7", "52.8", "57.1"]


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Zero-shot, Ours 30B scores 66.4 on SciQ, against 61.2 for the prior state of the art.", True),
        # the few-shot columns' numbers, said of zero-shot
        ("Zero-shot, Ours 30B scores 74.9 on SciQ, against 61.2 for the prior state of the art.", False),
        ("Zero-shot, Ours 30B scores 66.4 on SciQ, against 70.3 for the prior state of the art.", False),
    ],
)
def test_an_acronym_heading_is_named_by_its_words(claim: str, said: bool) -> None:
    assert check_claim(claim, FOOTNOTED).supported is said


# a header that opens the text (no labels' heading), and labels told apart by an arrow's end
ARROWED = (
    "Samples Docs Words Multi-News S →T 5,622 2.7 2103.5 Multi-News S →H 4,310 2.7 1980.2 "
    "WikiSum S →T 12,004 40.1 8115.9 Table 4: Summarisation sets."
)


def test_a_header_that_opens_the_text_names_the_columns() -> None:
    table = read(ARROWED)
    assert table is not None
    assert table.columns == ("Samples", "Docs", "Words")


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("Multi-News S→H has 4,310 samples.", True),
        # the other arrow's row
        ("Multi-News S→H has 5,622 samples.", False),
    ],
)
def test_an_arrow_in_a_label_tells_rows_apart(claim: str, said: bool) -> None:
    assert check_claim(claim, ARROWED).supported is said


def test_a_header_after_prose_names_the_columns() -> None:
    passage = (
        "We train both models for 100,000 steps on the mixture. Both forget little. BoolQ COPA RTE WiC "
        "WSC MultiRC Alpha 81.2 77.0 70.4 66.1 64.9 72.8 Beta 79.5 80.0 71.2 62.3 66.0 70.1"
    )
    table = read(passage)
    assert table is not None and table.columns == ("BoolQ", "COPA", "RTE", "WiC", "WSC", "MultiRC")
    assert check_claim("Beta beats Alpha on COPA, 80.0 to 77.0.", passage).supported
    assert not check_claim("Beta beats Alpha on COPA, 80.0 to 70.4.", passage).supported


def test_a_lone_number_sign_heads_no_column() -> None:
    # "# layers # params": the words after the mark complete it; read one word a column, "#" would head
    # the parameters' column and "params" the errors'
    passage = (
        "method error (%) Alpha [3] 9.1 Beta [4] 8.7 # layers # params Gamma [5] 19 2.5M 8.39 "
        "Net 20 0.27M 8.75 Net 56 0.85M 6.97 Net 110 1.7M 6.43 Table 2. Error on the test set."
    )
    assert check_claim(
        "The 110-layer Net, with about 1.7 million parameters, has a test error of 6.43%.", passage
    ).supported


def test_a_row_named_by_most_of_its_label_in_the_numbers_clause() -> None:
    # "fused ORCA's 68.2": the clause names the fused row by its name and its distinguishing word,
    # though the claim names another row in full
    passage = (
        "Model Dev Test Avg ORCA (single) 61.4 60.9 61.2 ORCA (dense, fused) 68.9 67.5 68.2 "
        "GRIT 71.0 70.6 70.8 Table 4: Accuracy on the benchmark."
    )
    assert check_claim("GRIT has the best average, 70.8, ahead of fused ORCA's 68.2.", passage).supported
    assert not check_claim("GRIT has the best average, 70.8, ahead of fused ORCA's 61.2.", passage).supported


# two tables, each after its caption's part: the second's cells start with a point (".41")
TWO_TABLES = (
    "Loss (↓) Accuracy (↑) Model Dev Test Dev Test Small 2.31 2.40 61.2 60.1 Base 2.02 2.11 66.8 65.9 "
    "Large 1.87 1.95 70.3 69.4 Table 2: Language modelling. Larger models do better on every split. "
    "Setup Alpha Beta Zero-shot .412 .455 One-shot .431 .502 Few-shot (binary) .298 .611 "
    "Few-shot (multiclass) .520 .648 Table 3: Toxicity detection F1 of Alpha and Beta."
)


def test_each_table_of_a_passage_is_read_from_its_own_part() -> None:
    tables = read_all(TWO_TABLES)
    assert len(tables) == 2
    second = tables[1]
    assert second.columns == ("Alpha", "Beta")
    assert second.rows[0].label == "Zero-shot"
    assert [c.text for c in second.rows[2].cells] == [".298", ".611"]
    assert check_claim(
        "In the few-shot binary setting, Beta's F1 (.611) is about twice Alpha's (.298).", TWO_TABLES
    ).supported
    assert not check_claim("In the few-shot binary setting, Beta's F1 is .455.", TWO_TABLES).supported
    assert check_claim("The large model reaches 69.4 test accuracy.", TWO_TABLES).supported


# columns headed by rising whole numbers (sequence lengths) under the labels' heading; rows whose
# last cells are empty ("-") end just before the next row's label
BY_LENGTH = (
    "Table 7: Backward pass runtime (ms) by sequence length. Kernel Method 256 512 1024 2048 4096 8192 "
    "Naive 0.52 1.10 3.91 14.80 - - Chunked 0.61 0.95 2.40 8.72 33.10 - Fused 0.09 0.21 0.74 2.61 9.90 "
    "38.40 Fused Sparse 0.11 0.15 0.31 0.70 1.62 3.95 Tiled 0.40 0.72 1.51 3.20 7.05 15.30"
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("At sequence length 8192, Fused takes 38.40 ms in the backward pass.", True),
        ("At sequence length 8192, Fused takes 9.90 ms in the backward pass.", False),
        ("At length 4096, Fused Sparse's backward pass takes 1.62 ms, faster than Tiled's 7.05 ms.", True),
        ("At sequence length 8192, Tiled is roughly four times slower than Fused Sparse.", True),
    ],
)
def test_columns_headed_by_rising_numbers(claim: str, said: bool) -> None:
    table = read(BY_LENGTH)
    assert table is not None and table.columns == ("256", "512", "1024", "2048", "4096", "8192")
    assert [r.label for r in table.rows][:4] == ["Naive", "Chunked", "Fused", "Fused Sparse"]
    assert check_claim(claim, BY_LENGTH).supported is said


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("At sequence length 8192, Tiled is slower than Fused Sparse.", True),
        ("At sequence length 8192, Tiled is faster than Fused Sparse.", False),
        ("At sequence length 4096, Fused has a higher runtime than Fused Sparse.", True),
        ("At sequence length 4096, Fused Sparse has a higher runtime than Fused.", False),
    ],
)
def test_two_rows_compared_at_a_column(claim: str, said: bool) -> None:
    # a runtime: less of it is faster; the column is the one the claim names by its number
    assert check_claim(claim, BY_LENGTH).supported is said


def test_a_comparison_of_rows_on_a_rate_is_left_alone() -> None:
    # a throughput is the other way round from a runtime: "faster" is not judged on it
    passage = BY_LENGTH.replace("Backward pass runtime (ms)", "Backward pass throughput (tokens/s)")
    assert check_claim("At sequence length 8192, Tiled is faster than Fused Sparse.", passage).supported


# a first label a word longer than the others ("Open Web"), group headings of unequal spans, arrows
# that say which way is better, and cells with star marks
WIDER_FIRST = (
    "Retriever (→) Sparse Dense Hybrid Dataset (↓) Okapi Splade Contriever Tower Fusion Open Web 0.61 0.66 "
    "0.70 0.69 0.72 Medline 0.41⋆ 0.38⋆ 0.35⋆ 0.44⋆ 0.47⋆ Patents 0.22 0.25 0.31 0.27 0.33 Forums 0.52 "
    "0.49 0.57 0.55 0.60"
)


def test_a_first_label_a_word_longer_leaves_the_header_and_starred_cells_are_read() -> None:
    table = read(WIDER_FIRST)
    assert table is not None
    assert table.columns == ("Okapi", "Splade", "Contriever", "Tower", "Fusion")
    assert [r.label for r in table.rows] == ["Open Web", "Medline", "Patents", "Forums"]
    assert [c.text for c in table.rows[1].cells] == ["0.41", "0.38", "0.35", "0.44", "0.47"]
    assert check_claim("On Patents, Splade scores 0.25.", WIDER_FIRST).status == "supported"
    assert check_claim("On Patents, Splade scores 0.31.", WIDER_FIRST).status == "not_stated"
    assert check_claim("On Medline, Tower scores 0.44.", WIDER_FIRST).status == "supported"
    assert check_claim("On Medline, Tower scores 0.38.", WIDER_FIRST).status == "not_stated"


# two short rows: a table only because a header names their columns and a caption follows them
TWO_ROWS = (
    "CIFAR SVHN Probe-only (SIMPLE) 71.40 66.20 ViT tuned 91.30 73.85 Table 4: Accuracy of the "
    "probe and the tuned model on CIFAR and on our digits set (SVHN). We then turn to the digits."
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("The tuned ViT reaches 91.30 on CIFAR.", True),
        ("The tuned ViT reaches 73.85 on CIFAR.", False),
        ("On SVHN, the Simple probe scores 71.40.", False),
        # a closing pair in the order the rows are named, one row of its own each
        ("On SVHN the tuned ViT beats Simple by about eight points, 73.85 against 66.20.", True),
        ("On SVHN the tuned ViT beats Simple by about eight points, 66.20 against 73.85.", False),
    ],
)
def test_two_captioned_rows_are_a_table_and_a_closing_pair_follows_the_names(claim: str, said: bool) -> None:
    table = read(TWO_ROWS)
    assert table is not None and table.columns == ("CIFAR", "SVHN")
    assert check_claim(claim, TWO_ROWS).supported is said


# cells of two measures ("94.9/96.4"), and a second table of the same columns without the named row
SLASHED = (
    "Model Avg BoolQ CB MultiRC RTE WiC T5-Base 81.2 80.5 91.0/94.2 79.1/41.3 85.0 70.2 MoE-8 84.6 "
    "83.9 96.4/98.0 82.7/49.9 88.1 74.4 Ours (tuned) 83.9 82.8 96.4/98.0 81.5/47.2 88.1 71.6 Table 6: "
    "Results on the dev set. Model Avg BoolQ CB MultiRC RTE WiC Few-shot 71.0 78.0 83.9 75.2/- 70.4 52.3 "
    "Tuned 83.9 82.8 96.4/98.0 81.5/47.2 88.1 71.6 Table 7: Our model few-shot and tuned."
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("On CB, T5-Base reaches an F1 of 94.2.", True),
        ("On MultiRC, MoE-8 scores 82.7.", True),
        ("On MultiRC, MoE-8 scores 81.5.", False),
        ("On RTE, the tuned model and MoE-8 are tied at 88.1.", True),
        # the number given to a row only the first table has, where the second has the other row's
        ("On WiC, the tuned model scores 74.4, ahead of MoE-8 at 71.6.", False),
    ],
)
def test_cells_of_two_measures_and_the_table_that_names_the_row(claim: str, said: bool) -> None:
    assert [t.columns[-1] for t in read_all(SLASHED)] == ["WiC", "WiC"]
    assert check_claim(claim, SLASHED).supported is said


EMPTY_CELLS = (
    "Table 4: Runtime (ms) by sequence length. Method 128 256 512 1024 2048 Dense 0.21 0.43 1.27 4.32 - "
    "Banded 0.24 0.42 1.33 - - Lowrank 0.46 0.45 0.50 1.09 2.09 Tiled 0.08 0.18 0.68 2.40 8.42 "
    "Sparse Tiled 0.56 0.63 0.65 0.61 0.96 Hashed 1.94 3.01 5.69 11.26 - Scored -1.46 +9.61 8.10 5.60 -"
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("At 512 tokens, Dense takes 1.27 ms, about twice as long as Tiled's 0.68 ms.", True),
        ("At 512 tokens, Banded takes 1.33 ms.", True),
        ("At 512 tokens, Banded takes 0.65 ms.", False),
        ("At 256 tokens, Hashed takes 3.01 ms.", True),
        ("At 256 tokens, Hashed takes 0.63 ms.", False),
        ("At 256 tokens, Scored takes 9.61 ms.", True),
        ("At 256 tokens, Scored takes 3.01 ms.", False),
        # a count in words counts rows; a cell does not gainsay it
        (
            "Apart from the two Tiled methods, Lowrank is the only one with a time at 2048 tokens, 2.09 ms.",
            True,
        ),
    ],
)
def test_rows_with_empty_and_signed_cells_are_read(claim: str, said: bool) -> None:
    table = read(EMPTY_CELLS)
    assert table is not None
    assert [r.label for r in table.rows][:2] == ["Dense", "Banded"]
    assert [c.text for c in table.rows[1].cells][-2:] == ["-", "-"]
    assert check_claim(claim, EMPTY_CELLS).supported is said


def test_a_captions_words_and_stops_are_no_header() -> None:
    text = (
        "Table 9 | Full results. First two rows match Fig. 1, the last rows Fig. 3. Base Ours Ours "
        "10M 20M 10M 20M 10M 20M Eval bpb 0.98 0.92 0.98 0.92 0.82 0.77 Eval bpb (9B) - - - - 0.88 "
        "0.83 Eval bpb (3B) - - - - 0.92 0.87 Eval bpb (1B) - - - - 0.94 0.89"
    )
    table = read(text)
    assert table is not None and len(table.rows) >= 4
    assert all(any(ch.isalnum() for ch in c) for c in table.columns)


SIZES_HEADER = (
    "Table 3 | Full results; the first rows are Fig. 1. Base Ours [Off] Ours[On] 10M 20M 10M 20M 10M 20M "
    "Eval bpb 0.98 0.92 0.97 0.90 0.82 0.77 Eval bpb (9B) - - - - 0.88 0.83 Eval bpb (3B) - - - - 0.92 "
    "0.87 Eval bpb (1B) - - - - 0.94 0.89"
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("With retrieval on, the 20M Ours model reaches 0.77 bpb on Eval.", True),
        ("The 20M Base model reaches 0.77 bpb on Eval.", False),
        ("The 10M Base model reaches 0.98 bpb on Eval.", True),
        # a number in a row's brackets is that row's name
        ("With a 9B-token database, the 20M Ours model with retrieval on reaches 0.83 bpb.", True),
    ],
)
def test_a_header_of_sizes_under_groups(claim: str, said: bool) -> None:
    table = read(SIZES_HEADER)
    assert table is not None
    assert table.columns[:2] == ("Base 10M", "Base 20M")
    assert table.columns[-1] == "Ours[On] 20M"
    assert check_claim(claim, SIZES_HEADER).supported is said


LIGATURES = (
    "Retrieval IMDB SubjQA Retrieval oﬀ 61.90 57.50 Retrieval on 80.10 55.30 Retrieval ﬁltered 88.20 "
    "62.77 Retrieval mixed 84.40 60.05 Table 8: Subjectivity accuracy."
)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("With retrieval off, the model reaches 57.50 on SubjQA.", True),
        ("With retrieval off, the model reaches 55.30 on SubjQA.", False),
        ("With filtered retrieval, the model reaches 62.77 on SubjQA.", True),
        ("With filtered retrieval, the model reaches 60.05 on SubjQA.", False),
    ],
)
def test_a_labels_ligatures_are_its_letters(claim: str, said: bool) -> None:
    table = read(LIGATURES)
    assert table is not None
    number = next(v for v in values(claim)[1] if "." in v.text)
    decided, why = verdict(claim, table, number)  # the row is read, "oﬀ" as "off"
    assert decided and (why == "") is said
    assert check_claim(claim, LIGATURES).supported is said
