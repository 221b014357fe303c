"""Bounds, units, kinds' numerals and what a comparison compares, read by the claim checker
(chat.claims): "more than" and "fewer than" bound a number and are no comparison, but a bound turned
round is a wrong claim; "secs" is "seconds"; "25 %" is 25%; "Level II" names a kind as "type 2"
does; gaps of scaled numbers and the rest of a whole may be worked out; a bracket after a number
labels it only where its sentence gives another such number; one number with the noun it counts
ties a claim to its passage; "more X than Y" compares X and Y; a fronted "Compared to A" is a side;
a prefix makes another thing; a capitalised word the passage never writes is a name it does not
state; "ICU" spells "intensive care unit"; and a degree ("more extractive") is no kind."""

from __future__ import annotations

import pytest

from chat.claims import check_claim
from chat.names import names

SURVEY = (  # written for these tests in the way abstracts and evaluation sections report results
    "We trained a compact convolutional network on over 90 million labelled crops. It reaches an "
    "accuracy of 0.91 with fewer than 300,000 parameters, so it runs on a phone."
)
TIMING = (
    "Annotators were slightly more accurate without hints. However, hints helped on the first units of "
    "a document, cutting the time from 112.9 to 81.2 secs per unit, while the whole document took 47.5 "
    "seconds per unit on average."
)
MODULI = (
    "Samples cut from the core are stiffer than the scans suggest: bulk and shear moduli of the cut "
    "samples are 18 % and 27 % lower, respectively, than those derived from the scans."
)
EXAMS = (
    "We evaluate reasoning models on mock exams of three levels. Model A reaches a record score of 95.1% "
    "on Level I. On Level II the best is Model B with 91.7%. On Level III the best score is 83.0%."
)
TOKENS = (
    "We estimate that the corpus holds approximately 30B tokens of body text and 12B tokens of abstract "
    "text, more than enough for pretraining."
)
CROWD = (
    "In pilot experiments we hired crowdworkers with a 95%+ approval rating. In our qualification task "
    "of spotting errors in summaries, they scored just 58% (binary choice) with a Fleiss kappa of 0.2."
)
EXTRACTIVE = (
    "Compared to news, papers are more extractive. By default, the two systems were highly extractive "
    "compared to human-written summaries (81% / 70% vs 52% bigram overlap with the source)."
)


@pytest.mark.parametrize(
    ("claim", "passage", "kind"),  # kind "": stated
    [
        # a bound is no comparison: "over 90 million … fewer than 300,000" says no direction
        ("The network was trained on more than 90 million crops and reaches 0.91 accuracy.", SURVEY, ""),
        # … but a bound turned round is wrong
        ("The network has more than 300,000 parameters.", SURVEY, "number"),
        ("The network was trained on fewer than 90 million crops.", SURVEY, "number"),
        # one number with the noun it counts ties the claim to the passage
        ("The model needs under 300,000 parameters.", SURVEY, ""),
        # "secs" is "seconds": 81.2 is the first units' time
        ("Hints cut the time on the first units to 81.2 seconds per unit.", TIMING, ""),
        ("On average the whole document took 47.5 seconds per unit.", TIMING, ""),
        ("On average the whole document took 81.2 seconds per unit.", TIMING, "number"),
        # "27 %" is 27%, and "respectively" gives it to the shear moduli
        ("Shear moduli of the cut samples are 27% lower than those from the scans.", MODULI, ""),
        ("Shear moduli of the cut samples are 18% lower than those from the scans.", MODULI, "number"),
        # "Level II" names a kind: the record score on Level I is not Level II's
        ("Model B led Level II with a score of 91.7%.", EXAMS, ""),
        ("Model B led Level II with a score of 95.1%.", EXAMS, "number"),
        # a difference of scaled numbers the claim works out
        ("The body text exceeds the abstract text by about 18 billion tokens.", TOKENS, ""),
        ("The body text exceeds the abstract text by about 25 billion tokens.", TOKENS, "number"),
        # "(binary choice)" says what was measured: no other percentage in its sentence to tell apart
        ("In the qualification task, the crowdworkers scored only 58%.", CROWD, ""),
        # a degree is no kind: "more extractive" is not "highly extractive" swapped
        ("By default the two systems were more extractive than the human-written summaries.", EXTRACTIVE, ""),
    ],
)
def test_bounds_units_and_numerals(claim: str, passage: str, kind: str) -> None:
    result = check_claim(claim, passage)
    assert result.kind == "number" if kind == "number" else result.supported, (claim, result)


CORPUS = (
    "We estimate that the archive holds approximately 40B tokens of full body text and 9B tokens of "
    "abstract text."
)
DATASETS = "Compared to NewsSum, MedSum is more extractive: 61% of summary bigrams are present in the source."
CELLS = (
    "Across four external cohorts, CellNet outperforms current models in F1 by 12.5% while using 4x fewer "
    "parameters. Our maps are fused with radar data from Sentinel-1."
)
SCHEMES = (
    "We show that the non-adaptive schemes come very close to the adaptive one: the adaptive scheme "
    "is only slightly better than the non-adaptive schemes."
)


WARD = (
    "Subjects: 1,020 admissions to the intensive care unit over two years. Results: crude mortality fell "
    "from 31% before the change to 22% afterwards (P=0.02)."
)
GAMES = "BaseNet was only evaluated on 41 of the 57 games; missing results are marked with a dash."
SEEDS = (
    "Only a few settings of the threshold solve the task (Fig. 2a), with a great variance across seeds. "
    "Finally, "
    "the prior of PonderNet is easy to read as the inverse of the number of steps, whereas the threshold "
    "of ACT has no such reading. Each box-plot is over 10 random seeds."
)


@pytest.mark.parametrize(
    ("claim", "passage", "flagged"),
    [
        # "more abstract text than full body text" compares the two texts, by the passage's numbers
        ("The archive holds more body text than abstract text.", CORPUS, False),
        ("The archive holds more abstract text than full body text.", CORPUS, True),
        # a side fronted: "Compared to A, B is more …" is "B is more … than A"
        ("MedSum is more extractive than NewsSum.", DATASETS, False),
        ("Compared to NewsSum, MedSum is the more extractive dataset.", DATASETS, False),
        ("Compared to MedSum, NewsSum is the more extractive dataset.", DATASETS, True),
        ("NewsSum is more extractive than MedSum.", DATASETS, True),
        # an amount of the same thing the other way
        ("CellNet uses four times fewer parameters than current models.", CELLS, False),
        ("CellNet uses four times more parameters than current models.", CELLS, True),
        # a capitalised word the passage writes in no form is a name it does not state
        ("The maps are fused with radar data from Sentinel-1.", CELLS, False),
        ("The maps are fused with optical data from Landsat.", CELLS, True),
        # … unless it names what the passage calls the authors' own ("our maps")
        ("The Cartograph maps are fused with radar data from Sentinel-1.", CELLS, False),
        # a prefix makes another thing: "non-adaptive" is not "adaptive"
        ("The adaptive scheme is slightly better than the non-adaptive schemes.", SCHEMES, False),
        ("The non-adaptive schemes are slightly better than the adaptive scheme.", SCHEMES, True),
        # a change's start owns no word past its end; "afterwards" is "after"
        ("Crude mortality in the ICU fell from 31% to 22% after the change.", WARD, False),
        # "ICU" spells "intensive care unit"
        ("There were 1,020 ICU admissions over two years.", WARD, False),
        # the rest of a whole: 57 less 41
        ("BaseNet has results for only 41 of the 57 games, so 16 games lack a BaseNet score.", GAMES, False),
        ("BaseNet has results for only 41 of the 57 games, so 12 games lack a BaseNet score.", GAMES, True),
        # a sentence's first word ("Finally") is no name, wherever the text is cut
        (
            "PonderNet's prior can be read as the inverse of the number of steps, whereas ACT's threshold "
            "has no such reading.",
            SEEDS,
            False,
        ),
    ],
)
def test_comparisons_changes_and_names(claim: str, passage: str, flagged: bool) -> None:
    result = check_claim(claim, passage)
    assert (not result.supported) == flagged, (claim, result)


def test_a_sentence_opening_is_no_name_after_a_figure_reference() -> None:
    # positions are read in the text with its figure references taken out
    found = names(SEEDS, anywhere=True)
    assert "Finally" not in found and {"PonderNet", "ACT"} <= set(found)
