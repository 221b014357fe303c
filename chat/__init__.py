"""Chat with the papers: evidence first, then a streamed answer whose citations are checked by code."""
