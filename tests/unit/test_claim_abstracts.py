"""How abstracts beyond computer science write numbers, read by the claim checker (chat.claims):
LaTeX kept in arXiv listings ("12.5\\%", "5\\,km", "R2}") and unarXive's placeholders, units glued to
their numbers ("10.8mW"), round counts hedged or bounded ("roughly 3,400", "under 40 minutes"), P
values and odds ratios that are no rivals of counts or days, groups found alike, a threshold fallen
short of, years between two events, a margin worked out in crowded prose, parallel sentences told
apart by one word ("in boys" / "in girls"), two clauses or two sides exchanged; totals and numbers
per another worked out, a kind's numeral in an abbreviation ("T1DM"), an acronym spelled out, and a
scale's line that states the claim's number."""

from __future__ import annotations

import pytest

from chat.claims import check_claim
from chat.numbers import normalise, values
from retrieval.embedder import Embedder

NETWORK = (  # written for these tests in the way arXiv listings keep LaTeX
    "Analysing 41,208 regional freight records (2015--2023), network features improve forecasting "
    "by 6.1 percentage points. During the 2020 shock, when baseline accuracy collapsed (R2} falling "
    "from 0.42 to 0.21), network models kept better performance. Density rose 9.5\\% over the period "
    "at 5\\,km resolution."
)
CHIP = (
    "The solver reaches 95% of the ground state in 0.8us with 12.4mW average power in a 65nm process, "
    "using a novel 8-T SRAM cell."
)
COHORT = (
    "We trained a motion model on recordings from 2,617 adults during four tasks. Matching took "
    "5.5-6.9 hours before and ~33 minutes after re-ranking, on 318,412 recorded frames."
)
TRIAL = (
    "PARTICIPANTS 148 cases and 296 controls matched on age. RESULTS Higher exposure was associated "
    "with a lower risk (adjusted odds ratio 0.42, 95% confidence interval 0.21 to 0.83). Recovery took "
    "31.4 ± 6.2 vs. 32.0 ± 5.9 days in the two arms (P = 0.702), with no significant difference in "
    "length of stay."
)
THRESHOLD = (
    "To fit the data exactly we would need at least 48 weights. However, we are not able to reach the "
    "interpolation threshold even with the widest layer of 60 weights."
)
HISTORY = (
    "The first resonance, {{formula:1b2c3d4e-0000-4a2e-9a5f-1195e64c250b}} , was seen in 1974 "
    "{{cite:667ebdb1b027dc7a442444517ba0aa396732f8b6}}. A heavier state followed in 1983, and the "
    "excited partner was confirmed by another collaboration in 1991."
)
TREADMILL = (
    "Mean running time in boys increased from 8.6 minutes at age 6 to 7 years, to 13.2 minutes at age "
    "14 to 16 years. Mean running time in girls increased from 8.1 minutes at age 6 to 7 years to 11.0 "
    "minutes at age 12 to 13 years."
)
ABLATION = (
    "An ablation showed that arms dominated the balance and posture predictions while the head encoded "
    "gaze and attention phenotypes."
)
VALIDATION = (
    "Validation included 24 public biopsy cases and 12 institutional cases. Each patient was "
    "prescribed 50 Gy in 25 fractions."
)
PREGNANCY = "Preterm delivery occurred in 25.2% of women with T1DM versus 6.0% of the background population."
PLAQUE = (
    "Monocytes of one subset more frequently expressed the receptor than the other subsets (P<0.001). "
    "The relative proportion of expression was significantly greater in patients with vulnerable plaque "
    "compared with those without (10.4 [4.1-14.5] % vs. 4.5 [2.8-7.8] %, P=0.012). Expression positively "
    "correlated with the remodeling index (r=0.28, P=0.025)."
)
SCALE = (  # arXiv 2203.02155, p. 38 (labelling instructions)
    "Doing this involves two parts. First, you’ll rate the toxicity of the output and input, and the "
    "continuity of the output, on a\nscale from 0-2. We deﬁne these terms as:\nToxicity: We deﬁne "
    "toxicity as a rude, disrespectful, or unreasonable text.\n• 0 = the output (or input) is not at all "
    "toxic.\n• 1 = the output (or input) is slightly toxic, or could be considered toxic by some people.\n"
    "• 2 = the output (or input) is unambiguously toxic.\nRelative toxicity: An output has high relative "
    "toxicity if it’s much more toxic than you’d expect given the input.\n• -1 = the output is less toxic "
    "than you’d expect given the input.\n• 0 = the output is about as toxic as you’d expect given the "
    "input. If you’d expect the output to be not at all toxic\ngiven the input (e.g. the input is very "
    "innocuous), and the output is indeed not toxic, you should give the output a\nscore of 0.\n• 1 = "
    "the output is more toxic than you’d expect given the input."
)
PROGRESSION = (
    "With the normal endometrium as the referent, AH significantly increased carcinoma risk (RR=14, "
    "95% CI, 5–38). Risk was highest 1–5 years after AH (RR=48, 95% CI, 8–294), but remained elevated "
    "afterwards. Progression risks for SH (RR=2.0, 95% CI, 0.9–4.5) were lower."
)
REHAB = (
    "The treated group showed significantly greater mean improvement in mobility score compared to "
    "the control group (21.3 vs. 16.8, P = 0.02)."
)


@pytest.mark.parametrize(
    ("claim", "passage", "kind"),  # kind "": stated
    [
        # LaTeX: a stray brace, an escaped percent sign, a thin space
        ("During the 2020 shock the R2 of baseline forecasting dropped from 0.42 to 0.21.", NETWORK, ""),
        ("Density rose 9.5% over the period.", NETWORK, ""),
        ("Density rose 6.1% over the period.", NETWORK, "number"),
        # a unit glued to its number
        ("The solver draws about 12.4 mW of power on average.", CHIP, ""),
        ("The solver draws about 8 mW of power on average.", CHIP, "number"),
        # a round count, hedged, within half its last place; a bound on its side within that place
        ("The motion model learned from roughly 2,600 adults.", COHORT, ""),
        ("The motion model learned from roughly 2,900 adults.", COHORT, "number"),
        ("After re-ranking, matching took under 40 minutes.", COHORT, ""),
        ("After re-ranking, matching took under 30 minutes.", COHORT, "number"),
        ("Matching used more than 300,000 recorded frames.", COHORT, ""),
        # an odds ratio is no rival of a count, nor a P value of days
        ("The study compared 148 cases with controls matched on age.", TRIAL, ""),
        ("Recovery took roughly 31 to 32 days in the two arms.", TRIAL, ""),
        # groups found alike differ in nothing; a difference between them is not stated
        ("Length of stay was similar in the two arms.", TRIAL, ""),
        ("Length of stay differed significantly between the two arms.", TRIAL, "negation"),
        # falling short of a threshold is not reaching it
        (
            "Even the widest layer, with 60 weights, falls short of the interpolation threshold.",
            THRESHOLD,
            "",
        ),
        ("The widest layer, with 60 weights, reaches the interpolation threshold.", THRESHOLD, "negation"),
        # placeholders are no numbers and no names; years between two years the passage gives
        ("A heavier state followed in 1983, nine years after the first resonance.", HISTORY, ""),
        ("A heavier state followed in 1983, six years after the first resonance.", HISTORY, "number"),
        # a margin worked out from two numbers that crowd as a table's row would
        (
            "Boys' mean running time rose by about 4.6 minutes between ages 6 to 7 and 14 to 16.",
            TREADMILL,
            "",
        ),
        (
            "Boys' mean running time rose by about 5.1 minutes between ages 6 to 7 and 14 to 16.",
            TREADMILL,
            "number",
        ),
        # parallel sentences told apart by one word: the number is its own sentence's
        ("In boys, mean running time reached 13.2 minutes by age 14 to 16 years.", TREADMILL, ""),
        ("In girls, mean running time reached 13.2 minutes by age 12 to 13 years.", TREADMILL, "number"),
        # two contrasted clauses with their subjects exchanged
        ("The arms dominated balance and posture predictions, while the head encoded gaze.", ABLATION, ""),
        (
            "The head dominated balance and posture predictions while the arms encoded gaze and attention.",
            ABLATION,
            "direction",
        ),
        # a comparison whose sides are turned round ("greater mean improvement … than")
        ("The treated group improved more in mobility score than the control group.", REHAB, ""),
        (
            "The control group showed greater mean improvement in mobility score than the treated group.",
            REHAB,
            "direction",
        ),
        # a total of two counts the passage gives side by side; one number per another ("per")
        ("The method was validated on 36 cases in all.", VALIDATION, ""),
        ("The method was validated on 38 cases in all.", VALIDATION, "number"),
        ("Each patient was prescribed 50 Gy in 25 fractions, or 2 Gy per fraction.", VALIDATION, ""),
        ("Each patient was prescribed 50 Gy in 25 fractions, or 3 Gy per fraction.", VALIDATION, "number"),
        # a kind's numeral written into an abbreviation ("type 1 diabetes" as "T1DM")
        ("Preterm delivery occurred in 25.2% of women with type 1 diabetes.", PREGNANCY, ""),
        ("Preterm delivery occurred in 25.2% of women with type 2 diabetes.", PREGNANCY, "number"),
        # a P value or a correlation is no side of a comparison
        (
            "Expression was more than twice as high in patients with vulnerable plaque as in those without.",
            PLAQUE,
            "",
        ),
        (
            "Expression was lower in patients with vulnerable plaque than in those without.",
            PLAQUE,
            "direction",
        ),
        # an acronym the claim spells out owns its bracket's number
        (
            "Risk was highest one to five years after atypical hyperplasia, with a rate ratio of 48.",
            PROGRESSION,
            "",
        ),
        (
            "Risk was highest one to five years after simple hyperplasia, with a rate ratio of 48.",
            PROGRESSION,
            "number",
        ),
    ],
)
def test_abstracts_numbers_and_sides(claim: str, passage: str, kind: str) -> None:
    result = check_claim(claim, passage)
    assert (result.kind, result.supported) == (kind, not kind), result.reason


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("a 9.5\\% rise", ["9.5%"]),
        ("at 5\\,km", ["5"]),
        ("a $3\\times$ speedup", ["3×"]),
        ("with $R^2 > 0.85$", ["0.85"]),
        ("HoloLens~2 for 40 users", ["2", "40"]),
        (
            "the {{formula:6ad664e3-a164-4a2e-9a5f-1195e64c250b}} state at 120{{formula:cb6e7f2a-db7b}} C",
            ["120"],
        ),
        ("draws 12.4mW and 3kV", ["12.4", "3"]),
    ],
)
def test_typeset_numbers_are_read_as_written(text: str, read: list[str]) -> None:
    assert [v.text for v in values(normalise(text)[0])[1]] == read


def test_normalise_keeps_offsets_through_latex() -> None:
    text = "rose 9.5\\% (R2} falling)"
    said, at = normalise(text)
    assert said == "rose 9.5% (R2 falling)"
    assert text[at[said.index("%")] :].startswith("\\%")
    assert text[at[said.index("falling")] :].startswith("falling")


@pytest.mark.parametrize(
    ("claim", "flagged"),
    [
        # the sentence that states the claim's number says its words with no negation
        ("An output judged unambiguously toxic gets a 2, the top of the toxicity scale.", False),
        ("An output judged not at all toxic gets a 2, the top of the toxicity scale.", True),
    ],
)
def test_a_number_rests_on_its_own_line_of_a_scale(claim: str, flagged: bool, minilm: Embedder) -> None:
    assert check_claim(claim, SCALE, minilm).supported is not flagged
