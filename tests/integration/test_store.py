"""The Chroma chunk store, on both paths: the embedded ``PersistentClient`` and a real ``chroma run``
server through ``HttpClient``."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from retrieval.store import ChunkStore, MetaValue, StoreLocked, collection_name, date_key
from retrieval.types import Chunk
from settings import PROJECT_ROOT
from tests.integration.indexing_peers import DIM, hashed_vector

PAPER: dict[str, MetaValue | None] = {
    "primary_category": "cs.IR",
    "categories": "cs.IR cs.LG",
    "category_list": ["cs.IR", "cs.LG"],
    "date": 20240105,
}


def chunks(arxiv_id: str, version: int, count: int, *, word: str = "retrieval") -> list[Chunk]:
    out = [Chunk(arxiv_id, version, 0, f"Title of {arxiv_id}\n\nAbstract about {word}.", "abstract")]
    out += [
        Chunk(
            arxiv_id,
            version,
            n,
            f"Body chunk {n} of {arxiv_id} v{version} about {word} and more {word}.",
            "body",
            page_start=n,
            page_end=n + 1,
            section="2 Method" if n > 1 else None,
            parser="pymupdf",
            parser_version="test",
        )
        for n in range(1, count + 1)
    ]
    return out


def vectors(items: list[Chunk]) -> list[list[float]]:
    return [hashed_vector(c.text) for c in items]


@pytest.fixture(params=["embedded", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChunkStore]:
    name = collection_name(embedder=f"test-{uuid.uuid4().hex}", chunking={"t": 1}, parser_version="x")
    if request.param == "embedded":
        opened = ChunkStore.embedded(tmp_path / "chroma", name=name, dim=DIM)
    else:
        host, port = request.getfixturevalue("chroma_server")
        opened = ChunkStore.server(host, port, name=name, dim=DIM)
    try:
        yield opened
    finally:
        if request.param == "server":
            opened.client.delete_collection(name)
        opened.close()


def test_a_new_version_replaces_every_old_chunk(store: ChunkStore) -> None:
    old = chunks("2401.00001", 1, 6)
    other = chunks("2401.00002", 3, 2)
    store.replace_paper("2401.00001", old, vectors(old), PAPER)
    store.replace_paper("2401.00002", other, vectors(other), PAPER)
    assert sorted(store.ids(where={"arxiv_id": "2401.00001"})) == sorted(c.id for c in old)

    new = chunks("2401.00001", 2, 3, word="attention")
    removed = store.replace_paper("2401.00001", new, vectors(new), PAPER)

    assert removed == len(old)  # every v1 chunk, the v1 abstract included: no orphans
    assert sorted(store.ids(where={"arxiv_id": "2401.00001"})) == sorted(c.id for c in new)
    assert sorted(store.ids(where={"arxiv_id": "2401.00002"})) == sorted(c.id for c in other)
    assert store.count() == len(new) + len(other)
    # Running the same replacement again (a redelivered job) changes nothing.
    assert store.replace_paper("2401.00001", new, vectors(new), PAPER) == 0
    assert store.count() == len(new) + len(other)


def test_metadata_carries_provenance_and_search_filters(store: ChunkStore) -> None:
    items = chunks("2401.00003", 2, 2)
    store.replace_paper("2401.00003", items, vectors(items), PAPER)
    body = store.get([items[2].id])[0]
    assert body.metadata == {
        "arxiv_id": "2401.00003",
        "version": 2,
        "n": 2,
        "kind": "body",
        "page_start": 2,
        "page_end": 3,
        "section": "2 Method",
        "parser": "pymupdf",
        "parser_version": "test",
        **PAPER,
    }
    abstract = store.get([items[0].id])[0].metadata
    assert "page_start" not in abstract and abstract["kind"] == "abstract"  # Chroma has no null

    query = hashed_vector(items[1].text)
    assert store.query(query, k=1)[0].id == items[1].id
    hits = store.query(query, k=5, where={"category_list": {"$contains": "cs.LG"}})
    assert {h.id for h in hits} == {c.id for c in items}
    assert store.query(query, k=5, where={"category_list": {"$contains": "math.GT"}}) == []
    assert len(store.query(query, k=5, where={"date": {"$gte": date_key(dt.date(2024, 1, 1))}})) == 3
    assert store.query(query, k=5, where={"date": {"$gt": date_key(dt.date(2024, 1, 5))}}) == []


def test_abstracts_replace_only_abstract_chunks(store: ChunkStore) -> None:
    full = chunks("2401.00004", 1, 3)
    store.replace_paper("2401.00004", full, vectors(full), PAPER)
    newer = [Chunk("2401.00004", 2, 0, "Title v2\n\nA revised abstract.", "abstract")]
    fresh = [Chunk("2401.00005", 1, 0, "Another paper\n\nIts abstract.", "abstract")]
    removed = store.replace_abstracts(newer + fresh, vectors(newer + fresh), [PAPER, PAPER])
    assert removed == 1  # the v1 abstract chunk
    ids = set(store.ids())
    assert ids == {c.id for c in full[1:]} | {newer[0].id, fresh[0].id}


def test_nul_bytes_and_lone_surrogates_never_reach_chroma(store: ChunkStore) -> None:
    dirty = Chunk(
        "2401.00006",
        1,
        1,
        "Null\x00 byte and a lone \ud800 surrogate and \udfff another.",
        "body",
        page_start=1,
        page_end=1,
        section="Se\x00ction \ud83d",
        parser="pymupdf",
        parser_version="t\x00",
    )
    store.replace_paper(
        "2401.00006", [dirty], [hashed_vector("dirty")], {**PAPER, "primary_category": "cs.\x00IR"}
    )
    stored = store.get([dirty.id])[0]
    assert stored.text == "Null byte and a lone  surrogate and  another."
    assert stored.metadata["section"] == "Section "
    assert stored.metadata["parser_version"] == "t"
    assert stored.metadata["primary_category"] == "cs.IR"
    for value in [stored.text, *map(str, stored.metadata.values())]:
        value.encode("utf-8")  # strict: raises on any lone surrogate
        assert "\x00" not in value


def test_collection_name_follows_what_built_the_vectors() -> None:
    base = collection_name(embedder="m", chunking={"chunk_tokens": 200, "overlap": 30}, parser_version="1")
    assert base == collection_name(
        embedder="m", chunking={"overlap": 30, "chunk_tokens": 200}, parser_version="1"
    )
    assert base.startswith("chunks-") and len(base) == len("chunks-") + 16
    assert base != collection_name(
        embedder="n", chunking={"chunk_tokens": 200, "overlap": 30}, parser_version="1"
    )
    assert base != collection_name(
        embedder="m", chunking={"chunk_tokens": 201, "overlap": 30}, parser_version="1"
    )
    assert base != collection_name(
        embedder="m", chunking={"chunk_tokens": 200, "overlap": 30}, parser_version="2"
    )


HOLDER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {root!r})
    from retrieval.store import ChunkStore
    from retrieval.types import Chunk
    from tests.integration.indexing_peers import hashed_vector
    store = ChunkStore.embedded(__import__("pathlib").Path({path!r}), name="chunks-lock-test", dim=384)
    chunk = Chunk("2401.00009", 1, 0, "written before the kill", "abstract")
    store.replace_paper("2401.00009", [chunk], [hashed_vector(chunk.text)], {{}})
    print("ready", flush=True)
    time.sleep(600)
    """
)


def test_a_second_process_is_refused_and_a_restart_after_a_kill_works(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER.format(root=str(PROJECT_ROOT), path=str(path))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"

        with pytest.raises(StoreLocked) as refused:
            ChunkStore.embedded(path, name="chunks-lock-test", dim=DIM)
        message = str(refused.value)
        assert (
            f"process {holder.pid}" in message and str(path) in message and "WOVEPAPER_CHROMA_HOST" in message
        )

        # The CLI says the same and exits non-zero instead of corrupting the index.
        env = {**os.environ, "WOVEPAPER_CHROMA_PATH": str(path), "WOVEPAPER_DATA_DIR": str(tmp_path / "data")}
        cli = subprocess.run(
            [sys.executable, "-m", "indexing", "worker", "--until-empty"],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert cli.returncode != 0
        assert f"process {holder.pid}" in cli.stderr and "only one process may write it" in cli.stderr

        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()

    # The lock file is still there, but the kernel dropped the dead holder's lock.
    assert (path / ".wovepaper-writer.lock").exists()
    reopened = ChunkStore.embedded(path, name="chunks-lock-test", dim=DIM)
    try:
        assert reopened.ids() == ["2401.00009v1#0"]
        assert reopened.get(["2401.00009v1#0"])[0].text == "written before the kill"
    finally:
        reopened.close()
    # Closing releases the lock: the same process (or another) can open it again.
    ChunkStore.embedded(path, name="chunks-lock-test", dim=DIM).close()


class _HashedEmbedder:
    """The test vectors' embedder (a hashed bag of words), for dense retrieval over this store."""

    name = "hashed"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [hashed_vector(t) for t in texts]


def test_dense_retrieval_through_llama_index_on_both_deployments(store: ChunkStore) -> None:
    """The k-NN that search runs (llama-index over this collection, ids and distances only) finds
    the nearest chunks, best first, and reads paper and kind from the chunk ids."""
    from retrieval.dense import DenseRetriever

    papers = {"2401.00011": "retrieval", "2401.00012": "astronomy", "hep-th/9901001": "strings"}
    for arxiv_id, word in papers.items():
        items = chunks(arxiv_id, 2, 2, word=word)
        store.replace_paper(arxiv_id, items, vectors(items), PAPER)
    dense = DenseRetriever(store, _HashedEmbedder())
    hits = dense.search("body chunk about strings and more strings", k=4)
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert hits[0].arxiv_id == "hep-th/9901001" and hits[0].kind == "body"
    assert hits[0].chunk_id.startswith("hep-th/9901001v2#")
    assert all(a.similarity >= b.similarity for a, b in itertools.pairwise(hits))
    assert all(h.text is None and h.page_start is None for h in hits)  # details are read for shown papers
    abstract = dense.search("Title of 2401.00012 Abstract about astronomy.", k=1)[0]
    assert (abstract.arxiv_id, abstract.kind, abstract.chunk_id) == (
        "2401.00012",
        "abstract",
        "2401.00012v2#0",
    )
    assert abstract.similarity == pytest.approx(1.0, abs=1e-4)
    filtered = dense.search("strings", k=10, where={"arxiv_id": "2401.00011"})
    assert filtered and {h.arxiv_id for h in filtered} == {"2401.00011"}


def test_search_answers_from_bm25_when_the_chroma_server_dies(tmp_path: Path) -> None:
    """A Chroma server that goes away mid-service: the k-NN fails with a StoreError (not an HTTP
    client error escaping as a 500), and the ranker answers from BM25 with a note saying so."""
    from retrieval.dense import DenseRetriever
    from retrieval.lexical import LexicalIndex
    from retrieval.search import RankConfig, Ranker
    from retrieval.store import StoreError
    from tests.conftest import running_chroma

    items = chunks("2401.00021", 1, 2, word="okapi")
    with running_chroma(tmp_path) as ((host, port), server):
        store = ChunkStore.server(host, port, name="dies", dim=DIM)
        store.replace_paper("2401.00021", items, vectors(items), PAPER)
        dense = DenseRetriever(store, _HashedEmbedder())
        assert dense.search("okapi", k=2)[0].arxiv_id == "2401.00021"
        lexical = LexicalIndex(tmp_path / "lexical", refresh_seconds=0)
        lexical.upsert_paper("2401.00021", items)
        lexical.flush()
        server.kill()
        server.wait()
        with pytest.raises(StoreError, match="k-NN query"):
            dense.search("okapi", k=2)
        ranking = Ranker(lexical, dense, RankConfig()).rank("okapi", mode="hybrid")
        assert [c.arxiv_id for c in ranking.candidates] == ["2401.00021"]
        assert ranking.notes and "the vector index did not answer" in ranking.notes[0]
        lexical.close()
