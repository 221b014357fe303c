"""The core retrieval library: embedder, vector store, lexical index, hybrid search, answers."""
