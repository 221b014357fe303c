"""The page ranking's rules (``retrieval.passages``) on a small lexical index: the second stage that
scores every chunk of the best paper, neighbour smoothing and the abstract standing for page 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.lexical import LexicalIndex, PaperText
from retrieval.passages import PassageConfig, rank_passages
from retrieval.search import RankConfig, Ranker
from retrieval.types import Chunk

WOMBAT = "2401.00001"
OTHER = "2401.00002"


def paper(arxiv_id: str, pages: dict[int, str]) -> list[Chunk]:
    """One chunk per page, numbered in page order (chunk n is on page n)."""
    return [Chunk(arxiv_id, 1, n, text, "body", page_start=n, page_end=n) for n, text in pages.items()]


def ranker(tmp_path: Path, chunks: dict[str, list[Chunk]], *, lexical_k: int = 100) -> Ranker:
    lexical = LexicalIndex(tmp_path / "lexical", refresh_seconds=0, poll_seconds=0)
    lexical.upsert_papers(
        [
            PaperText(WOMBAT, "Wombat burrows", "How wombats dig their burrows.", ("A. Digger",)),
            PaperText(OTHER, "Soil of the outback", "Clay, sand and a wombat.", ("B. Geologist",)),
        ]
    )
    for arxiv_id, found in chunks.items():
        lexical.upsert_paper(arxiv_id, found)
    lexical.flush()
    return Ranker(lexical, None, RankConfig(lexical_k=lexical_k))


def test_the_second_stage_reaches_pages_of_the_best_paper_that_no_list_returned(tmp_path: Path) -> None:
    """With BM25 keeping only its global best chunk, the best paper's other pages are unknown to the
    first stage; rescoring that paper's chunks ranks them by their own scores."""
    r = ranker(
        tmp_path,
        {
            WOMBAT: paper(
                WOMBAT,
                {
                    1: "Wombat burrows are dug with the front claws; a burrow has a depth of two metres.",
                    2: "The soil samples were dried and weighed.",
                    3: "Burrow depth grows with the age of the wombat.",
                },
            ),
            OTHER: paper(OTHER, {1: "Clay soil."}),
        },
        lexical_k=1,
    )
    query = "wombat burrow depth"
    alone = PassageConfig(rescore_papers=0, front_page=False)
    first = [(p.arxiv_id, p.page) for p in rank_passages(r, query, mode="bm25", config=alone).pages]
    assert len(first) == 1 and first[0][0] == WOMBAT
    both = rank_passages(r, query, mode="bm25", config=PassageConfig(front_page=False))
    ranked = [(p.arxiv_id, p.page) for p in both.pages]
    assert ranked[0] == first[0]  # the first stage's best stays first
    # Page 2 shares no word with the query (and BM25 alone has nothing else to say about it).
    assert sorted(ranked) == [(WOMBAT, 1), (WOMBAT, 3)]


def test_a_chunk_next_to_a_strong_one_borrows_part_of_its_score(tmp_path: Path) -> None:
    """Pages 1 and 4 hold the same weak match; page 4 sits next to the page that answers, so with
    smoothing it ranks above page 1 (without, the tie goes to the lower page number)."""
    r = ranker(
        tmp_path,
        {
            WOMBAT: paper(
                WOMBAT,
                {
                    1: "A wombat.",
                    2: "Clay and sand.",
                    3: "The burrow depth of a wombat is two metres.",
                    4: "A wombat.",
                },
            )
        },
    )
    query = "wombat burrow depth"
    unsmoothed = rank_passages(
        r, query, mode="bm25", config=PassageConfig(neighbour_weight=0, front_page=False)
    )
    plain = [p.page for p in unsmoothed.pages]
    assert plain[0] == 3 and plain.index(1) < plain.index(4)
    config = PassageConfig(neighbour_weight=0.3, front_page=False)
    smoothed = rank_passages(r, query, mode="bm25", config=config)
    pages = [p.page for p in smoothed.pages]
    assert pages[0] == 3 and pages.index(4) < pages.index(1)
    scores = {p.chunk_id: p.score for p in smoothed.passages}
    before = {p.chunk_id: p.score for p in unsmoothed.passages}
    strong, near, far = (f"{WOMBAT}v1#{n}" for n in (3, 4, 1))
    assert scores[strong] == pytest.approx(before[strong])  # no better neighbour: unchanged
    assert scores[far] == pytest.approx(before[far])
    assert scores[near] == pytest.approx(before[near] + 0.3 * (before[strong] - before[near]))


def test_a_full_text_papers_abstract_stands_for_its_first_page_below_its_best_chunk(tmp_path: Path) -> None:
    """The catalogue's title + abstract has no page, but a PDF prints its abstract on page 1: the
    abstract's match lifts page 1, never above the paper's best body chunk; a paper without full
    text gets no page from its abstract."""
    r = ranker(
        tmp_path,
        {
            WOMBAT: paper(
                WOMBAT,
                {
                    1: "A. Digger, University of the Outback.",
                    2: "Claws dig burrows two metres deep.",
                    3: "The soil samples were dried and weighed.",
                },
            )
        },
    )
    query = "how wombats dig burrows"
    without = rank_passages(r, query, mode="bm25", config=PassageConfig(front_page=False))
    assert (WOMBAT, 1) not in [(p.arxiv_id, p.page) for p in without.pages]
    ranking = rank_passages(r, query, mode="bm25")
    ranked = [(p.arxiv_id, p.page) for p in ranking.pages]
    assert ranked[:2] == [(WOMBAT, 2), (WOMBAT, 1)]
    front = ranking.pages[1]
    assert front.passages[0].chunk_id == f"{WOMBAT}#abstract"
    assert front.score < ranking.pages[0].score
    assert OTHER not in {arxiv_id for arxiv_id, _ in ranked}  # abstract only: no page at all
