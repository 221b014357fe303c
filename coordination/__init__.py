"""State that several processes share: the one Redis connection factory, and (added by the
sign-in and HTTP-politeness work) cross-process rate limits with a local fallback."""
