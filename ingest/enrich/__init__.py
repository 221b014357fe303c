"""Enrichment from OpenAlex, Semantic Scholar and ROR: one client module per source, the ROR import,
printed-affiliation matching, and the merge of what the sources say into the catalogue."""
