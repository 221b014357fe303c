"""Hybrid search on a small real corpus (the 35 PDF papers' metadata + 250 real listings, embedded
with the bundled MiniLM): relevance, filters, pagination, sorting, bad input, and the indexes staying
consistent when a paper's full text is ingested again at a new version."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from catalog.db import make_engine
from catalog.models import Authorship, Paper
from catalog.search_queries import SearchFilters, allowed_papers, category_counts
from evals.floor import nonsense_queries
from indexing.contract import PdfJob
from indexing.pipeline import Pipeline
from indexing.wiring import make_embedder, open_store
from retrieval.search import (
    MAX_WHERE_IDS,
    Candidate,
    ChunkHit,
    QueryError,
    SearchRequest,
    SearchService,
    open_search,
)
from retrieval.store import ChunkStore
from retrieval.types import Chunk
from settings import Settings
from tests.integration.indexing_peers import text_pdf
from tests.integration.search_corpus import Corpus, build, environment, on_postgres

ADAM = "1412.6980"


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("search-corpus") / "data")


class Searcher:
    def __init__(self, settings: Settings, store: ChunkStore, service: SearchService) -> None:
        self.settings = settings
        self.store = store
        self.service = service
        self.engine = service.sessions.kw["bind"]

    def ids(self, q: str = "", **kwargs: object) -> list[str]:
        return [h.paper.arxiv_id for h in self.service.search(SearchRequest(q=q, **kwargs)).hits]  # type: ignore[arg-type]


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend_env(
    request: pytest.FixtureRequest, corpus: Corpus, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    """The corpus's environment with its catalogue on SQLite, or copied into PostgreSQL."""
    if request.param == "sqlite":
        yield corpus.env
        return
    with on_postgres(corpus, tmp_path_factory.mktemp("search-postgres")) as env:
        yield env


@pytest.fixture(scope="module")
def searcher(backend_env: dict[str, str]) -> Iterator[Searcher]:
    with environment(backend_env) as settings:
        engine = make_engine(settings.database_url)
        embedder = make_embedder(settings)
        store = open_store(settings, embedder)
        service = open_search(settings, engine, store, embedder)
        try:
            yield Searcher(settings, store, service)
        finally:
            service.close()
            store.close()
            engine.dispose()


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("an optimizer using adaptive estimates of the first and second moments of the gradients", ADAM),
        (
            "a network architecture based solely on attention, without recurrence or convolutions",
            "1706.03762",
        ),
        (
            "dense passage vectors to retrieve evidence for open-domain question answering",
            "2004.04906",
        ),
        ("learning residual functions to train much deeper convolutional networks", "1512.03385"),
    ],
)
def test_a_question_about_a_papers_method_finds_it_in_the_top_three(
    searcher: Searcher, question: str, expected: str
) -> None:
    assert expected in searcher.ids(question, size=3)


@pytest.mark.parametrize("mode", ["bm25", "dense"])
def test_each_retriever_alone_also_finds_adam(searcher: Searcher, mode: str) -> None:
    assert ADAM in searcher.ids(
        "adaptive moment estimation optimizer for stochastic objectives", size=5, mode=mode
    )


def test_hits_carry_ranks_and_a_highlighted_snippet(searcher: Searcher) -> None:
    results = searcher.service.search(
        SearchRequest(q="stochastic optimization with adaptive moments", size=5)
    )
    top = results.hits[0]
    assert top.paper.arxiv_id == ADAM
    assert top.fused_rank == 1 and top.rank == 1
    assert top.lexical_rank is not None and top.dense_rank is not None
    assert top.snippet is not None and top.snippet.kind == "abstract"
    marked = [top.snippet.text[a:b].lower() for a, b in top.snippet.highlights]
    assert "stochastic" in marked and any(word.startswith("moment") for word in marked)
    assert "stochast" in results.terms


def test_category_filter_keeps_only_that_category(searcher: Searcher) -> None:
    results = searcher.service.search(
        SearchRequest(q="language models", filters=SearchFilters(category="cs.CL"), size=20)
    )
    assert results.hits
    assert all("cs.CL" in h.paper.categories for h in results.hits)
    archive = searcher.service.search(
        SearchRequest(q="language models", filters=SearchFilters(category="cs"))
    )
    assert all(any(c.startswith("cs.") for c in h.paper.categories) for h in archive.hits)


@pytest.mark.parametrize("category", ["cs.LG", "cs"])
def test_a_filter_allowing_hundreds_of_papers_ranks_as_the_unfiltered_search_does(
    searcher: Searcher, category: str
) -> None:
    """Over 500 allowed papers, the k-NN gets a Chroma ``where`` (a category) or no filter at all (an
    archive) with more neighbours, and is filtered afterwards: the dense ranking must be the
    unfiltered one restricted to the filter, in the same order."""
    filters = SearchFilters(category=category)
    with Session(searcher.engine) as session:
        allowed = allowed_papers(session, filters)
    assert allowed is not None and len(allowed) > MAX_WHERE_IDS  # the large-filter path
    q = "deep neural networks for image classification"
    unfiltered = searcher.ids(q, mode="dense", size=50)
    expected = [i for i in unfiltered if i in allowed][:10]
    assert len(expected) >= 5, expected
    assert searcher.ids(q, mode="dense", size=10, filters=filters)[: len(expected)] == expected
    hybrid = searcher.service.search(SearchRequest(q=q, filters=filters, size=50))
    assert hybrid.total > 50 and all(h.paper.arxiv_id in allowed for h in hybrid.hits)


def test_categories_are_case_sensitive_on_every_backend(searcher: Searcher) -> None:
    """arXiv categories are case-sensitive; LIKE is not on SQLite, so archives match exactly."""
    for category in ("CS", "Cs.LG", "CS.LG"):
        listed = searcher.service.search(SearchRequest(filters=SearchFilters(category=category)))
        assert listed.total == 0, category
    assert searcher.service.search(SearchRequest(filters=SearchFilters(category="cs"))).total > 500


def test_date_filter_keeps_only_that_range(searcher: Searcher) -> None:
    since = dt.date(2025, 6, 1)
    results = searcher.service.search(
        SearchRequest(q="neural networks", filters=SearchFilters(date_from=since), size=20)
    )
    assert results.hits
    assert all(h.paper.activity_on and h.paper.activity_on >= since for h in results.hits)
    assert ADAM not in [h.paper.arxiv_id for h in results.hits]  # Adam is from 2014-2017


def test_researcher_filter_keeps_only_their_papers(searcher: Searcher) -> None:
    with Session(searcher.engine) as session:
        kingma = session.execute(
            select(Authorship.researcher_id)
            .join(Paper, Paper.id == Authorship.paper_id)
            .where(Paper.arxiv_id == ADAM, Authorship.position == 0)
        ).scalar_one()
    results = searcher.service.search(
        SearchRequest(q="optimization", filters=SearchFilters(researcher_id=kingma), size=10)
    )
    assert [h.paper.arxiv_id for h in results.hits] == [ADAM]
    assert results.researcher and "Kingma" in results.researcher


def test_pages_do_not_overlap_and_add_up(searcher: Searcher) -> None:
    first = searcher.service.search(SearchRequest(q="learning", size=5, page=1))
    second = searcher.service.search(SearchRequest(q="learning", size=5, page=2))
    both = searcher.service.search(SearchRequest(q="learning", size=10, page=1))
    assert first.total == second.total == both.total > 10
    assert [h.paper.arxiv_id for h in first.hits + second.hits] == [h.paper.arxiv_id for h in both.hits]
    assert [h.rank for h in second.hits] == [6, 7, 8, 9, 10]
    past = searcher.service.search(SearchRequest(q="learning", size=10, page=1000))
    assert past.hits == [] and past.total == first.total


def test_newest_sort_orders_by_date(searcher: Searcher) -> None:
    results = searcher.service.search(SearchRequest(q="learning", sort="newest", size=30))
    dates = [h.paper.activity_on or dt.date.min for h in results.hits]
    assert dates == sorted(dates, reverse=True)
    relevance = searcher.service.search(SearchRequest(q="learning", size=30))
    assert {h.paper.arxiv_id for h in results.hits} <= {
        c.arxiv_id for c in searcher.service.ranker.rank("learning").candidates[:200]
    }
    assert results.total == relevance.total


def test_facets_count_categories_of_all_the_results(searcher: Searcher) -> None:
    first = searcher.service.search(SearchRequest(q="transformer attention", size=50))
    hits = list(first.hits)
    for page in range(2, first.pages + 1):
        hits += searcher.service.search(SearchRequest(q="transformer attention", size=50, page=page)).hits
    assert len(hits) == first.total > 50
    counts = dict(first.facets)
    assert counts == {c: sum(c in h.paper.categories for h in hits) for h in hits for c in h.paper.categories}
    with Session(searcher.engine) as session:
        assert first.facets == category_counts(session, [h.paper.arxiv_id for h in hits])


def test_filters_without_a_query_list_newest_first(searcher: Searcher) -> None:
    results = searcher.service.search(SearchRequest(filters=SearchFilters(category="cs.LG"), size=10))
    assert results.request.sort == "newest" and results.total >= len(results.hits) > 0
    dates = [h.paper.activity_on or dt.date.min for h in results.hits]
    assert dates == sorted(dates, reverse=True)


@pytest.mark.parametrize("q", ["", "   \x00  "])
def test_no_query_and_no_filter_lists_every_paper_newest_first(searcher: Searcher, q: str) -> None:
    results = searcher.service.search(SearchRequest(q=q, size=5))
    assert results.request.q == "" and results.request.sort == "newest"
    assert results.total == searcher.service.search(SearchRequest(q="", size=1)).papers_in_catalogue
    dates = [h.paper.activity_on or dt.date.min for h in results.hits]
    assert len(dates) == 5 and dates == sorted(dates, reverse=True)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (SearchRequest(q="deep learning " * 40), "limit"),
        (SearchRequest(q="x", size=500), "size"),
        (SearchRequest(q="x", page=0), "page"),
        (SearchRequest(q="x", mode="magic"), "mode"),  # type: ignore[arg-type]
        (SearchRequest(q="x", sort="oldest"), "sort"),  # type: ignore[arg-type]
    ],
)
def test_bad_requests_get_a_clear_error(searcher: Searcher, request_: SearchRequest, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        searcher.service.search(request_)


@pytest.mark.parametrize("q", ["", "networks"])
def test_an_empty_date_range_finds_nothing_and_says_why(searcher: Searcher, q: str) -> None:
    reversed_range = SearchFilters(date_from=dt.date(2025, 1, 2), date_to=dt.date(2025, 1, 1))
    results = searcher.service.search(SearchRequest(q=q, filters=reversed_range))
    assert results.hits == [] and results.total == 0
    assert results.notes == ["the date range is empty (`from` is after `to`), so no paper can match"]


# Letter strings the similarity floor was calibrated on (evals.floor) and the classic one; not its
# digit strings: "80" is a word BM25 rightly finds in abstracts.
_KINDS = nonsense_queries(10)
NONSENSE = ["qxzvbnm wplkjh zzkkqq", *_KINDS["random letters"], *_KINDS["pseudo-words"]]


def test_nonsense_finds_nothing_rather_than_noise(searcher: Searcher) -> None:
    for q in NONSENSE:
        results = searcher.service.search(SearchRequest(q=q))
        assert (results.hits, results.total) == ([], 0), q


def test_nul_bytes_and_lone_surrogates_are_dropped_from_a_query(searcher: Searcher) -> None:
    assert ADAM in searcher.ids("adaptive\x00 moment estimation\ud800 optimizer", size=3)


QUOKKA = "The quokka warm-up schedule doubles the learning rate every epoch until divergence."
PLATYPUS = "A platypus momentum trick keeps the denominator of the update away from zero."
FILLER = "We describe the experimental setup and the datasets used in the evaluation. " * 8


def ingest_full_text(searcher: Searcher, folder: Path, version: int, sentence: str) -> None:
    """Adam's full text at ``version``: two pages, ``sentence`` on page 2 (the product's pipeline)."""
    pipeline = Pipeline(searcher.settings, searcher.engine, searcher.store, make_embedder(searcher.settings))
    try:
        pdf = folder / f"{ADAM}v{version}.pdf"
        pdf.write_bytes(text_pdf([FILLER, f"{FILLER} {sentence}"]))
        job = PdfJob(arxiv_id=ADAM, path=str(pdf), version=version)
        data, source = pipeline.read_source(job)
        parsed = pipeline.parse(data)
        pipeline.index_pdf(job, data, source, parsed, pipeline.identify(job, parsed))
    finally:
        pipeline.close()


def test_reingesting_a_paper_keeps_both_indexes_consistent(searcher: Searcher, tmp_path: Path) -> None:
    store = searcher.store

    def ingest(version: int, sentence: str) -> None:
        ingest_full_text(searcher, tmp_path, version, sentence)

    # Versions above any other test's (the QA eval ingests v99 with the same platypus page), so
    # this test's newer version always wins whichever runs first.
    old, new = QUOKKA, PLATYPUS
    ingest(100, old)
    # The whole clause, not "quokka warm-up schedule" alone: that was a near tie with SkyLadder's
    # abstract ("context window scheduling"), which a fresh install's library versions could flip.
    query = "quokka warm-up schedule doubles the learning rate"
    hit = searcher.service.search(SearchRequest(q=query, size=3)).hits[0]
    assert hit.paper.arxiv_id == ADAM
    assert hit.snippet is not None and hit.snippet.kind == "body" and hit.snippet.page_start == 2
    assert "quokka" in hit.snippet.text

    ingest(101, new)
    lexical = searcher.service.ranker.lexical
    assert lexical is not None
    assert lexical.search("chunks", "quokka warm-up schedule", k=5) == []
    found = lexical.search("chunks", "platypus momentum", k=5)
    assert [h.doc_id.split("#")[0] for h in found] == [f"{ADAM}v101"]
    body_ids = set(store.ids(where={"$and": [{"arxiv_id": ADAM}, {"kind": "body"}]}))
    stored = set(lexical.chunks(sorted(body_ids)))
    assert body_ids and stored == body_ids  # the same chunks in Chroma and in BM25, no orphans
    assert all(i.startswith(f"{ADAM}v101#") for i in body_ids)
    hit = searcher.service.search(SearchRequest(q="platypus momentum trick", size=3)).hits[0]
    assert hit.paper.arxiv_id == ADAM and hit.snippet is not None and "platypus" in hit.snippet.text


def test_qa_retrieval_eval_scores_papers_and_pages(searcher: Searcher, tmp_path: Path) -> None:
    """``python -m evals qa-retrieval`` on this corpus, with Adam's full text (page 2 holds the
    platypus sentence) ingested here: at v99, or kept at the re-ingest test's newer v101 whose page 2
    is the same, whichever ran first."""
    from evals import qa

    ingest_full_text(searcher, tmp_path, 99, PLATYPUS)
    platypus = "platypus momentum trick for the update denominator"
    questions = [
        {"question": platypus, "arxiv_id": ADAM, "pages": [2]},
        {
            "question": "the Transformer: attention mechanisms without recurrence",
            "arxiv_id": "1706.03762",
            "pages": [1],
        },
        {"question": platypus, "arxiv_id": ADAM, "pages": [7]},
    ]
    lines = [json.dumps(q) for q in questions]
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = qa.run(
        qa.load(path), settings=searcher.settings, mode="hybrid", config=searcher.service.ranker.config
    )
    assert report.to_json() == {
        "questions": 3,
        "paper_hit@1": 1.0,
        "paper_hit@5": 1.0,
        "page_hit@1": 0.3333,
        "page_hit@3": 0.3333,
        "page_hit@5": 0.3333,
        "page_MRR": 0.3333,
    }
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "", "arxiv_id": "1412.6980"}\n')
    with pytest.raises(qa.QaFileError, match="empty"):
        qa.load(bad)


def test_chunks_are_indexed_with_their_context_but_keep_their_page_text(
    searcher: Searcher, tmp_path: Path
) -> None:
    """A body chunk is embedded and BM25-indexed with the paper's title and its section heading
    (``chunk_context``); Chroma and the lexical index both store the page text alone, the same."""
    ingest_full_text(searcher, tmp_path, 99, PLATYPUS)
    store, lexical = searcher.store, searcher.service.ranker.lexical
    assert lexical is not None
    ids = store.ids(where={"$and": [{"arxiv_id": ADAM}, {"kind": "body"}]})
    stored = {c.id: c.text for c in store.get(ids)}
    assert stored and {k: v.text for k, v in lexical.chunks(ids).items()} == stored
    assert not any("stochastic" in text.lower() for text in stored.values())
    # The title ("Adam: A Method for Stochastic Optimization") is only in the chunks' context.
    found = lexical.search("chunks", "stochastic optimization method", k=5)
    assert found and {h.arxiv_id for h in found} == {ADAM}


def test_passages_rank_the_page_that_answers_with_its_text(searcher: Searcher, tmp_path: Path) -> None:
    """``rank_passages``: chunk-level fusion aggregated to pages and papers, each passage with its
    pages and text (what chat packs)."""
    from retrieval.passages import rank_passages

    ingest_full_text(searcher, tmp_path, 99, PLATYPUS)
    ranking = rank_passages(searcher.service.ranker, "platypus momentum trick for the update denominator")
    top = ranking.pages[0]
    assert (top.arxiv_id, top.page) == (ADAM, 2)
    assert top.passages[0].text is not None and "platypus" in top.passages[0].text
    assert ADAM in [arxiv_id for arxiv_id, _ in ranking.papers[:5]]  # search's Ranker ranks papers
    assert ranking.passages == sorted(ranking.passages, key=lambda p: -p.score)
    assert all(p.pages or p.chunk_id.endswith("#abstract") for p in ranking.passages)
    lexical_only = rank_passages(searcher.service.ranker, "platypus momentum", mode="bm25")
    assert all(p.dense_rank is None for p in lexical_only.passages)
    assert (lexical_only.pages[0].arxiv_id, lexical_only.pages[0].page) == (ADAM, 2)


def test_shown_chunks_get_text_and_pages_from_either_index(searcher: Searcher) -> None:
    """Both retrievers return bare chunk ids; the details of the chunks shown come from the lexical
    index, or from Chroma for a chunk indexed since the lexical index was last rebuilt."""
    service, store = searcher.service, searcher.store
    lexical = service.ranker.lexical
    assert lexical is not None
    known = Chunk("2499.00001", 2, 4, "A wombat learning-rate warm-up, in BM25.", "body", 7, 7, "4 Results")
    fresh = Chunk(
        "2499.00002", 1, 3, "An okapi gradient clipping rule, only in Chroma.", "body", 5, 6, "3 Method"
    )
    lexical.upsert_paper(known.arxiv_id, [known])
    store.replace_paper(
        fresh.arxiv_id, [fresh], [[1.0] + [0.0] * (store.dim - 1)], {"primary_category": "cs.LG"}
    )
    try:
        page = [
            Candidate(known.arxiv_id, 1.0, 1, chunks=(ChunkHit(known.id, "body", lexical_rank=1),)),
            Candidate(fresh.arxiv_id, 0.5, 2, chunks=(ChunkHit(fresh.id, "body", dense_rank=1),)),
            Candidate("2499.00003", 0.1, 3, chunks=(ChunkHit("2499.00003v1#4", "body", dense_rank=2),)),
        ]
        first, second, gone = (c.chunks[0] for c in service._with_chunk_details(page))
        assert (first.page_start, first.page_end, first.section) == (7, 7, "4 Results")
        assert first.text == known.text and first.lexical_rank == 1
        assert (second.page_start, second.page_end, second.section) == (5, 6, "3 Method")
        assert second.text == fresh.text and second.dense_rank == 1
        assert gone.text is None and gone.page_start is None  # in neither index: the abstract is shown
    finally:
        lexical.remove_paper(known.arxiv_id)
        store.delete_paper(fresh.arxiv_id)
