"""The language model: one client factory and one ``stream`` method (the only chat module that
imports ``openai``).

Every provider is reached through the ``openai`` client: OpenAI itself, or any OpenAI-compatible
server (vLLM, Ollama, llama.cpp's server) by ``base_url``. :class:`LLM` is the seam: the pipeline
only calls ``stream``, so a test can hand it any object with that method (a scripted server behind
the same client is better still: the real client is exercised).

:class:`Queue` bounds how many answers are generated at once (llama.cpp serves one request at a
time and, by default, cuts off the stream in progress when a second arrives) and how many wait;
beyond that :class:`LLMBusy` is raised at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Protocol, cast

import openai
from openai import AsyncStream
from openai.types.chat import ChatCompletionChunk

from chat.context import Budget
from chat.runtime import LocalLLM
from settings import LLMSettings, Settings

# What the client raises when the server is away, slow, refuses or answers nonsense.
_CLIENT_ERRORS: tuple[type[Exception], ...] = (openai.OpenAIError,)


class LLMUnavailable(RuntimeError):
    """The model did not answer (down, slow, misconfigured); the message says how."""


class LLMBusy(LLMUnavailable):
    """Every generation slot is taken and the queue is full."""


class LLM(Protocol):
    def stream(self, messages: list[dict[str, str]], *, max_tokens: int) -> AsyncGenerator[str, None]:
        """Text deltas of the answer (an async generator); closing it closes the upstream stream."""
        ...  # pragma: no cover


class OpenAILLM:
    """Chat completions streamed from an OpenAI-compatible server (temperature 0)."""

    def __init__(self, client: openai.AsyncOpenAI, model: str) -> None:
        self.client = client
        self.model = model

    async def stream(self, messages: list[dict[str, str]], *, max_tokens: int) -> AsyncGenerator[str, None]:
        try:
            created = await self.client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=0,
                stream=True,
            )
            response = cast(AsyncStream[ChatCompletionChunk], created)
        except _CLIENT_ERRORS as exc:
            raise LLMUnavailable(f"the language model did not answer: {_reason(exc)}") from exc
        try:
            async for chunk in response:
                for choice in chunk.choices:
                    if choice.delta and choice.delta.content:
                        yield choice.delta.content
        except _CLIENT_ERRORS as exc:
            raise LLMUnavailable(f"the language model stopped answering: {_reason(exc)}") from exc
        finally:
            # Closing the HTTP response is what makes the server stop generating.
            await response.close()

    async def close(self) -> None:
        await self.client.close()


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def make_llm(settings: LLMSettings, base_url: str) -> OpenAILLM:
    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=settings.llm_api_key or "none",  # local servers need none; the client insists on one
        timeout=settings.llm_timeout_seconds,
        max_retries=0,  # a slow model is reported at once, with the evidence, not retried for minutes
    )
    return OpenAILLM(client, settings.llm_model)


class ModelChoice:
    """The model each chat turn is answered with, and how much it reads: a configured (or given)
    model, else the embedded server once it is ready; ``None`` until then (the chat answers with the
    evidence). A small embedded model reads fewer passages, trimmed around their key quotes, and its
    answers say who drafted them."""

    def __init__(self, settings: Settings, fixed: LLM | None = None, local: LocalLLM | None = None) -> None:
        self.settings = settings
        self.fixed = fixed
        self.local = local
        self._local_client: OpenAILLM | None = None

    def current(self) -> LLM | None:
        if self.fixed is not None:
            return self.fixed
        if self.local is None or self.local.status().state != "ready":
            return None
        if self._local_client is None:
            conf = self.settings.llm.model_copy(update={"llm_model": self.local.model.key})
            self._local_client = make_llm(conf, self.local.base_url)
        return self._local_client

    def budget(self) -> Budget:
        if self.small():
            assert self.local is not None
            conf = self.settings.local_llm
            tokens = conf.local_llm_passage_tokens or self.local.model.passage_tokens
            return Budget(tokens, conf.local_llm_passage_sentences)
        return Budget(self.settings.chat.chat_passage_tokens)

    def small(self) -> bool:
        """Whether the turn is answered by the embedded small model (it reads less)."""
        return self.fixed is None and self.local is not None

    def note(self) -> str | None:
        """What the reader should know about who wrote the answer (None: an operator's model)."""
        if not self.small():
            return None
        assert self.local is not None
        return (
            f"Drafted by a small local model ({self.local.model.title}); it can get numbers and names "
            "wrong. The key quotes above are the papers' own words."
        )

    async def close(self) -> None:
        for client in (self.fixed, self._local_client):
            if isinstance(client, OpenAILLM):
                await client.close()


class Queue:
    """At most ``concurrency`` generations at once, at most ``waiting`` more waiting."""

    def __init__(self, concurrency: int, waiting: int) -> None:
        self.concurrency = concurrency
        self.waiting = waiting
        self._held = 0
        self._queued = 0
        self._semaphore: asyncio.Semaphore | None = None

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        if self._semaphore is None:  # created inside the serving event loop
            self._semaphore = asyncio.Semaphore(self.concurrency)
        if self._held >= self.concurrency and self._queued >= self.waiting:
            raise LLMBusy("the language model is busy with other answers")
        self._queued += 1
        try:
            await self._semaphore.acquire()
        finally:
            self._queued -= 1
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            self._semaphore.release()
