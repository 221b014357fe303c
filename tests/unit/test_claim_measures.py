"""How trials and observations report their numbers, read by the claim checker (chat.claims): a
confidence interval's bounds are the value's spread, not rival values; a rate's base ("per 100") is no
value; "type 2" names a kind; a time of day is one value; numbers in different units of measurement
are no rivals; a bracket after a number labels it ("68% (placebo)"); an item may open with a count
in words ("93% for four doses per week"); a bracket's numbers are its clause's ("no episodes of pain
(88/150 (59%) vs …)"); a phrase that opens the claim scopes its one number; a
claim that names the item a list gives its number to is not gainsaid by another sentence; "independent
of" and "the absence of" deny only what follows them; and a kind ("artificial bugs") is not swapped
where the sentence that gives the claim's number says it."""

from __future__ import annotations

import pytest

from chat.claims import check_claim
from chat.name_checks import modifier_swapped
from chat.names import names

TRIAL = (  # written for these tests in the way clinical abstracts report results
    "Between 2001 and 2005, 4,212 adults aged 40-69 years with type 2 diabetes were enrolled. During a "
    "median follow-up of 6.1 years, 388 strokes occurred. Compared with placebo, the drug lowered the risk "
    "of stroke (hazard ratio [HR] = 0.81; 95% CI 0.66-0.99). The effect was apparent in men (0.78; "
    "0.60-1.01) but not in women (0.92; 0.70-1.21). After adjustment for age, the relative risk of the "
    "highest against the lowest quartile of dose was 0.88 (95 percent confidence interval [CI]=0.71–1.09). "
    "The corresponding relative risks were 0.84 (CI=0.70–1.01) for fatal stroke, 0.77 (CI=0.59–1.00) for "
    "non-fatal stroke, and 1.05 (CI=0.81–1.36) for transient ischaemic attack."
)
RATES = (
    "A 10% rise in sugar intake was associated with an additional 3.2 overweight children per 100 (95% "
    "CI = 1.9, 4.5), 1.4 obese children per 100 (95% CI = 0.6, 2.2), and 0.2 children with diabetes per "
    "100 (95% CI = 0.0, 0.5)."
)
OBSERVING = (
    "The first exposure started at 09:12:05 UT above the east limb and ended at 09:58:40, just after "
    "totality. The second exposure started shortly after totality, at 10:31:17 UT. For the eclipse we "
    "mounted the camera on an 80 mm refractor behind a filter centred at 656 nm with 3 nm FWHM."
)
DOSES = (
    "The drug reduced the incidence of vomiting from 68% (placebo) to 35% (P < 0.001). Each episode of "
    "vomiting prolonged the stay by 11 +/- 3 min. Observed dosing corresponded to a risk reduction of 71% "
    "for two doses per week, 93% for four doses per week, and 98% for seven doses per week."
)

PAIRS = (
    "Significantly more treated patients had no episodes of pain (88/150 (59%) vs 61/148 (41%); P = 0.002) "
    "and experienced no nausea (97/150 (65%) vs 70/148 (47%); P = 0.003) in the first week."
)


COHORT = (
    "Women with type 2 diabetes had a modestly elevated incidence of stroke (HR = 1.21) compared with "
    "women without diabetes, independent of age, obesity and smoking."
)
MAPS = (
    "We report the RMSE of the estimated maps against the map generated from the architectural plan. For "
    "experiment B2 we provide qualitative results only, due to the absence of a ground truth plan."
)
BUGS = (
    "The second dataset consists of artificially created bugs. The authors argue that the real-world bugs "
    "are somewhat limited. For that reason, they use the PIT mutation testing tool to create mutation bugs "
    "using 64 of the most popular Java projects on GitHub. This results in 21 488 artificial bugs. The "
    "evaluation metrics used are the wasted effort and recall at the top 1, 3 and 5."
)


@pytest.mark.parametrize(
    ("claim", "passage", "kind"),  # kind "": stated
    [
        # a confidence interval's bounds are no values; "type 2" names a kind
        ("Participants were aged 40 to 69 and had type 2 diabetes.", TRIAL, ""),
        ("Compared with placebo, the hazard ratio for stroke was 0.81.", TRIAL, ""),
        ("Compared with placebo, the hazard ratio for stroke was 0.66.", TRIAL, "number"),
        # an item named after its number and bracket ("0.77 (CI=…) for non-fatal stroke")
        (
            "For non-fatal stroke, the relative risk of the highest against the lowest quartile was 0.77.",
            TRIAL,
            "",
        ),
        (
            "For transient ischaemic attack, the relative risk of the highest against the lowest quartile "
            "was 0.77.",
            TRIAL,
            "number",
        ),
        # a fronted scope binds the claim's one number
        ("For men, the hazard ratio of the drug was 0.78.", TRIAL, ""),
        # a rate's base is no value, and each rate is its noun's
        ("A 10% rise in sugar intake was linked to 1.4 more obese children per 100.", RATES, ""),
        ("A 10% rise in sugar intake was linked to 3.2 more obese children per 100.", RATES, "number"),
        # a time of day is one value
        ("The first exposure ran from 09:12:05 to 09:58:40 UT, ending just after totality.", OBSERVING, ""),
        ("The first exposure started at 10:31:17 UT.", OBSERVING, "number"),
        # numbers in other units of measurement are no rivals ("80 mm" of "656 nm")
        (
            "For the eclipse, the camera sat behind a filter centred at 656 nm with a 3 nm FWHM.",
            OBSERVING,
            "",
        ),
        # a bracket after a number labels it
        ("The incidence of vomiting was 68% with placebo.", DOSES, ""),
        ("The incidence of vomiting was 68% with the drug.", DOSES, "number"),
        # a spread is not the value
        ("Each episode of vomiting prolonged the stay by 3 minutes.", DOSES, "number"),
        # a bracket's numbers are the clause's before it
        ("In the first week, 59% of treated patients had no pain, against 41% of the controls.", PAIRS, ""),
        ("In the first week, 65% of treated patients had no episodes of pain.", PAIRS, "number"),
        # an item may open with a count in words
        ("Taking seven doses per week corresponded to a 98% reduction in risk.", DOSES, ""),
        ("Taking seven doses per week corresponded to a 93% reduction in risk.", DOSES, "number"),
        # "independent of" and "the absence of" deny only what follows them
        (
            "Type 2 diabetes was linked to a higher incidence of stroke, with a hazard ratio of 1.21 "
            "relative to women without diabetes.",
            COHORT,
            "",
        ),
        ("Only qualitative results are given for experiment B2, as there is no ground-truth plan.", MAPS, ""),
        (
            "Quantitative results are given for experiment B2, as there is a ground-truth plan.",
            MAPS,
            "negation",
        ),
    ],
)
def test_trials_and_observations(claim: str, passage: str, kind: str) -> None:
    result = check_claim(claim, passage)
    assert result.supported is (not kind), result
    assert result.kind == kind, result


def test_a_kind_is_not_swapped_where_the_claims_number_says_it() -> None:
    """Held against the sentence of the tool ("create mutation bugs"), the claim's "artificial bugs"
    is no swap: the sentence after it gives the claim's number with that kind ("21 488 artificial
    bugs"); with another number it is."""
    window = next(s for s in BUGS.split(". ") if "mutation bugs" in s)
    claim = "Using the PIT tool on 64 popular Java projects, the authors generated {} artificial bugs."
    assert modifier_swapped(claim.format("21,488"), window, BUGS) is None
    assert modifier_swapped(claim.format("357"), window, BUGS) == (
        "the passage says 'mutation bugs' here, not 'artificial bugs'"
    )


PARAMETERS = (
    "BL+ has four configurable parameters, one for pre-processing (2 options) and three for the "
    "computation of a rSVMScore (63 options), a SimiScore (2 options) and a FinalScore (11 options)."
)


def test_a_name_may_open_in_lower_case() -> None:
    """ "rSVMScore", "iPrEx", "mBERT" are names: the bracket after one gives its number."""
    assert names("the iPrEx model, mBERT and a rSVMScore", anywhere=True) == ["iPrEx", "mBERT", "rSVMScore"]
    assert check_claim("In BL+, the rSVMScore has 63 options and the FinalScore 11.", PARAMETERS).supported
    flagged = check_claim("The FinalScore parameter of BL+ has 63 options.", PARAMETERS)
    assert flagged.reason == "the passage gives 63 for rSVMScore", flagged
