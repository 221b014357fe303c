"""The relational catalogue: models, identifiers, names, queries and migrations."""
