"""Who-is-who: which author strings are which researcher (``docs/researchers.md``).

- ``names``: a person's name parsed (surname, given names, the block it is filed under), whether two
  spellings can be one person, the spelling a researcher is shown under;
- ``name_counts``: how common a name is among arXiv's authors (the rare-name prior).
"""
