"""Retrieval evaluation: BEIR datasets and question → page sets (``python -m evals``)."""
