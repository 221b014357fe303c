"""The researcher resolver's rules in memory (no catalogue), and the eval's metric code."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path

from evals.researchers import ceiling, ceiling_topic, load, scores
from people.evidence import (
    PEOPLE_AS_SET_FROM,
    PaperEvidence,
    Profile,
    affiliation_overlap,
    affiliation_words,
)
from people.name_counts import build, expected_namesakes
from people.names import parse_name
from people.resolver import ResearcherResolver


def _resolve(
    resolver: ResearcherResolver,
    authors: list[str],
    title: str,
    cats: list[str],
    year: int,
    venue: str | None = None,
    affiliations: dict[str, tuple[str, ...]] | None = None,
) -> list[Profile]:
    names = [parse_name(a) for a in authors]
    paper = PaperEvidence.of(names, cats, venue, year, title)
    chosen = resolver.resolve_paper(authors, names, paper, affiliations)
    return [p.current for p in chosen if p is not None]


def test_same_name_without_evidence_stays_apart_and_a_shared_coauthor_joins() -> None:
    r = ResearcherResolver()
    a = _resolve(r, ["Wei Zhang", "Ann Lee"], "Sparse attention for long documents", ["cs.CL"], 2020)[0]
    b = _resolve(r, ["Wei Zhang", "Bob Stone"], "Dust in galaxy clusters", ["astro-ph.GA"], 2009)[0]
    c = _resolve(r, ["Wei Zhang", "Ann Lee"], "Retrieval for question answering", ["cs.IR"], 2021)[0]
    assert a is not b
    assert c is a


def test_variants_of_one_name_join_and_other_given_names_never_do() -> None:
    r = ResearcherResolver()
    kingma = _resolve(r, ["Diederik P. Kingma", "Max Welling"], "Variational autoencoders", ["cs.LG"], 2013)[
        0
    ]
    again = _resolve(r, ["D. P. Kingma", "Max Welling"], "Variational inference flows", ["stat.ML"], 2016)[0]
    other = _resolve(r, ["Durk Kingma", "Max Welling"], "Variational inference", ["cs.LG"], 2016)[0]
    assert again is kingma
    assert other is not kingma  # "Durk" is not "Diederik", whatever the evidence
    assert kingma.name == "Diederik P. Kingma"


def test_two_authors_of_one_paper_are_never_one_researcher() -> None:
    r = ResearcherResolver()
    first, second = _resolve(r, ["Li Zhang", "Li Zhang", "Bo Chen"], "Parsing", ["cs.CL"], 2020)[:2]
    assert first is not second
    # A later paper with the same co-author fits both equally: it joins one and merges neither.
    later = _resolve(r, ["Li Zhang", "Bo Chen"], "Parsing", ["cs.CL"], 2021)[0]
    r.consolidate()
    assert later in (first, second) and first.current is first and second.current is second
    assert r.merges == []


def test_an_author_linking_two_researchers_merges_them_into_the_older() -> None:
    r = ResearcherResolver()
    older = _resolve(
        r, ["Yang Liu", "Ann Lee", "Tom Hart", "Kim Ode"], "Speech summarization", ["cs.CL"], 2010
    )[0]
    newer = _resolve(r, ["Yang Liu", "Bo Chen", "Eve Park", "Al Roy"], "Protein folding", ["q-bio.BM"], 2012)[
        0
    ]
    assert older is not newer
    both = ["Yang Liu", "Ann Lee", "Tom Hart", "Kim Ode", "Bo Chen", "Eve Park", "Al Roy"]
    linked = _resolve(r, both, "Review", ["cs.CL"], 2011)[0]
    assert linked is older and newer.current is older
    assert r.merges == [(older, newer)]


def test_bcubed_and_pairwise_on_a_tiny_example() -> None:
    gold = {("p", 0): "A", ("p", 1): "A", ("p", 2): "B", ("p", 3): "B"}
    predicted = {("p", 0): 1, ("p", 1): 1, ("p", 2): 1, ("p", 3): 2}
    figures = scores(predicted, gold, gold)
    # B-cubed precision: 2/3, 2/3, 1/3, 1 → 0.6667; recall: 1, 1, 1/2, 1/2 → 0.75.
    assert figures["bcubed"] == {"p": 0.6667, "r": 0.75, "f1": 0.7059}
    # Pairs: predicted {01, 02, 12}, gold {01, 23}; one in common.
    assert figures["pairwise"] == {"p": 0.3333, "r": 0.5, "f1": 0.4}
    assert (figures["clusters_predicted"], figures["clusters_gold"]) == (2, 2)
    perfect = scores(gold, gold, gold)
    assert perfect["bcubed"]["f1"] == perfect["pairwise"]["f1"] == 1.0


def test_a_rare_name_is_one_person_within_a_field_a_common_one_is_not() -> None:
    r = ResearcherResolver()
    # No co-author, venue or topic in common: the evidence model alone would found two researchers.
    lin = _resolve(r, ["Zhouhan Lin", "Ann Lee"], "Key-value cache compression", ["cs.CL"], 2025)[0]
    again = _resolve(r, ["Zhouhan Lin", "Bob Stone"], "Pretraining to ponder", ["cs.LG"], 2025)[0]
    elsewhere = _resolve(r, ["Zhouhan Lin", "Eve Park"], "Dust in galaxy clusters", ["astro-ph.GA"], 2025)[0]
    assert again is lin  # rare among arXiv's authors, and both papers are cs
    assert elsewhere is not lin  # a rare name in another broad field is not enough
    wang = _resolve(r, ["Wei Wang", "Ann Lee"], "Key-value cache compression", ["cs.CL"], 2025)[0]
    other = _resolve(r, ["Wei Wang", "Bob Stone"], "Pretraining to ponder", ["cs.LG"], 2025)[0]
    assert other is not wang  # a common name needs evidence


def test_a_rare_name_is_not_joined_across_printed_affiliations_that_share_no_word() -> None:
    r = ResearcherResolver()

    def saif(coauthor: str, title: str, affiliation: str) -> Profile:
        authors = ["Saif Mohammad", coauthor]
        return _resolve(r, authors, title, ["cs.CL"], 2024, affiliations={"Saif Mohammad": (affiliation,)})[0]

    nrc = saif("Ann Lee", "Emotion lexicons", "NRC")
    assert saif("Bob Stone", "Ethics sheets", "National Research Council Canada") is nrc  # its acronym
    assert saif("Eve Park", "Anxiety norms", "University of Oslo") is not nrc


def test_a_printed_acronym_matches_the_words_it_abbreviates_and_only_those() -> None:
    def overlap(a: str, b: str) -> float:
        return affiliation_overlap(affiliation_words(a), affiliation_words(b))

    assert overlap("NRC", "National Research Council Canada") == 1.0
    assert overlap("Carnegie Mellon University", "CMU") == 1.0
    assert overlap("HKUST", "The Hong Kong University of Science and Technology") == 1.0
    # Both make "^dcs", an acronym nobody printed: the departments are not one institution.
    assert overlap("Department of Computer Science, Stanford", "Department of Computer Science, Cornell") == 0
    assert overlap("University of Turin", "Università di Torino") == 0  # other languages: not matched


def test_two_researchers_are_merged_once_their_papers_together_link_them() -> None:
    r = ResearcherResolver()
    shared, theirs = "lexical semantic change detection", "historical newspaper archive corpora"
    first = _resolve(
        r, ["Wei Zhang", "Ann Lee"], f"{shared} cross lingual embedding alignment", ["cs.CL"], 2020
    )[0]
    # Half of its words are the first paper's; another category and venue: not enough.
    second = _resolve(
        r, ["Wei Zhang", "Bob Stone"], f"{shared} {theirs}", ["cs.IR"], 2020, "Diachronic Workshop"
    )[0]
    assert second is not first
    # A shared co-author joins the first; alone, this paper (half of its words) is not enough to
    # merge the second.
    third = _resolve(
        r,
        ["Wei Zhang", "Ann Lee"],
        f"{theirs} optical character recognition errors",
        ["cs.DL"],
        2021,
        "Diachronic Workshop",
    )[0]
    assert third is first and second.current is second and r.merges == []
    # Together the first researcher's papers hold all of the second's words and its venue.
    r.consolidate()
    assert second.current is first
    assert r.merges == [(first, second)]
    r.consolidate()  # nothing grew since: nothing to do
    assert r.merges == [(first, second)]


def test_how_common_a_name_is() -> None:
    def expected(name: str) -> float:
        person = parse_name(name)
        assert person is not None
        return expected_namesakes(person)

    assert expected("Wei Wang") > 10 > 1 > expected("Zhouhan Lin") > expected("Diederik P. Kingma")
    assert expected("Maosong Sun") < 1  # one prolific author, not a common name
    # An initial stands for any first name with that letter: common with a common surname only.
    assert expected("Y. Liu") > expected("Yang Liu") > 1 > expected("G. Salton")
    assert expected("Ting-Hao Huang") < 1 < expected("Ting Huang")  # "Ting-Hao" is one first name
    assert expected("Kingma") == float("inf")  # no given name: could be anyone


def test_name_counts_count_people_not_mentions(tmp_path: Path) -> None:
    # One author on many papers with the same co-author is one person; a name on papers that share
    # nobody may be several people.
    records = [{"authors": ["Maosong Sun", "Zhiyuan Liu"]} for _ in range(5)]
    records += [{"authors": ["Wei Wang", f"Coauthor{i} Person{i}"]} for i in range(4)]
    listings = tmp_path / "listings.jsonl.gz"
    with gzip.open(listings, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    out = tmp_path / "counts.json.gz"
    build(listings, out)
    with gzip.open(out, "rt", encoding="utf-8") as f:
        counts = json.load(f)
    assert "maosong" not in counts["given"] and "sun" not in counts["surname"]  # one person: left out
    assert counts["given"]["wei"] == counts["surname"]["wang"] == 4
    assert counts["people"] == 1 + 1 + 4 + 4  # Maosong Sun, Zhiyuan Liu, four Wei Wangs, four others


def test_rare_names_join_their_compatible_spellings_and_common_ones_need_evidence() -> None:
    r = ResearcherResolver()
    yoder = _resolve(r, ["Michael Yoder", "Ann Lee"], "Online communities", ["cs.CL"], 2019)[0]
    again = _resolve(r, ["Michael Miller Yoder", "Bob Stone"], "Identity in fan fiction", ["cs.CY"], 2023)[0]
    assert again is yoder
    salton = _resolve(r, ["Gerard Salton", "Eve Park"], "Term weighting", ["cs.IR"], 1988)[0]
    initials = _resolve(r, ["G. Salton", "Al Roy"], "Automatic text structuring", ["cs.IR"], 1994)[0]
    assert initials is salton  # an initial, but few people are named Salton
    liu = _resolve(r, ["Yang Liu", "Ann Lee"], "Speech summarization", ["cs.CL"], 2010)[0]
    other = _resolve(r, ["Y. Liu", "Bob Stone"], "Galaxy surveys", ["cs.CL"], 2012)[0]
    assert other is not liu  # "Y. Liu" could be any of many people


def test_the_ceiling_joins_one_persons_linked_papers_and_never_two_persons(tmp_path: Path) -> None:
    def paper(pid: str, authors: list[tuple[str, str | None]]) -> dict[str, object]:
        return {
            "paper_id": pid,
            "title": "t",
            "year": 2020,
            "venue_or_categories": "Workshop",
            "abstract": None,
            "authors": [{"name": n, "person": p} for n, p in authors],
        }

    rows = [
        paper("g:1", [("Wei Wang", "A"), ("Ann Lee", None)]),
        paper("g:2", [("Wei Wang", "A"), ("Ann Lee", None)]),  # shares Ann Lee with g:1
        paper("g:3", [("Wei Wang", "A"), ("Bob Stone", None)]),  # A again, but nothing links it
        paper("g:4", [("Wei Wang", "B"), ("Ann Lee", None)]),  # shares Ann Lee, another person
    ]
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gold = load(path)
    predicted = ceiling(path, gold)
    assert predicted["g:1", 0] == predicted["g:2", 0]
    assert predicted["g:3", 0] != predicted["g:1", 0]
    assert predicted["g:4", 0] not in {predicted["g:1", 0], predicted["g:3", 0]}
    assert scores(predicted, gold.persons, gold.persons)["bcubed"]["p"] == 1.0


def test_the_topic_ceiling_joins_pieces_only_as_far_as_their_topics_and_the_gold_allow(
    tmp_path: Path,
) -> None:
    def paper(pid: str, title: str, person: str, coauthor: str) -> dict[str, object]:
        return {
            "paper_id": pid,
            "title": title,
            "year": 2020,
            "venue_or_categories": "Workshop",
            "abstract": None,
            "authors": [{"name": "Wei Wang", "person": person}, {"name": coauthor, "person": None}],
        }

    rows = [
        paper("g:1", "Galaxy dust", "A", "Ann Lee"),
        paper("g:2", "Galaxy clusters", "A", "Bob Stone"),  # A, linked to g:1 by topic only
        paper("g:3", "Parsing", "B", "Cat Dunn"),
    ]

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] if "Galaxy" in t else [0.0, 1.0] for t in texts]

    def oracle(rows: list[dict[str, object]]) -> tuple[dict[str, int], float]:
        path = tmp_path / "gold.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        gold = load(path)
        predicted, figures = ceiling_topic(path, gold, embed)
        ids = {c: i for i, c in enumerate(dict.fromkeys(predicted[m] for m in sorted(gold.persons)))}
        return {m[0]: ids[predicted[m]] for m in gold.persons}, figures["best_distance"]

    clusters, distance = oracle(rows)
    assert distance > 0 and clusters["g:1"] == clusters["g:2"] != clusters["g:3"]
    # Another person writing on A's topic: joining by topic would join them, so the best is the
    # ceiling itself (distance 0), as on the ACL gold.
    clusters, distance = oracle([*rows, paper("g:4", "Galaxy surveys", "C", "Dan Ross")])
    assert distance == 0.0 and len(set(clusters.values())) == 4


def test_a_prolific_researchers_coauthors_are_evidence_however_they_are_stored() -> None:
    # A researcher's co-authors are kept as a tuple, then as a frozenset past PEOPLE_AS_SET_FROM:
    # a shared co-author is found either way, from the first paper's to the last's.
    r = ResearcherResolver()
    first = _resolve(r, ["Wei Zhang", "Ann Lee"], "Sparse attention", ["cs.CL"], 2015)[0]
    for i in range(PEOPLE_AS_SET_FROM + 5):
        again = _resolve(r, ["Wei Zhang", "Ann Lee", f"Co Author{i}"], f"Paper {i}", ["cs.CL"], 2016)[0]
        assert again is first
        assert isinstance(first.coauthors, tuple if i < PEOPLE_AS_SET_FROM - 3 else frozenset)
    # Two of the first co-authors (kept while it was a tuple), on a paper of another topic.
    later = _resolve(r, ["Wei Zhang", "Co Author0", "Co Author1"], "Galaxy dust", ["cs.CL"], 2017)[0]
    assert later is first
    assert len(first.coauthors) == PEOPLE_AS_SET_FROM + 7  # Ann Lee, the author's own key, 69 more
    stranger = _resolve(r, ["Wei Zhang", "Bob Stone"], "Protein folding", ["q-bio.BM"], 2017)[0]
    assert stranger is not first
