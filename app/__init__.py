"""The Litestar web app: pages, the JSON API, markdown for agents; ``create_app`` is the composition root."""
