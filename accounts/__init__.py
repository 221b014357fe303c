"""People, their sign-in identities, API tokens, follows and private feeds (models on the
catalogue's ``Base``; queries in :mod:`accounts.queries`). Imports nothing of ours but ``catalog``;
the web side (sessions, providers, guards) lives in ``app/auth``."""
