"""Indexing: the job queue and the worker that turns papers into searchable chunks.

``ingest`` fills the catalogue with metadata and knows how to fetch, parse and chunk a PDF; this
package queues that work (``contract``, ``queue``, ``enqueue``), runs it (``pipeline``: fetch → parse
→ chunk → embed → upsert into Chroma and the lexical index; ``runner``: one job to an outcome with
per-paper ``status``; ``worker``: the embedded and the SAQ loop; ``progress``) and builds it from
settings (``wiring``). ``python -m indexing`` runs each stage alone.
"""
