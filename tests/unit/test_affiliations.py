"""Printed affiliation → ROR matching, and author-name alignment, on the real ROR records."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ingest.enrich.affiliations import AffiliationMatcher, LazyMatcher, normalise
from ingest.enrich.merge import align, same_person_name
from ingest.enrich.ror import RorRecord, read_dump

ROR = Path("enrichment") / "ror"


@pytest.fixture(scope="module")
def records(shared_data: Path) -> list[RorRecord]:
    dump = shared_data / ROR / "ror_v2_records_from_ror-records_releases.jsonl"
    return [r for r in read_dump(dump) if isinstance(r, RorRecord)]


@pytest.fixture(scope="module")
def matcher(records: list[RorRecord]) -> AffiliationMatcher:
    return AffiliationMatcher.from_records(records)


def _ror(matcher: AffiliationMatcher, text: str) -> str | None:
    found = matcher.match(text)
    return found.ror_id if found else None


def test_normalise_folds_and_expands() -> None:
    assert normalise("Toyohashi Univ. of Tech.") == "toyohashi university of technology"
    assert normalise("The Johns Hopkins University") == "johns hopkins university"
    assert normalise("Google Inc.") == "google"
    assert normalise("Universität Zürich") == "universitat zurich"
    assert normalise("Texas A&M University") == "texas a and m university"


@pytest.mark.parametrize(
    ("text", "ror_id"),
    [
        ("Department of Computer Science, Stanford University", "00f54p054"),  # a part is a name
        (
            "Department of Radiation Oncology, Stanford University School of Medicine, Stanford, USA",
            "00f54p054",
        ),
        ("University of Central Florida Orlando, Florida 32816-1250", "036nfer12"),  # a name inside a part
        ("Universidad Stanford", "00f54p054"),  # a label in another language
        ("University of California at Berkeley", "01an7q238"),  # an alias
        ("Google Inc., Mountain View", "00njsd438"),  # "Google (United States)"; the city breaks the tie
        ("UCL, Gower Street, London", "02jx3x895"),  # an acronym in capitals
        ("Division of Research, Kaiser Permanente, Oakland, CA", "00t60zh31"),
    ],
)
def test_matches(matcher: AffiliationMatcher, text: str, ror_id: str) -> None:
    assert _ror(matcher, text) == ror_id


@pytest.mark.parametrize(
    "text",
    [
        "Northwestern University",  # not "Northern University": a different word, however close
        "HSE University",  # not "Hue University"
        "Google",  # Google (United States) or Google (Australia): a tie is not a guess
        "Department of Medicine, Oakland, CA",  # "CA" is a state, not an acronym
        "Ophthalmology; and",
        "",
    ],
)
def test_abstains(matcher: AffiliationMatcher, text: str) -> None:
    assert matcher.match(text) is None


def test_a_stated_country_rules_out_namesakes(matcher: AffiliationMatcher) -> None:
    found = matcher.match("University of Washington, Seattle, WA, USA")
    assert found is not None and found.ror_id == "00cvxb145"
    assert matcher.match("University of Washington, Nairobi, Kenya") is None


def test_precision_on_a_sample_of_gold_strings(
    matcher: AffiliationMatcher, records: list[RorRecord], shared_data: Path
) -> None:
    """A behaviour check on 400 real strings (the full figures: benchmarks/affiliations.py)."""
    imported = {r.ror_id for r in records}
    rows = []
    for path in sorted((shared_data / ROR).glob("tests_affiliations__dataset_affiliations_*.json")):
        for item in json.loads(path.read_text()):
            gold = {g.rsplit("/", 1)[-1] for g in item["ror_ids"]}
            if gold & imported:
                rows.append((item["affiliation"], gold))
    sample = random.Random(6).sample(rows, 400)
    answers = [(matcher.match(text), gold) for text, gold in sample]
    answered = [(found, gold) for found, gold in answers if found is not None]
    correct = sum(found.ror_id in gold for found, gold in answered)
    assert correct / len(answered) >= 0.95
    assert correct / len(sample) >= 0.8


def test_lazy_matcher_builds_once_and_only_when_used(records: list[RorRecord]) -> None:
    built: list[int] = []

    def build() -> AffiliationMatcher:
        built.append(1)
        return AffiliationMatcher.from_records(r for r in records if r.ror_id == "00f54p054")

    lazy = LazyMatcher(build)
    assert built == []
    assert lazy.match("Stanford University") is not None and lazy.match("Nowhere") is None
    assert built == [1]


def test_author_names_align_across_sources() -> None:
    assert same_person_name("Noam Shazeer", "Noam M. Shazeer")
    assert same_person_name("Illia Polosukhin", "I. Polosukhin")
    assert same_person_name("Łukasz Kaiser", "Lukasz Kaiser")
    assert same_person_name("Jakub Lála", "Lála, Jakub")
    assert same_person_name("Wang Wei", "Wei Wang")
    assert not same_person_name("Jason Priem", "Heather Piwowar")
    assert not same_person_name("A. Smith", "B. Smith")
    ours = ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"]
    assert align(ours, ["Ashish Vaswani", "Noam M. Shazeer", "Niki Parmar"]) == {0: 0, 1: 1, 2: 2}
    assert align(ours, ["Niki Parmar", "Someone Else", "Ashish Vaswani"]) == {0: 2, 2: 0}
