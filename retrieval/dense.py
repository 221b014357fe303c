"""Dense retrieval: nearest chunks to the query's embedding, through llama-index over Chroma.

llama-index's ``VectorStoreIndex.from_vector_store`` wraps the store's Chroma collection (no copy,
no re-embedding); its retriever runs the k-nearest-neighbour query. The k-NN asks Chroma for ids and
distances only: reading the documents and metadata of 100 chunks took ~6 ms of a ~7 ms query at 75k
papers, and search needs them only for the few papers it shows (it reads those afterwards; chunk ids
already say paper, version and chunk number). The query is embedded by our
own :class:`~retrieval.embedder.Embedder` (the same model that embedded the chunks), handed to
llama-index through a small ``BaseEmbedding`` adapter; no LLM is involved anywhere. Query vectors
are cached (LRU), so a repeated query (paging, the debug view, a refresh) costs only the k-NN.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import QueryBundle, TextNode
from llama_index.core.vector_stores.types import VectorStoreQueryResult
from llama_index.vector_stores.chroma import ChromaVectorStore
from pydantic import PrivateAttr

from retrieval.embedder import Embedder
from retrieval.store import CHROMA_ERRORS, ChunkStore, StoreError, read_twice
from retrieval.types import parse_chunk_id


@dataclass(frozen=True, slots=True)
class DenseHit:
    chunk_id: str
    arxiv_id: str
    similarity: float  # cosine similarity, -1 … 1
    rank: int  # 1-based
    text: str | None  # None: not read with the k-NN (see the module docstring)
    kind: str  # "abstract" | "body"
    page_start: int | None
    page_end: int | None
    section: str | None


class _QueryEmbedding(BaseEmbedding):
    """Our embedder behind llama-index's embedding interface (used only for queries here)."""

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder) -> None:
        super().__init__(model_name=embedder.name, embed_batch_size=8)
        self._embedder = embedder

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embedder.embed([query])[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embedder.embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed(texts)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


class _NearestIds(ChromaVectorStore):
    """llama-index's Chroma vector store whose k-NN returns ids and scores, not documents."""

    def __init__(self, collection: Any) -> None:
        super().__init__(chroma_collection=collection)

    def _query(
        self, query_embeddings: list[float], n_results: int, where: dict[str, Any], **kwargs: Any
    ) -> VectorStoreQueryResult:
        result = self._collection.query(
            query_embeddings=query_embeddings,
            n_results=n_results,
            where=where or None,
            include=["distances"],
        )
        ids: list[str] = result["ids"][0]
        distances = (result["distances"] or [[]])[0]
        return VectorStoreQueryResult(
            nodes=[TextNode(id_=i, text="") for i in ids],
            similarities=[math.exp(-d) for d in distances],  # as ChromaVectorStore reports them
            ids=ids,
        )


class DenseRetriever:
    """k-NN over one chunk collection. Thread-safe."""

    def __init__(self, store: ChunkStore, embedder: Embedder, *, cache_size: int = 1024) -> None:
        if store.dim != embedder.dim:
            raise ValueError(
                f"the store holds {store.dim}-d vectors but {embedder.name} makes {embedder.dim}-d"
            )
        self.store = store
        self.embedder = embedder
        self._adapter = _QueryEmbedding(embedder)
        self._index: VectorStoreIndex | None = None
        self._indexed: object = None  # the collection ``_index`` was built on
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @property
    def index(self) -> VectorStoreIndex:
        collection = self.store.collection  # built on first use
        if self._index is None or collection is not self._indexed:
            vector_store = _NearestIds(collection)
            self._index = VectorStoreIndex.from_vector_store(vector_store, embed_model=self._adapter)
            self._indexed = collection
        return self._index

    def embed_query(self, query: str) -> list[float]:
        with self._lock:
            cached = self._cache.get(query)
            if cached is not None:
                self._cache.move_to_end(query)
                return cached
        vector = self.embedder.embed([query])[0]
        with self._lock:
            self._cache[query] = vector
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return vector

    def feedback(
        self, vector: Sequence[float], arxiv_ids: Sequence[str], weight: float
    ) -> list[float] | None:
        """Rocchio feedback: ``vector`` moved towards the mean of these papers' title + abstract
        vectors (read from the store), re-normalised. None when none of them is in the store."""
        if not arxiv_ids or weight <= 0:
            return None
        where = {"$and": [{"arxiv_id": {"$in": list(arxiv_ids)}}, {"kind": "abstract"}]}
        try:
            found = read_twice(
                lambda: self.store.collection.get(where=where, include=["embeddings"]),  # type: ignore[arg-type]
                "feedback vectors",
            )
        except CHROMA_ERRORS as exc:
            raise StoreError(f"reading feedback vectors from {self.store.where} failed: {exc}") from exc
        embeddings = found.get("embeddings")
        if embeddings is None or len(embeddings) == 0:
            return None
        moved = np.asarray(vector, dtype=np.float32) + weight * np.asarray(embeddings, dtype=np.float32).mean(
            axis=0
        )
        norm = float(np.linalg.norm(moved))
        return (moved / norm).tolist() if norm > 0 else None

    def search(
        self,
        query: str,
        *,
        k: int,
        where: Mapping[str, Any] | None = None,
        vector: Sequence[float] | None = None,
    ) -> list[DenseHit]:
        """The ``k`` nearest chunks (Chroma ``where`` filter optional). ``vector`` skips embedding."""
        if k <= 0:
            return []
        embedding = list(vector) if vector is not None else self.embed_query(query)
        kwargs: dict[str, Any] = {"where": dict(where)} if where else {}
        retriever = self.index.as_retriever(similarity_top_k=k, vector_store_kwargs=kwargs)
        bundle = QueryBundle(query_str=query, embedding=embedding)
        try:
            nodes = read_twice(lambda: retriever.retrieve(bundle), "k-NN")
        except CHROMA_ERRORS as exc:
            raise StoreError(f"the k-NN query on {self.store.where} failed: {exc}") from exc
        hits = []
        for rank, node in enumerate(nodes, start=1):
            arxiv_id, _version, n = parse_chunk_id(node.node.node_id)
            # The collection's distance is cosine; the store reports exp(-distance).
            similarity = 1.0 + math.log(node.score) if node.score and node.score > 0 else -1.0
            kind = "abstract" if n == 0 else "body"  # chunk 0 is the title + abstract
            hits.append(DenseHit(node.node.node_id, arxiv_id, similarity, rank, None, kind, None, None, None))
        return hits
