"""Numbers a claim works out and numbers whose owner the text shows, read by the claim checker
(chat.claims): a gap said with a comparative ("16 layers shallower than"), a share of a count
("28% of 109, about 30"), a whole fronted before its part ("Of 228 patients, 121 …"), a rounded
percentage over a bare number that equals it, an interval in brackets after its value, ranges with
spaced dashes (prose, not a table), LaTeX's "2{,}200", a size glued to a model's name, a count
glued to its noun ("a 30-query benchmark"), weeks that are no count of patients, a people's
adjective for its country, two sides named the other way round ("A is 9 points below B" says "B
surpasses A by 9") and a study's design ("retrospectively")."""

from __future__ import annotations

import pytest

from chat.claims import check_claim
from chat.numbers import values
from chat.ratios import ratios

CIRCUITS = (  # written for these tests in the way methods sections and abstracts report results
    "The cutting method was tested on 6 and 12 qubits with circuit depth 36. We show how it reduces "
    "the depth requirement from 36 to two subcircuits of depth 20 each."
)
SCREENING = (
    "We screened candidate risk factors with the pipeline. Overall, 31% of 120 candidates were rated "
    "useful by clinicians, compared to 5% for a baseline."
)
ANAEMIA = (
    "Results. Of the total of 310 children with fever and cough, 142 children (46%) proved to be "
    "suffering from anaemia. Of them 98 children (69%) had mild anaemia while 44 children (31%) had "
    "severe anaemia. Of the 168 children without anaemia, 30 were underweight."
)
SMOKERS = (
    "The survey enrolled adults aged 40 years or older. Hypertension was found in 40.4% (95% CI "
    "35.1-45.7) of smokers and 18.2% (95% CI 14.0-22.4) of non-smokers; in 9 of the 22 clinics it "
    "exceeded 50%."
)
HAZARDS = (
    "Compared with the lowest quartile, the top quartile of the marker was associated with a lower "
    "risk of stroke (0.41 [0.22-0.76]) during 4.1 years of follow-up."
)
MICROSCOPE = (
    "Imaging was performed on a corrected microscope operated at 80 keV using a convergence angle of "
    "30 mrad with typical beam currents of 15 – 35 pA and a detector range of 70 – 190 mrad for the "
    "bright-field images. The dark-field images used a 12 mrad convergence angle and a 24 – 48 mrad "
    "detector range."
)
VOXELS = (
    "Reconstructed volumes grew from initial $64^3$ to current $1{,}800^3$ voxels, while the error "
    "fell by up to 61%."
)
MODELS = (
    "We fine-tune three small models: Alpha-2 (6.7B), Beta-1.5-2B and Gamma-13B, on 1,500 training "
    "examples each."
)
COHORT = "SETTING Norway. PARTICIPANTS 2,140 women who had received radiotherapy before age 40."
AGENT = (
    "We evaluate the agent at three levels. It passes 109 single-step tests and leads on a 30-query "
    "clinical end-to-end benchmark with the highest hit rate."
)
SURVIVAL = (
    "The median survival from the first treatment was 36 (7-190) weeks in all patients and 68 (16-156) "
    "weeks in 43 patients with repeated treatment."
)
REVIEW = (
    "We retrospectively reviewed 188 patients who were treated with radiosurgery. Among them 40 "
    "patients (21%) were treated twice."
)
SEGMENTS = (
    "Fine-tuning improves BaseTrack by 5.3 points. SegNet-S further advances performance to "
    "71.5, surpassing BaseTrack by 9.2 points while running at 40 FPS."
)


@pytest.mark.parametrize(
    ("claim", "passage", "kind"),  # kind "": stated
    [
        # a gap said with a comparative is worked out from the two numbers it lies between
        ("Each subcircuit is 16 layers shallower than the original depth of 36.", CIRCUITS, ""),
        ("Each subcircuit is 12 layers shallower than the original depth of 36.", CIRCUITS, "number"),
        # a share of a count, hedged, within a twentieth
        ("Clinicians rated 31% of the 120 candidates useful, about 37 of them.", SCREENING, ""),
        ("Clinicians rated 31% of the 120 candidates useful, about 50 of them.", SCREENING, "number"),
        # a whole fronted before its part: the two counts of one ratio
        ("Of 310 children with fever and cough, 142, just under half, had anaemia.", ANAEMIA, ""),
        ("Of 310 children with fever and cough, 98, about a third, had anaemia.", ANAEMIA, "number"),
        # a rounded percentage is the claim's, not a bare number equal to it (an age)
        (
            "Hypertension was found in roughly 40% of smokers and in 18.2% of non-smokers.",
            SMOKERS,
            "",
        ),
        # an interval's words after its bracket bind the number before it
        ("Hypertension was found in 18.2% of smokers.", SMOKERS, "number"),
        # a bracketed interval after a value is no value of its own
        ("The top quartile of the marker had a hazard ratio of 0.41 for stroke.", HAZARDS, ""),
        ("The top quartile of the marker had a hazard ratio of 0.22 for stroke.", HAZARDS, "number"),
        # ranges with spaced dashes in prose are ranges, not a table's empty cells
        (
            "Bright-field imaging used 80 keV, a 30 mrad convergence angle and beam currents of 15 to 35 pA.",
            MICROSCOPE,
            "",
        ),
        # LaTeX's thousands separator
        ("Reconstructed volumes grew from initial 64 to current 1,800 voxels.", VOXELS, ""),
        ("Reconstructed volumes grew from initial 64 to current 1,900 voxels.", VOXELS, "number"),
        # a size glued to a name is that model's
        ("We fine-tune Beta-1.5, a small model of 2B, on 1,500 training examples.", MODELS, ""),
        ("We fine-tune Alpha-2, a small model of 2B, on 1,500 training examples.", MODELS, "number"),
        # a people's adjective for the country the passage names
        ("The cohort comprised 2,140 Norwegian women treated with radiotherapy before age 40.", COHORT, ""),
        (
            "The cohort comprised 2,140 Danish women treated with radiotherapy before age 40.",
            COHORT,
            "entity",
        ),
        # two sides named the other way round with the other direction say the same
        ("BaseTrack's performance is about 62, some 9 points below SegNet-S at 71.5.", SEGMENTS, ""),
        ("SegNet-S's performance is 71.5, some 9 points below BaseTrack.", SEGMENTS, "direction"),
        # a count glued to its noun ("30-query") rivals a count of that noun
        ("The clinical end-to-end benchmark consists of 30 queries.", AGENT, ""),
        ("The clinical end-to-end benchmark consists of 109 queries.", AGENT, "number"),
        # weeks are no count of patients: "68 (16-156) weeks in 43 patients" gives 68 to the repeated
        ("Median survival was 36 weeks overall but 68 weeks in those with repeated treatment.", SURVIVAL, ""),
        # a study's design: retrospective is not prospective
        ("The study retrospectively reviewed 188 patients treated with radiosurgery.", REVIEW, ""),
        ("The study prospectively followed 188 patients treated with radiosurgery.", REVIEW, "number"),
    ],
)
def test_worked_and_owned_numbers(claim: str, passage: str, kind: str) -> None:
    result = check_claim(claim, passage)
    assert (result.kind, result.supported) == (kind, not kind), result.reason


def test_a_fronted_whole_and_its_part_make_a_ratio() -> None:
    found = [(n.text, m.text) for n, m, _ in ratios(ANAEMIA)]
    assert ("142", "310") in found
    assert ("30", "168") in found
    assert ("98", "142") not in found  # "Of them, 98 …": no count after "Of"


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        ("a lower risk (0.41 [0.22-0.76]) of stroke", ["0.22", "0.76"]),
        ("the odds ratio was 0.59 (0.23 to 1.47, 0.0005) for it", ["0.23", "1.47", "0.0005"]),
        ("an odds ratio of 0.47 (95% confidence interval 0.26 to 0.85) was", ["0.26", "0.85"]),
        ("a score of 25 (10 to 20 points) on", []),  # 25 is not within: no interval
    ],
)
def test_an_interval_in_brackets_after_its_value(text: str, bounds: list[str]) -> None:
    assert [v.text for v in values(text)[1] if v.unit == "ci"] == bounds
