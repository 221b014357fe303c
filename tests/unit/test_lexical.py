"""The maintained lexical index: documents in, BM25 out, generations on disk, other processes' builds
picked up, replacing a paper's chunks leaves none behind."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from retrieval.lexical import LexicalIndex, PaperText, highlight_spans
from retrieval.types import Chunk
from settings import PROJECT_ROOT

PAPERS = [
    PaperText(
        "1412.6980",
        "Adam: A Method for Stochastic Optimization",
        "We introduce Adam, an algorithm for first-order gradient-based optimization of stochastic "
        "objective functions, based on adaptive estimates of lower-order moments.",
        ("Diederik P. Kingma", "Jimmy Ba"),
    ),
    PaperText(
        "1706.03762",
        "Attention Is All You Need",
        "We propose a new simple network architecture, the Transformer, based solely on attention "
        "mechanisms, dispensing with recurrence and convolutions entirely.",
        ("Ashish Vaswani", "Noam Shazeer"),
    ),
    PaperText(
        "1512.03385",
        "Deep Residual Learning for Image Recognition",
        "We present a residual learning framework to ease the training of networks that are "
        "substantially deeper than those used previously.",
        ("Kaiming He",),
    ),
]


def body(arxiv_id: str, version: int, texts: list[str]) -> list[Chunk]:
    head = Chunk(arxiv_id, version, 0, "title and abstract", "abstract")
    return [head] + [
        Chunk(arxiv_id, version, n, text, "body", page_start=n + 1, page_end=n + 1, section="Method")
        for n, text in enumerate(texts, start=1)
    ]


@pytest.fixture
def index(tmp_path: Path) -> LexicalIndex:
    lexical = LexicalIndex(tmp_path / "lexical", refresh_seconds=0, poll_seconds=0)
    lexical.upsert_papers(PAPERS)
    return lexical


def test_papers_are_found_by_their_words_stemmed(index: LexicalIndex) -> None:
    hits = index.search("papers", "adaptive moment estimation for stochastic optimisers", k=3)
    assert hits[0].arxiv_id == "1412.6980"
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert hits == sorted(hits, key=lambda h: -h.score)
    assert index.search("papers", "kingma", k=3)[0].arxiv_id == "1412.6980"  # authors are indexed


def test_stop_words_and_unknown_words_find_nothing(index: LexicalIndex) -> None:
    assert index.search("papers", "the of and is", k=5) == []
    assert index.search("papers", "zxqvj wqplk", k=5) == []
    assert index.search("papers", "", k=5) == []


def test_allowed_papers_restrict_the_search(index: LexicalIndex) -> None:
    query = "networks attention residual learning"
    assert {h.arxiv_id for h in index.search("papers", query, k=5)} == {"1706.03762", "1512.03385"}
    only = index.search("papers", query, k=5, allowed={"1512.03385"})
    assert [h.arxiv_id for h in only] == ["1512.03385"]
    assert index.search("papers", query, k=5, allowed=set()) == []


def test_a_new_version_replaces_every_old_chunk(index: LexicalIndex) -> None:
    index.upsert_paper(
        "1412.6980", body("1412.6980", 8, ["bias correction of the moment estimates", "epsilon"])
    )
    hits = index.search("chunks", "bias correction", k=5)
    assert [h.doc_id for h in hits] == ["1412.6980v8#1"]
    assert index.chunks(["1412.6980v8#1"])["1412.6980v8#1"].page_start == 2

    assert index.upsert_paper("1412.6980", body("1412.6980", 9, ["convergence proof of the regret bound"]))
    assert index.search("chunks", "bias correction", k=5) == []
    assert [h.doc_id for h in index.search("chunks", "regret bound", k=5)] == ["1412.6980v9#1"]
    assert index.document_count("chunks") == 1  # no orphans of v8
    # A redelivered job changes nothing and builds nothing.
    generation = index.generation("chunks")
    assert not index.upsert_paper(
        "1412.6980", body("1412.6980", 9, ["convergence proof of the regret bound"])
    )
    assert index.generation("chunks") == generation


def test_a_chunks_context_is_searched_but_not_stored_as_its_text(index: LexicalIndex) -> None:
    """The title and section heading (``Chunk.context``) are tokenised with the text; the stored
    text stays the page text; a changed context re-indexes; a re-tokenising rebuild keeps it."""
    chunk = Chunk("1412.6980", 9, 1, "the update rule", "body", 2, 2, "Algorithm", context="Adam\nAlgorithm")
    assert index.upsert_paper("1412.6980", [chunk])
    assert [h.doc_id for h in index.search("chunks", "adam algorithm", k=5)] == [chunk.id]
    assert index.chunks([chunk.id])[chunk.id].text == "the update rule"
    assert not index.upsert_paper("1412.6980", [chunk])  # unchanged: nothing to do
    assert index.upsert_paper("1412.6980", [replace(chunk, context="Adam\nConvergence")])
    assert index.search("chunks", "convergence", k=5)[0].doc_id == chunk.id
    index._retokenize()  # what a tokenizer change does
    index.flush()
    assert index.search("chunks", "convergence", k=5)[0].doc_id == chunk.id


def test_a_store_from_before_contexts_is_upgraded_in_place(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    db = sqlite3.connect(root / "documents.sqlite3")
    db.executescript(
        "CREATE TABLE documents (corpus TEXT NOT NULL, doc_id TEXT NOT NULL, arxiv_id TEXT NOT NULL,"
        " text TEXT NOT NULL, tokens TEXT NOT NULL, page_start INTEGER, page_end INTEGER, section TEXT,"
        " source_hash TEXT NOT NULL, PRIMARY KEY (corpus, doc_id));"
    )
    db.close()
    index = LexicalIndex(root, refresh_seconds=0, poll_seconds=0)
    index.upsert_papers(PAPERS)
    assert index.search("papers", "residual learning", k=1)[0].arxiv_id == "1512.03385"


def test_chunks_of_another_paper_are_refused(index: LexicalIndex) -> None:
    with pytest.raises(ValueError, match="another paper"):
        index.upsert_paper("1412.6980", body("1706.03762", 1, ["attention"]))


def test_removing_a_paper_removes_all_its_documents(index: LexicalIndex) -> None:
    index.upsert_paper("1706.03762", body("1706.03762", 5, ["multi-head attention layers"]))
    assert index.remove_paper("1706.03762")
    assert index.search("papers", "attention transformer", k=5) == []
    assert index.search("chunks", "multi-head attention", k=5) == []
    assert not index.remove_paper("1706.03762")


def test_the_index_is_on_disk_and_not_rebuilt_at_start(index: LexicalIndex, tmp_path: Path) -> None:
    generation = index.generation("papers")
    reopened = LexicalIndex(tmp_path / "lexical", refresh_seconds=0)
    assert reopened.generation("papers") == generation
    assert reopened.pending() == {"papers": False, "chunks": False}
    assert reopened.search("papers", "residual learning", k=1)[0].arxiv_id == "1512.03385"
    assert reopened.generation("papers") == generation


def test_changes_are_debounced_then_built(tmp_path: Path) -> None:
    lexical = LexicalIndex(tmp_path / "lexical", refresh_seconds=0.3, poll_seconds=0)
    lexical.upsert_papers(PAPERS[:1])
    assert lexical.pending()["papers"]  # not built yet: pending
    assert lexical.search("papers", "adam", k=1) == []
    deadline = time.monotonic() + 10
    while lexical.pending()["papers"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lexical.search("papers", "adam", k=1)[0].arxiv_id == "1412.6980"


def test_close_builds_what_is_pending(tmp_path: Path) -> None:
    lexical = LexicalIndex(tmp_path / "lexical", refresh_seconds=3600)
    lexical.upsert_papers(PAPERS)
    lexical.close()
    assert LexicalIndex(tmp_path / "lexical").search("papers", "transformer", k=1)[0].arxiv_id == "1706.03762"


WRITER = """
import sys
from pathlib import Path
from retrieval.lexical import LexicalIndex, PaperText
index = LexicalIndex(Path(sys.argv[1]), refresh_seconds=0)
index.upsert_papers([PaperText("2005.11401", "Retrieval-Augmented Generation for NLP Tasks",
                               "We explore retrieval-augmented generation models.")])
"""


def test_a_reader_picks_up_a_generation_built_by_another_process(index: LexicalIndex, tmp_path: Path) -> None:
    reader = LexicalIndex(tmp_path / "lexical", poll_seconds=0.2)
    assert reader.search("papers", "retrieval-augmented generation", k=3) == []
    subprocess.run(
        [sys.executable, "-c", WRITER, str(tmp_path / "lexical")], cwd=PROJECT_ROOT, check=True, timeout=120
    )
    time.sleep(0.25)
    hits = reader.search("papers", "retrieval-augmented generation", k=3)
    assert hits and hits[0].arxiv_id == "2005.11401"
    assert {h.arxiv_id for h in reader.search("papers", "adam optimization", k=3)} >= {"1412.6980"}


def test_highlights_match_the_way_the_index_matches() -> None:
    text = "Adam computes adaptive estimates of the first and second moments."
    words = [text[a:b] for a, b in highlight_spans(text, "moment estimation of adaptive methods")]
    assert words == ["adaptive", "estimates", "moments"]
    assert highlight_spans(text, "the of and") == []


def test_document_frequencies_count_the_documents_holding_each_token(index: LexicalIndex) -> None:
    tokens = index.tokenize(["learning residual zxqvj"])[0]
    count, frequencies = index.document_frequencies("papers", tokens)
    assert count == 3
    assert frequencies == {"learn": 1, "residu": 1, "zxqvj": 0}
    network = index.tokenize(["networks"])[0]
    assert index.document_frequencies("papers", network)[1] == {"network": 2}
    assert index.document_frequencies("chunks", ["learn"]) == (0, {"learn": 0})  # nothing indexed
