"""Token counts (tiktoken's ``cl100k_base``), the one module that imports tiktoken.

tiktoken downloads its BPE file on first use, which fails offline; llama-index-core ships the same
file (same hash), so the cache directory is pointed at that copy before the first load. Chunking,
the chat's context budget and the markdown pages' token header all count with this encoding.
"""

from __future__ import annotations

import os
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution

import tiktoken

ENCODING = "cl100k_base"
BUNDLED = "llama_index/core/_static/tiktoken_cache"


class TokenizerUnavailable(RuntimeError):
    """The offline cl100k_base file is missing: llama-index-core is not installed."""


@cache
def encoding() -> tiktoken.Encoding:
    """cl100k_base from llama-index-core's bundled cache (same file and hash tiktoken expects)."""
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        try:
            cache_dir = distribution("llama-index-core").locate_file(
                "llama_index/core/_static/tiktoken_cache"
            )
        except PackageNotFoundError as error:
            raise TokenizerUnavailable(
                "llama-index-core (which ships the offline cl100k_base file) is not installed"
            ) from error
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))
