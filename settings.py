"""Typed settings, one class per concern, all read from ``WOVEPAPER_*`` environment variables.

Every field is documented by its ``description``; ``tests/unit/test_docs.py`` fails when a field is
missing from the manual's configuration page, which ``scripts/docs_hooks.py`` generates from these
fields (``docs/configuration.md``). Read settings through :func:`get_settings` (cached);
tests call ``get_settings.cache_clear()`` after changing the environment.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import sys
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal, get_type_hints

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


class _Section(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WOVEPAPER_", extra="ignore", frozen=True)


def secret(*, description: str, required_in_production: bool = False, min_chars: int = 0) -> Any:
    """A field holding a credential: never a placeholder in production, set there when required and
    at least ``min_chars`` long (see :func:`production_problems`)."""
    extra: dict[str, Any] = {
        "secret": True,
        "required_in_production": required_in_production,
        "min_chars": min_chars,
    }
    return Field("", description=description, json_schema_extra=extra)


class CoreSettings(_Section):
    environment: Literal["development", "production", "test"] = Field(
        "development",
        description="`development` enables debug views; `production` refuses to start with unsafe "
        "settings, listing them (`settings.production_problems()`).",
    )
    data_dir: Path = Field(
        PROJECT_ROOT / "data",
        description="Where the embedded database, Chroma index, lexical index and models live.",
    )
    demo_data_dir: Path = Field(
        SHARED_DATA, description="The shared real-data folder the demo corpus is ingested from."
    )
    debug_views: bool | None = Field(
        None,
        description="Show the development views (the search ranking view, `?debug=1`). Empty: on in "
        "`development` only; refused in `production`.",
    )


class DatabaseSettings(_Section):
    database_url: str = Field(
        "",
        description="SQLAlchemy URL of the catalogue. Empty: SQLite at `<data_dir>/catalogue.sqlite3`. "
        "PostgreSQL: `postgresql+psycopg://user@host/db`.",
    )
    database_echo: bool = Field(False, description="Log every SQL statement (debugging).")


class ServerSettings(_Section):
    host: str = Field("127.0.0.1", description="Interface the web app listens on.")
    port: int = Field(8000, description="Port the web app listens on.")
    public_url: str = Field(
        "",
        description="Absolute base URL used in canonical links, sitemaps and feeds. Empty: `http://<host>:<port>`.",
    )
    workers: int = Field(1, ge=1, description="Web worker processes started by `python -m app serve`.")
    page_size: int = Field(24, ge=1, le=200, description="Items per page on list pages.")


class PagesSettings(_Section):
    contact_email: str = Field(
        "",
        description="Address shown on the Contact page and in the Organization JSON-LD. Empty: the page "
        "says none is published.",
    )
    page_cache_seconds: float = Field(
        30.0, ge=0, description="How long a rendered public page is reused in-process (0: never cached)."
    )
    page_cache_entries: int = Field(
        1024,
        ge=0,
        description="Most rendered pages kept in that cache, per worker process (pages are 10-40 KB).",
    )
    sitemap_urls_per_file: int = Field(
        50_000, ge=1, le=50_000, description="URLs per child sitemap (the protocol allows at most 50,000)."
    )
    feed_items: int = Field(50, ge=1, le=500, description="Newest papers listed in each RSS feed.")


class RedisSettings(_Section):
    redis_url: str = Field(
        "",
        description="Redis URL (`redis://127.0.0.1:6379/0`) for the job queue, caches, sessions, rate "
        "limits and the arXiv pace when scaled out. Empty: in-process queue, caches and limits (single "
        "process only).",
    )


class IngestSettings(_Section):
    import_batch_size: int = Field(1000, ge=1, description="Records written per catalogue transaction.")


class ArxivSettings(_Section):
    """Every request to arXiv: the API, OAI-PMH and PDF downloads. arXiv's terms ask for at most one
    request every 3 s, so all three share one pace across every process of the deployment."""

    arxiv_api_url: str = Field(
        "https://export.arxiv.org/api/query",
        description="arXiv API query endpoint (Atom), used by `python -m ingest arxiv`.",
    )
    arxiv_oai_pmh_url: str = Field(
        "https://oaipmh.arxiv.org/oai",
        description="arXiv OAI-PMH base URL (`metadataPrefix=arXiv`), used by `python -m ingest oai`.",
    )
    arxiv_pdf_url: str = Field(
        "https://arxiv.org/pdf/",
        description="Base URL of arXiv's PDFs: a paper's PDF is fetched from `<this>/<id>` when someone asks "
        "for its full text. Its host is allowed besides arXiv's own (https and public addresses only, "
        "unless it is a loopback address: a local mirror, or the tests' stand-in).",
    )
    arxiv_interval_seconds: float = Field(
        3.0,
        ge=0,
        description="Least time between the starts of two requests to arXiv (API, OAI-PMH and PDFs "
        "together), across every process: kept on Redis when configured, else in `<data_dir>/pacing/`.",
    )
    arxiv_timeout_seconds: float = Field(
        30.0, gt=0, description="Seconds before a request to arXiv times out (connecting, or between bytes)."
    )
    arxiv_retries: int = Field(
        4,
        ge=0,
        le=10,
        description="Retries of a request to arXiv after 408, 429, 5xx or a network error (exponential "
        "backoff with jitter).",
    )
    arxiv_backoff_seconds: float = Field(
        2.0, ge=0, description="First backoff delay in seconds (doubles per retry; `Retry-After` wins)."
    )
    arxiv_max_wait_seconds: float = Field(
        300.0,
        ge=0,
        description="Longest `Retry-After` honoured; arXiv asking for more fails the request with that "
        "reason.",
    )
    arxiv_page_size: int = Field(
        100, ge=1, le=2000, description="Results per arXiv API request (arXiv allows at most 2,000)."
    )
    arxiv_user_agent: str = Field(
        "wovepaper/0.1 (+https://github.com/wovepaper)",
        min_length=1,
        description="User-Agent sent to arXiv (name a contact if you harvest a lot).",
    )


class ParserSettings(_Section):
    """Limits of the sandboxed PDF parser; a PDF over any of them fails with the reason."""

    pdf_max_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1,
        description="Largest PDF downloaded or parsed, in bytes (64 MiB); a larger one is rejected with "
        "the reason (a download stops reading there).",
    )
    pdf_max_pages: int = Field(500, ge=1, description="Most pages a parsed PDF may have.")
    pdf_max_chars_per_page: int = Field(
        100_000, ge=1, description="Most characters of text on one PDF page (a dense page has ~8,000)."
    )
    pdf_timeout_seconds: float = Field(
        60.0, gt=0, description="Wall-clock time one PDF may take to parse before its parser is killed."
    )
    pdf_memory_mib: int = Field(
        1536,
        ge=1024,
        description="Address-space limit (`RLIMIT_AS`) of a parser process in MiB, at least 1024 "
        "(PyMuPDF needs 512).",
    )


class ChunkSettings(_Section):
    """Token-aware chunking (tiktoken ``cl100k_base``). The defaults keep a chunk inside MiniLM's
    256 word-piece window: 200 cl100k tokens of paper text are a median 182 word-pieces (p95 207;
    0.1 % of chunks go over 256), measured by ``benchmarks/chunk_window.py``."""

    chunk_tokens: int = Field(
        200,
        ge=16,
        le=8192,
        description="Most cl100k tokens in one full-text chunk (fits MiniLM's 256 word-piece window).",
    )
    chunk_overlap_tokens: int = Field(
        30, ge=0, description="Tokens a chunk repeats from the end of the previous one (whole sentences)."
    )
    chunk_context: Literal["none", "title_section", "title_section_abstract"] = Field(
        "title_section",
        description="What a full-text chunk is embedded and indexed with (its stored and shown text stays "
        "the page text, as shown and cited): `none`, `title_section` (the paper title and section "
        "heading) or `title_section_abstract` (also the abstract's first sentence). Part of the index "
        "name.",
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkSettings:
        if self.chunk_overlap_tokens >= self.chunk_tokens // 2:
            raise ValueError("chunk_overlap_tokens must be less than half of chunk_tokens")
        return self


class EmbeddingSettings(_Section):
    embedding_url: str = Field(
        "",
        description="Base URL of an OpenAI-compatible `/v1/embeddings` endpoint to embed with instead of "
        "the bundled model. Empty: the bundled all-MiniLM-L6-v2 int8 model, run in-process.",
    )
    embedding_model: str = Field(
        "text-embedding-3-small",
        description="Model name sent to the endpoint (ignored for the bundled model).",
    )
    embedding_api_key: str = secret(description="API key for the endpoint (empty: `OPENAI_API_KEY` or none).")
    embedding_dimensions: int = Field(
        1536, ge=1, description="Vector size the endpoint returns (ignored for the bundled model: 384)."
    )
    embedding_batch_size: int = Field(
        8,
        ge=1,
        le=2048,
        description="Texts per model call (bundled model: small batches are fastest on CPU).",
    )
    embedding_threads: int = Field(
        0, ge=0, description="onnxruntime threads for the bundled model (0: one per core)."
    )
    embedding_quantized: bool = Field(
        True,
        description="Embed with the per-channel int8 MiniLM that `make install` builds from the fp32 weights "
        "(`python -m retrieval.quantize`: real integer matrix products, ~1.5x less CPU, the same retrieval "
        "quality, see the manual's Search page); false: the bundled int8 model as shipped (it dequantizes "
        "to fp32). Part of the index name.",
    )


class ChromaSettings(_Section):
    chroma_host: str = Field(
        "",
        description="Host of a `chroma run` server. Empty: the embedded Chroma under `chroma_path`, written "
        "by one process only (the web app's background worker, or the CLI when no app runs).",
    )
    chroma_port: int = Field(8000, ge=1, le=65535, description="Port of the Chroma server.")
    chroma_path: Path | None = Field(
        None,
        description="Directory of the embedded Chroma (one writing process, guarded by a lock file). "
        "Empty: `<data_dir>/chroma`.",
    )


class WorkerSettings(_Section):
    worker_embedded: bool = Field(
        True,
        description="Run the indexing worker as a background thread of the web app when no Redis is "
        "configured (the embedded default). Off: run `python -m indexing worker` yourself.",
    )
    worker_queue: str = Field(
        "wovepaper",
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="Name of the job queue on Redis and the prefix of every other key the deployment keeps "
        "there (sessions, limits); deployments sharing one Redis use different names.",
    )
    worker_max_attempts: int = Field(
        3, ge=1, le=50, description="Attempts per job before it is marked failed with its last reason."
    )
    worker_retry_delay_seconds: float = Field(
        5.0, ge=0, description="Delay before the first retry; doubled for each further attempt."
    )
    worker_retry_max_delay_seconds: float = Field(300.0, ge=0, description="Upper bound of a retry delay.")
    worker_lease_seconds: float = Field(
        60.0,
        ge=2,
        description="A running job whose worker stopped heartbeating for this long is taken over (crash "
        "recovery); heartbeats come every third of it.",
    )
    worker_poll_seconds: float = Field(1.0, gt=0, description="How often an idle worker looks for new jobs.")
    worker_abstract_batch: int = Field(
        64, ge=1, le=2048, description="Papers per abstract-embedding job (title + abstract chunks)."
    )


class EnrichmentSettings(_Section):
    openalex_base_url: str = Field(
        "https://api.openalex.org", description="OpenAlex API base URL (tests point it at a local server)."
    )
    openalex_mailto: str = Field(
        "", description="Contact e-mail sent to OpenAlex as `mailto` (its polite pool). Empty: none sent."
    )
    openalex_api_key: str = secret(description="OpenAlex API key (`api_key` parameter). Empty: none.")
    openalex_rate_limit: float = Field(
        8.0,
        gt=0,
        description="Most OpenAlex requests per second, across every process (OpenAlex allows 10).",
    )
    semantic_scholar_base_url: str = Field(
        "https://api.semanticscholar.org/graph/v1", description="Semantic Scholar Graph API base URL."
    )
    semantic_scholar_api_key: str = secret(
        description="Semantic Scholar API key (`x-api-key` header). Empty: the shared, slower pool."
    )
    semantic_scholar_rate_limit: float = Field(
        1.0,
        gt=0,
        description="Most Semantic Scholar requests per second, across every process (1 with a key; "
        "429s back off).",
    )
    ror_base_url: str = Field("https://api.ror.org/v2", description="ROR API (v2) base URL.")
    ror_client_id: str = Field("", description="ROR API client id (`Client-Id` header). Empty: none.")
    ror_rate_limit: float = Field(
        5.0, gt=0, description="Most ROR API requests per second, across every process."
    )
    enrichment_timeout: float = Field(
        30.0, gt=0, description="Seconds before one enrichment HTTP request times out."
    )
    enrichment_max_retries: int = Field(
        4, ge=0, description="Retries of a request after 429, 5xx or a network error (exponential backoff)."
    )
    enrichment_backoff: float = Field(
        2.0, gt=0, description="First backoff delay in seconds (doubles per retry; `Retry-After` wins)."
    )
    enrichment_max_wait: float = Field(
        120.0,
        ge=0,
        description="Longest `Retry-After` honoured; a service asking for more fails the request with "
        "that reason.",
    )
    enrichment_refresh_days: int = Field(
        30,
        ge=0,
        description="`ingest enrich` looks a paper or researcher up again after this many days (records "
        "older than this are asked about again).",
    )
    affiliation_match_threshold: float = Field(
        90.0,
        ge=0,
        le=100,
        description="Lowest score (0-100) at which a printed affiliation is matched to a ROR institution.",
    )


class SearchSettings(_Section):
    search_fusion: Literal["convex", "rrf"] = Field(
        "convex",
        description="How lexical and dense rankings are fused: `convex` (weighted sum of z-scored scores, "
        "tuned on SciFact) or `rrf` (reciprocal rank fusion).",
    )
    search_dense_weight: float = Field(
        0.45,
        ge=0,
        le=1,
        description="Weight of the dense (embedding) ranking in the fusion; lexical gets the rest "
        "(0.45: BM25 is the stronger single list on SciFact).",
    )
    search_rrf_k: float = Field(
        60.0, ge=0, description="The k of reciprocal rank fusion (`search_fusion=rrf`)."
    )
    search_candidates: int = Field(
        100,
        ge=10,
        le=1000,
        description="Documents each retriever (BM25 papers, BM25 chunks, dense chunks) returns.",
    )
    search_min_similarity: float = Field(
        0.35,
        ge=-1,
        le=1,
        description="Papers found only by the embedding with a lower cosine similarity are dropped (so "
        "nonsense finds nothing). Calibrated for the bundled MiniLM (`python -m evals similarity-floor`); "
        "another embedder needs its own.",
    )
    search_feedback_docs: int = Field(
        0,
        ge=0,
        le=20,
        description="Pseudo-relevance feedback: the query vector moves towards the abstracts of this many "
        "top fused papers and the embedding is searched again (0: off; costs a second k-NN query).",
    )
    search_feedback_weight: float = Field(
        0.5, ge=0, le=5, description="How far pseudo-relevance feedback moves the query vector."
    )
    search_max_results: int = Field(
        200,
        ge=10,
        le=2000,
        description="Most results a query returns across all its pages (facets are counted over them).",
    )
    search_page_size: int = Field(10, ge=1, le=100, description="Results per page unless `size` is given.")
    search_max_page_size: int = Field(
        50, ge=1, le=200, description="Largest `size` a search request may ask for."
    )
    search_max_query_chars: int = Field(
        300, ge=10, le=10_000, description="Longest query accepted (characters); longer ones get a 400."
    )
    search_concurrency: int = Field(
        0,
        ge=0,
        le=256,
        description="Searches one web process runs at once (they are CPU-heavy). 0: one per core.",
    )
    search_queue: int = Field(
        4,
        ge=0,
        le=10_000,
        description="Searches that may wait for a free slot (a few search times of waiting at most); "
        "beyond that a search gets a 503 with `Retry-After` at once, rather than queueing without bound.",
    )
    search_processes: bool = Field(
        True,
        description="Run searches in `WOVEPAPER_SEARCH_CONCURRENCY` processes of their own (at a lower "
        "CPU priority), so their work holds neither the web process's GIL nor a core against `/healthz` "
        "and cached pages; false: in threads of the web process (see Operations, Overload, for what "
        "each costs).",
    )
    search_process_niceness: int = Field(
        10,
        ge=0,
        le=19,
        description="How much the search processes yield the CPU (Unix `nice`): a search waits a "
        "little longer on a busy machine so that `/healthz` and cached pages do not wait behind it. "
        "0: the same priority as the web process.",
    )
    lexical_k1: float = Field(
        1.2, gt=0, description="BM25 k1 (term-frequency saturation) of the lexical index."
    )
    lexical_b: float = Field(
        0.75, ge=0, le=1, description="BM25 b (document-length normalisation) of the lexical index."
    )
    lexical_refresh_seconds: float = Field(
        30.0,
        ge=0,
        description="A changed lexical index is rebuilt at most this often while papers are ingested (0: "
        "after every change).",
    )
    lexical_poll_seconds: float = Field(
        1.0, ge=0, description="How often a process looks on disk for a lexical index another process built."
    )
    lexical_sync_seconds: float = Field(
        60.0,
        gt=0,
        description="How often the indexing worker brings the lexical index in line with the catalogue "
        "(papers imported, changed or deleted by other processes); one worker process does it at a "
        "time.",
    )


class AuthSettings(_Section):
    """Sign-in: sessions, the local sign-in link and the providers. A provider is on when its client
    id is set; see the manual's Sign-in and accounts page (``docs/accounts.md``) for each provider's
    callback URL."""

    secret_key: str = secret(
        description="Secret that keys the session store (session ids are stored as an HMAC of it, so a "
        "copy of the store holds no usable cookie). Empty: a random key kept in `<data_dir>/secret_key` "
        "(development only; production refuses it).",
        required_in_production=True,
        min_chars=32,
    )
    session_idle_minutes: float = Field(
        60 * 24 * 7, gt=0, description="A session unused for this long is signed out (default 7 days)."
    )
    session_absolute_days: float = Field(
        30, gt=0, description="A session ends this long after sign-in however much it is used."
    )
    local_signin: bool = Field(
        True,
        description="Print a one-time local sign-in link at start-up when no provider is configured and "
        "the server binds a loopback address (production refuses it).",
    )
    local_signin_minutes: int = Field(
        60, ge=1, le=24 * 60, description="How long the printed local sign-in link stays valid."
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description='Addresses or networks (JSON list, e.g. `["10.0.0.0/8"]`) of reverse proxies '
        "whose `X-Forwarded-For` is believed; from any other peer the header is ignored.",
    )
    oidc_issuer: str = Field(
        "",
        description="Issuer URL of any OpenID Connect provider (its discovery document is read from "
        "`<issuer>/.well-known/openid-configuration`). Empty: off.",
    )
    oidc_name: str = Field("OpenID Connect", description="Name of that provider on the sign-in page.")
    oidc_client_id: str = Field("", description="Client id registered with that provider.")
    oidc_client_secret: str = secret(description="Client secret registered with that provider.")
    oidc_scopes: str = Field("openid email profile", description="Scopes asked of that provider.")
    github_client_id: str = Field("", description="GitHub OAuth app client id. Empty: GitHub off.")
    github_client_secret: str = secret(description="GitHub OAuth app client secret.")
    github_url: str = Field(
        "https://github.com", description="GitHub's web address (GitHub Enterprise: your server)."
    )
    github_api_url: str = Field(
        "https://api.github.com", description="GitHub's API address (GitHub Enterprise: `<server>/api/v3`)."
    )
    google_client_id: str = Field("", description="Google OAuth client id. Empty: Google off.")
    google_client_secret: str = secret(description="Google OAuth client secret.")
    orcid_client_id: str = Field("", description="ORCID client id. Empty: ORCID off.")
    orcid_client_secret: str = secret(description="ORCID client secret.")
    orcid_issuer: str = Field(
        "https://orcid.org", description="ORCID's issuer (the sandbox: `https://sandbox.orcid.org`)."
    )


class LimitSettings(_Section):
    """Rate limits, as `COUNT/SECONDS`, enforced across processes through Redis when configured (an
    in-process count otherwise). A refused request gets 429 with `Retry-After`."""

    limit_signin: str = Field(
        "20/600", pattern=r"^\d+/\d+$", description="Sign-in attempts per client address."
    )
    limit_api: str = Field(
        "600/60",
        pattern=r"^\d+/\d+$",
        description="JSON API requests per token, person or client address.",
    )
    limit_mcp: str = Field(
        "300/60",
        pattern=r"^\d+/\d+$",
        description="MCP tool calls (`/mcp`) per token, person or client address.",
    )
    limit_chat_requests: str = Field(
        "30/3600", pattern=r"^\d+/\d+$", description="Chat questions per person or token."
    )
    limit_chat_tokens_per_day: int = Field(
        200_000, ge=0, description="LLM tokens (prompt + answer) per person or token per day."
    )
    limit_chat_streams: int = Field(
        2, ge=1, description="Chat answers one person or token may stream at the same time."
    )
    limit_fulltext_per_day: int = Field(
        20,
        ge=0,
        description="Papers one person may ask the full text of per day (each fetches a PDF from arXiv); "
        "asking for a paper already queued or indexed costs nothing. 0: nobody may ask.",
    )

    @staticmethod
    def parse(value: str) -> tuple[int, int]:
        """`"20/600"` → (20, 600)."""
        count, seconds = value.split("/")
        return int(count), int(seconds)


class McpSettings(_Section):
    """The MCP endpoint for agents (`/mcp`)."""

    mcp_max_page_chars: int = Field(
        20_000,
        ge=1_000,
        le=200_000,
        description="Characters of full text one `read_paper_pages` call returns at most (it says where "
        "to continue).",
    )


class LLMSettings(_Section):
    """The language model that writes chat answers: OpenAI or any OpenAI-compatible server (vLLM,
    Ollama, llama.cpp), through the `openai` client only."""

    llm_base_url: str = Field(
        "",
        description="OpenAI-compatible API base URL (`https://api.openai.com/v1`, "
        "`http://127.0.0.1:11434/v1`). Empty: the embedded local llama.cpp server.",
    )
    llm_api_key: str = secret(
        description="API key sent to that server (empty: none; local servers need none)."
    )
    llm_model: str = Field("local", description="Model name sent with every request.")
    llm_context_tokens: int = Field(
        4096, ge=512, description="The model's context window; prompt + answer must fit in it."
    )
    llm_max_answer_tokens: int = Field(400, ge=16, description="Most tokens one answer may have.")
    # Generous by default: the embedded model on a busy 2-core machine reads a ~2k-token prompt in
    # one to two minutes, and a request given up before its first token still occupies llama.cpp's
    # server until the prompt is read (the reader sees the evidence meanwhile).
    llm_timeout_seconds: float = Field(
        300.0, gt=0, description="Seconds before a whole answer (or the condense call) is given up."
    )
    llm_first_token_timeout_seconds: float = Field(
        180.0,
        gt=0,
        description="Seconds to wait for the first token; then the answer is the evidence alone, with a "
        "notice that the model is unavailable (generous: the embedded model reads a ~2k-token prompt "
        "in one to two minutes on a busy 2-core machine).",
    )
    llm_concurrency: int = Field(
        1, ge=1, description="Answers generated at once (llama.cpp serves one at a time)."
    )
    llm_queue: int = Field(
        4, ge=0, description="Answers waiting for the model; beyond that a question gets a busy notice."
    )


class ChatSettings(_Section):
    chat_passage_tokens: int = Field(
        1800, ge=100, description="Token budget of the passages given to the model (best first)."
    )
    chat_passages: int = Field(8, ge=1, le=40, description="Most passages shown and given to the model.")
    chat_min_term_coverage: float = Field(
        0.55,
        ge=0,
        le=1,
        description="Evidence threshold: share of the question's content words (stemmed, each "
        "weighted by its IDF over the full-text chunks) a chunk must contain to count as evidence, "
        "unless its own similarity clears `chat_min_similarity`.",
    )
    chat_min_similarity: float = Field(
        0.5,
        ge=-1,
        le=1,
        description="Evidence threshold: cosine similarity of a chunk (its own, found by the embedding "
        "search) to the question that makes it evidence whatever its words. Nothing clears either: "
        'the fixed "these papers do not answer that" answer, with no LLM call.',
    )
    chat_max_question_chars: int = Field(
        2000, ge=10, description="Longest question accepted; longer gets a 413."
    )
    chat_history_turns: int = Field(
        3, ge=0, description="Earlier question/answer pairs used to condense a follow-up question."
    )
    chat_ping_seconds: float = Field(
        15.0, gt=0, le=15, description="Seconds between comment pings on an idle answer stream."
    )
    chat_warm_up: bool | None = Field(
        None,
        description="Gather the evidence for one question when the app starts (in the background), so "
        "the first reader's key quotes do not wait for the indexes and the embedder to load. Empty: "
        "on, except in `test`.",
    )


class LocalLLMSettings(_Section):
    """The embedded default LLM, used when `WOVEPAPER_LLM_BASE_URL` is empty: llama-cpp-python's
    OpenAI-compatible server, built into the virtualenv in the background, serving a hash-pinned GGUF
    from PyPI, started, supervised and stopped by the web app."""

    local_llm_enabled: bool | None = Field(
        None,
        description="Build, install and run the embedded model when no LLM base URL is set. Off: the chat "
        "answers with the evidence passages only. Empty: on, except in `test` (tests start their own).",
    )
    local_llm_model: Literal["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "smollm2-135m"] = Field(
        "qwen2.5-coder-0.5b",
        description="The GGUF the embedded server serves (sizes, speed, PyPI packages, sha256 and "
        "provenance: the manual's Chat model page, `docs/chat-model.md`).",
    )
    local_llm_threads: int = Field(
        0,
        ge=0,
        description="CPU threads for prompt and generation; 0: every core (up to 8) — background "
        "indexing pauses while the model reads a prompt and writes its answer.",
    )
    local_llm_passage_tokens: int | None = Field(
        None,
        ge=100,
        description="Token budget of the passages the embedded model reads (empty: the model's own, "
        "see `chat/local_models.py`); `WOVEPAPER_CHAT_PASSAGE_TOKENS` is for a configured model.",
    )
    local_llm_passage_sentences: int | None = Field(
        2,
        ge=0,
        description="Sentences kept either side of each passage's key quote for the embedded model "
        "(empty: whole passages).",
    )
    local_llm_context_tokens: int = Field(
        4096,
        ge=512,
        description="The server's context window (`n_ctx`); keep it ≥ `WOVEPAPER_LLM_CONTEXT_TOKENS`.",
    )
    local_llm_port: int = Field(
        0, ge=0, le=65535, description="Loopback port of the server. 0: a free port chosen at start."
    )
    local_llm_dir: Path | None = Field(
        None, description="Where the joined model file and the server's logs live. Empty: `<data_dir>/llm`."
    )
    local_llm_wheelhouse: Path | None = Field(
        None,
        description="A folder holding the model's wheels, installed from there instead of PyPI (the "
        "same sha256 pins apply): offline installs, and the tests (`make test` fills "
        "`.venv/model-wheels`).",
    )
    local_llm_build: Literal["native", "portable"] = Field(
        "native",
        description="How llama.cpp is compiled: `native` for this CPU (its wheel kept in "
        "`~/.cache/wovepaper/llama-wheels/<cpu key>/`, never used on another CPU), `portable` for any "
        "x86-64 CPU with AVX2 (slower prompts).",
    )
    local_llm_start_seconds: float = Field(
        300.0, gt=0, description="Seconds the server may take to load the model before it is restarted."
    )


class Settings:
    """All sections together; each is built on first use so a bad value fails where it is read."""

    @cached_property
    def core(self) -> CoreSettings:
        return CoreSettings()

    @cached_property
    def database(self) -> DatabaseSettings:
        return DatabaseSettings()

    @cached_property
    def server(self) -> ServerSettings:
        return ServerSettings()

    @cached_property
    def pages(self) -> PagesSettings:
        return PagesSettings()

    @cached_property
    def redis(self) -> RedisSettings:
        return RedisSettings()

    @cached_property
    def ingest(self) -> IngestSettings:
        return IngestSettings()

    @cached_property
    def arxiv(self) -> ArxivSettings:
        return ArxivSettings()

    @cached_property
    def parser(self) -> ParserSettings:
        return ParserSettings()

    @cached_property
    def chunks(self) -> ChunkSettings:
        return ChunkSettings()

    @cached_property
    def enrichment(self) -> EnrichmentSettings:
        return EnrichmentSettings()

    @cached_property
    def embedding(self) -> EmbeddingSettings:
        return EmbeddingSettings()

    @cached_property
    def chroma(self) -> ChromaSettings:
        return ChromaSettings()

    @cached_property
    def worker(self) -> WorkerSettings:
        return WorkerSettings()

    @cached_property
    def search(self) -> SearchSettings:
        return SearchSettings()

    @cached_property
    def auth(self) -> AuthSettings:
        return AuthSettings()

    @cached_property
    def limits(self) -> LimitSettings:
        return LimitSettings()

    @cached_property
    def mcp(self) -> McpSettings:
        return McpSettings()

    @cached_property
    def llm(self) -> LLMSettings:
        return LLMSettings()

    @cached_property
    def chat(self) -> ChatSettings:
        return ChatSettings()

    @cached_property
    def local_llm(self) -> LocalLLMSettings:
        return LocalLLMSettings()

    @property
    def local_llm_enabled(self) -> bool:
        if self.local_llm.local_llm_enabled is not None:
            return self.local_llm.local_llm_enabled
        return self.core.environment != "test"

    @property
    def chat_warm_up(self) -> bool:
        if self.chat.chat_warm_up is not None:
            return self.chat.chat_warm_up
        return self.core.environment != "test"

    @property
    def fetched_pdf_dir(self) -> Path:
        """PDFs fetched from arXiv on request, named by their sha256 (the page reader draws them)."""
        return self.core.data_dir / "pdfs" / "fetched"

    @property
    def foreground_dir(self) -> Path:
        """Claims of foreground work that background indexing yields to (coordination.foreground)."""
        return self.core.data_dir / "foreground"

    @property
    def local_llm_dir(self) -> Path:
        return self.local_llm.local_llm_dir or self.core.data_dir / "llm"

    @property
    def chroma_path(self) -> Path:
        return self.chroma.chroma_path or self.core.data_dir / "chroma"

    @property
    def database_url(self) -> str:
        if self.database.database_url:
            return self.database.database_url
        return f"sqlite:///{self.core.data_dir / 'catalogue.sqlite3'}"

    @property
    def public_url(self) -> str:
        return (self.server.public_url or f"http://{self.server.host}:{self.server.port}").rstrip("/")

    @property
    def debug_views(self) -> bool:
        if self.core.debug_views is not None:
            return self.core.debug_views
        return self.core.environment == "development"


# Each section's attribute of Settings and its class, in Settings' order (the manual's tables follow it).
_SECTIONS: dict[str, type[_Section]] = {
    name: get_type_hints(member.func)["return"]
    for name, member in vars(Settings).items()
    if isinstance(member, cached_property)
}
SECTIONS = tuple(_SECTIONS.values())


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def is_loopback(host: str) -> bool:
    """Whether a host name or address (IPv6 with or without brackets) is this machine's loopback:
    what the local sign-in link (``server.host``) and a local PDF mirror (``arxiv_pdf_url``) ask."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def log_to_console(logger: logging.Logger) -> None:
    """Show ``logger``'s progress lines (info and up) on stderr when nothing else configured logging
    (the web app runs uvicorn at warning level): the indexing worker's, the embedded LLM runtime's."""
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    if not logging.getLogger().handlers and not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        logger.addHandler(handler)
        logger.propagate = False


# -- production mode -----------------------------------------------------------------------------

# Values people leave in example configurations instead of a real credential.
_PLACEHOLDER = re.compile(
    r"^(?:change[-_ ]?me|changeit|replace[-_ ]?me|secret|password|placeholder|todo|tbd|example|dummy|test"
    r"|x+|0+|1234\d*|<.*>|\$\{.*\}|your[-_ ].*|.*[-_]here)$",
    re.IGNORECASE,
)


class UnsafeSettings(RuntimeError):
    """``WOVEPAPER_ENVIRONMENT=production`` with settings that are not safe to serve with."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"refusing to start in production: {len(problems)} unsafe setting(s)\n{lines}")


def production_problems(settings: Settings) -> list[str]:
    """Every reason these settings are unsafe to serve in production (empty outside production).

    The one list of production rules: a new concern (sign-in, chat) adds its checks here, and
    :func:`check_production` refuses to start while any holds."""
    if settings.core.environment != "production":
        return []
    problems = []
    if settings.debug_views:
        problems.append("WOVEPAPER_DEBUG_VIEWS is on: the search ranking view would be public")
    if settings.database.database_echo:
        problems.append("WOVEPAPER_DATABASE_ECHO is on: every SQL statement and its values would be logged")
    if not settings.server.public_url.lower().startswith("https://"):
        shown = settings.server.public_url or f"empty, so {settings.public_url}"
        problems.append(
            f"WOVEPAPER_PUBLIC_URL must be the site's https:// address (it is {shown}): session cookies "
            "would be sent without Secure"
        )
    if "local_signin" in settings.auth.model_fields_set and settings.auth.local_signin:
        problems.append("WOVEPAPER_LOCAL_SIGNIN is on: the local sign-in link is for local development only")
    sections = [getattr(settings, name) for name in _SECTIONS]
    for values in sections:
        for name, field in type(values).model_fields.items():
            extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            if not extra.get("secret"):
                continue
            value = str(getattr(values, name) or "").strip()
            short = len(value) < int(extra.get("min_chars") or 0) or (
                extra.get("min_chars") and len(set(value)) < 8
            )
            if not value and extra.get("required_in_production"):
                problems.append(f"WOVEPAPER_{name.upper()} is not set; production needs the real secret")
            elif value and (_PLACEHOLDER.match(value) or short):
                problems.append(
                    f"WOVEPAPER_{name.upper()} looks like a placeholder, not a secret; use at least "
                    f"{max(int(extra.get('min_chars') or 0), 16)} random characters (e.g. "
                    "`python -c 'import secrets; print(secrets.token_hex(32))'`)"
                )
    return problems


def check_production(settings: Settings) -> None:
    """Raise :class:`UnsafeSettings` listing every problem at once (nothing when there are none)."""
    if problems := production_problems(settings):
        raise UnsafeSettings(problems)
