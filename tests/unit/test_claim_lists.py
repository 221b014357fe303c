"""Lists of items and numbers as papers write them, read by the claim checker (chat.claims): items
said "in" a setting ("31.5 in 8-shot WMT14"), opening with a count ("8-shot") or standing after a
ratio's whole ("17 of the 21 tasks in the 1-shot setting"); a bare pair in the next sentence given to
the same items ("Our model gets 33.0 and 29.4"); a number given to an item the claim does not name;
a range that is no two sides of a comparison; and words that are no negation, name or value ("not
much", "XL-like", "Radford et al. (2018)")."""

from __future__ import annotations

import pytest

from chat.claims import check_claim

SHOTS = (  # written for these tests in the way results sections compare few-shot systems
    "As another point of comparison, the baseline reports BLEU scores of 31.5 in 8-shot WMT14 and 27.9 in "
    "4-shot IWSLT after tuning. Our model gets 33.0 and 29.4 in 1-shot settings without any tuning."
)
SOTA = (
    "Our model outperforms prior SOTA on 17 of the 21 tasks in the 1-shot setting and 19 of the 21 tasks "
    "in the few-shot setting."
)
EFFORT = (
    "For a case where not much has happened since the lawsuit was filed, it typically takes one to two "
    "hours for a student to write the summary."
)
ZERO = (
    "ZeRO powers data scientists to train models with up to 13B parameters without any MP or PP that "
    "requires model refactoring."
)
SCALE = (
    "Model size has grown from 117M parameters (Radford et al., 2018) to over 500B parameters. We compare "
    "the two architectures at 1.9B parameters in a setup similar to GPT-3 XL [7]."
)
LINKS = (
    "We find that neighbours tend to come from 2-3 links away from a given article whereas random "
    "articles are more than 5 links apart."
)


@pytest.mark.parametrize(
    ("claim", "passage", "kind"),  # kind "": stated
    [
        ("Without tuning, our model reaches 33.0 BLEU on WMT14, above the baseline's 31.5.", SHOTS, ""),
        ("Without tuning, our model reaches 29.4 BLEU on WMT14.", SHOTS, "number"),
        ("On IWSLT the baseline reports 27.9 BLEU in a 4-shot setting, below our 29.4.", SHOTS, ""),
        ("The baseline's WMT14 score was obtained with eight shots after tuning.", SHOTS, ""),
        (
            "With few-shot prompting, our model beats the prior state of the art on 19 of the 21 tasks.",
            SOTA,
            "",
        ),
        (
            "With few-shot prompting, our model beats the prior state of the art on 17 of the 21 tasks.",
            SOTA,
            "number",
        ),
        ("When little has happened since filing, a student typically needs one to two hours.", EFFORT, ""),
        ("ZeRO does not let data scientists train 13B-parameter models.", ZERO, "negation"),
        ("Model size grew from 117M parameters in Radford et al. (2018) to over 500B.", SCALE, ""),
        ("The two architectures are compared at 1.9B parameters in a GPT-3 XL-like setup.", SCALE, ""),
        (
            "Neighbours tend to be 2-3 links away, while random articles are more than five links apart.",
            LINKS,
            "",
        ),
    ],
)
def test_lists_and_words_that_are_no_values(claim: str, passage: str, kind: str) -> None:
    result = check_claim(claim, passage)
    assert result.supported is (not kind), result
    assert result.kind == kind, result
