"""Ingestion: sources, importers, the PDF pipeline, enrichment and the worker."""
