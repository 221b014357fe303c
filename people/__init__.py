"""Who-is-who: which author strings are which researcher (``docs/researchers.md``).

- ``names``: a person's name parsed (surname, given names, the block it is filed under), whether two
  spellings can be one person, the spelling a researcher is shown under;
- ``name_counts``: how common a name is among arXiv's authors (the rare-name prior);
- ``evidence``: what a paper says about its authors, a researcher's profile, the model's features;
- ``weights``: the model's fitted weights and thresholds (``weights.json``, with how they were fitted);
- ``resolver``: the rule that files each author of a new paper under a researcher (its cache, and the
  profiles it loads from the catalogue);
- ``writes``: the resolver's merges and respellings written to the catalogue.

The import (``ingest.importer``) and enrichment call it; the evals (``evals.researchers``) measure and
fit it.
"""
