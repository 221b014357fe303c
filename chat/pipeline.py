"""One chat turn: condense → retrieve → evidence → stream → verify → save, as typed events.

:meth:`Chat.answer` yields :class:`Event` s in the order the API sends them:

1. ``evidence`` — the passages (keys, papers, pages, quotes), always first, before any token;
2. ``token`` — text deltas, citations already checked (:class:`chat.citations.KeyFilter`);
3. ``citations`` — the references built by code, the ``unsupported`` mark and the flags;
4. ``done`` — the saved message's id and a notice (no evidence, model unavailable or busy);
   or ``error`` when something unexpected broke (then the stream ends).

The model is not called when no passage clears the evidence threshold (the fixed answer), and any
failure of the model (down, slow to its first token, busy, cut off) ends in an answer made of the
evidence and a notice, never an error. The turn is saved in a ``finally`` shielded from
cancellation, so a reader who leaves mid-answer still finds the question and the partial answer;
leaving closes the model's stream (the server stops generating).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
from sqlalchemy import Engine

from catalog.db import transaction
from chat import conversations
from chat.citations import KeyFilter, references, verify
from chat.context import Evidence, Gathered, KeyedPassage, gather, prompt_passages
from chat.llm import LLM, LLMBusy, LLMUnavailable, ModelChoice, Queue
from chat.quotes import Quote
from coordination.foreground import Foreground
from prompts import render, template
from retrieval.embedder import Embedder
from retrieval.tokens import count_tokens
from settings import Settings

log = logging.getLogger(__name__)

NO_EVIDENCE = (
    "These papers do not answer that: no passage in them matches the question closely enough. "
    "Try other words, or widen the papers the question is about."
)
# The passages match the question's words but not what it names: a model would answer about them.
NOT_NAMED = (
    "These papers do not mention {name}: the passages below are the closest, but they are about something "
    "else, so no answer is drafted from them."
)
UNAVAILABLE = "The language model is unavailable; these are the passages that match."
BUSY = "The language model is busy with other answers; these are the passages that match. Try again soon."
CUT_OFF = "The language model stopped before the answer was complete."
NO_SEARCH = "Search is not available on this server right now."
FAILED = "Something went wrong while answering; the passages shown are still valid."
ECHO = "The answer was stopped: it began to repeat the assistant's instructions."
WORDLESS = "The language model gave no answer in words; the key quotes above are the papers' own sentences."
# Said to the model after a reply without words (a bare key or number), once.
RETRY = "Answer the question in one or two full sentences from the passages, citing their keys like [S1]."
_WORD = re.compile(r"[^\W\d_]{2,}")  # two letters or more: a word, not a key or a number


def worded(text: str) -> bool:
    """Whether an answer says something in words (not only keys, numbers and marks)."""
    return bool(_WORD.search(text))


CONDENSE_TOKENS = 96
WARM_UP_QUESTION = "How is the proposed model trained and evaluated?"
_KEY = re.compile(r"^\[S(\d+)\]", re.MULTILINE)  # a passage's key where the prompt lists it
_RULES = [
    " ".join(line.lstrip("- ").lower().split()) for line in template("system").splitlines() if len(line) >= 40
]


def echoes_rules(text: str) -> bool:
    """Whether the model is reciting the system prompt (a line of it, lower-cased, spaces collapsed)."""
    flat = " ".join(text.lower().split())
    return any(rule[:60] in flat for rule in _RULES)


@dataclass(frozen=True, slots=True)
class Event:
    kind: str  # "evidence" | "token" | "citations" | "done" | "error"
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Turn:
    """A question, checked and authorised by the caller."""

    person_id: int | None  # None: nothing is saved (evaluations)
    question: str
    papers: tuple[str, ...] = ()  # the scope; empty: the whole archive
    conversation_id: int | None = None
    history: tuple[tuple[str, str], ...] = ()  # earlier (role, text), oldest first
    # Earlier exchanges as the model saw them (user message sent, reply generated), oldest first.
    exchanges: tuple[tuple[str, str], ...] = ()


@dataclass
class Outcome:
    """What a turn produced, filled in as it runs (the caller reads it afterwards)."""

    conversation_id: int | None = None
    message_id: int | None = None
    query: str = ""
    answer: str = ""
    passages: list[KeyedPassage] = field(default_factory=list)
    quotes: list[Quote] = field(default_factory=list)  # key quotes, best first (no model involved)
    note: str | None = None  # what wrote the answer, when the reader should know (a small local model)
    prompt: str = ""  # the user message the model was sent, and its reply as generated (for follow-ups)
    reply: str = ""
    references: list[dict[str, Any]] = field(default_factory=list)
    flags: list[dict[str, str]] = field(default_factory=list)
    unsupported: bool = False  # a model answer that cites nothing (set by the checks)
    notice: str | None = None
    tokens: int = 0  # prompt + answer tokens sent to and received from the model
    llm_called: bool = False
    evidence_seconds: float | None = None
    first_token_seconds: float | None = None


class Chat:
    """Chat turns over retrieval's evidence and a language model, all handed in by the caller (the
    app's composition root, an evaluation, a benchmark)."""

    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        evidence: Evidence | None,
        models: ModelChoice,
        embedder: Embedder | None = None,
        queue: Queue | None = None,
        foreground: Foreground | None = None,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.evidence = evidence
        self.models = models  # asked per turn: the embedded model may become ready (or go) at any time
        self.embedder = embedder  # key quotes and claim checks embed sentences with it
        # While a local model answers, background indexing on this machine yields it the cores.
        self.foreground = foreground or Foreground(settings.foreground_dir)
        conf = settings.llm
        self.queue = queue or Queue(conf.llm_concurrency, conf.llm_queue)

    def warm_up(self) -> bool:
        """Gather the evidence for one question and drop it: the lexical index, the embedder's
        session and the catalogue are loaded before the first reader asks. Whether it went through
        (a failure is logged: the first question then pays for the loading)."""
        if self.evidence is None:
            return False
        try:
            budget = self.models.budget()
            gather(self.evidence, WARM_UP_QUESTION, [], self.settings.chat, budget, self.embedder)
        except Exception:
            log.warning("the chat's warm-up failed", exc_info=True)
            return False
        return True

    async def answer(self, turn: Turn, outcome: Outcome | None = None) -> AsyncIterator[Event]:
        out = outcome if outcome is not None else Outcome()
        started = time.perf_counter()
        saved = False
        try:
            if turn.person_id is None:
                out.conversation_id = None
            elif turn.conversation_id is None:
                out.conversation_id = await anyio.to_thread.run_sync(self._create, turn)
            else:
                out.conversation_id = turn.conversation_id
            llm = self.models.current()
            out.query = await self._query(llm, turn, out)
            # The key quotes are promised within a second: background indexing on this machine
            # yields the cores while the evidence is gathered, whatever model answers after.
            with self._claim("evidence"):
                found = await self._retrieve(out.query, turn.papers, turn.exchanges, out)
            passages = out.passages = found.passages
            out.quotes = found.quotes
            out.evidence_seconds = time.perf_counter() - started
            yield Event(
                "evidence",
                {
                    "conversation_id": out.conversation_id,
                    "question": turn.question,
                    "passages": [p.to_json() for p in passages],
                    "quotes": [q.to_json() for q in out.quotes],
                },
            )
            read = [p for p in passages if p.read]
            if not passages:
                out.notice = out.notice or NO_EVIDENCE
                out.answer = out.notice
            elif found.unnamed:
                out.notice = out.answer = NOT_NAMED.format(name=found.unnamed)
            elif llm is None:
                out.notice = UNAVAILABLE
            else:
                # Closed explicitly, so a reader leaving between two tokens closes the model's stream now.
                async with contextlib.aclosing(self._generate(llm, turn, read, out, started)) as tokens:
                    async for event in tokens:
                        yield event
            yield Event(
                "citations",
                {
                    # The answer as checked: citations attributed or moved to the passage that
                    # states a sentence, numbered as the references are (the stream had the model's).
                    "answer": out.answer,
                    "references": out.references,
                    "unsupported": out.unsupported,
                    "flags": out.flags,
                    "note": out.note,
                },
            )
            await self._save(turn, out)
            saved = True
            yield Event(
                "done",
                {"conversation_id": out.conversation_id, "message_id": out.message_id, "notice": out.notice},
            )
        except Exception:
            log.exception("a chat turn failed")
            out.notice = FAILED
            yield Event("error", {"message": FAILED})
        finally:
            if not saved and out.conversation_id is not None:
                # The reader left (cancelled) or something broke: keep what there is.
                with contextlib.suppress(Exception):
                    await self._save(turn, out)

    # -- steps ------------------------------------------------------------------------------------

    def _create(self, turn: Turn) -> int:
        assert turn.person_id is not None
        with transaction(self.engine) as db:
            return conversations.create(db, turn.person_id, turn.question).id

    async def _query(self, llm: LLM | None, turn: Turn, out: Outcome) -> str:
        """What to retrieve for: the question; for a follow-up, the question condensed by the model
        with the conversation — or, for a small model that rereads the conversation from its prompt
        cache (a condensing call would evict it), the previous question and this one together."""
        if not turn.history or llm is None:
            return turn.question
        if self.models.small():
            asked = [text for role, text in turn.history if role == "user"]
            return f"{asked[-1]} {turn.question}" if asked else turn.question
        return await self._condense(llm, turn, out)

    async def _condense(self, llm: LLM, turn: Turn, out: Outcome) -> str:
        """The follow-up as a standalone question (one short call); the question itself if the
        model does not answer in time or answers nonsense."""
        lines = [
            f"{'User' if role == 'user' else 'Assistant'}: {' '.join(text.split())[:600]}"
            for role, text in turn.history
        ]
        prompt = render(template("condense"), history="\n".join(lines), question=turn.question)
        messages = [{"role": "user", "content": prompt}]
        parts: list[str] = []
        try:
            async with self.queue.turn():
                out.llm_called = True
                async with asyncio.timeout(self.settings.llm.llm_first_token_timeout_seconds):
                    async with contextlib.aclosing(
                        llm.stream(messages, max_tokens=CONDENSE_TOKENS)
                    ) as stream:
                        async for delta in stream:
                            parts.append(delta)
        except (LLMUnavailable, TimeoutError) as exc:
            log.info("condensing skipped: %s", exc)
            return turn.question
        out.tokens += count_tokens(prompt) + count_tokens("".join(parts))
        condensed = " ".join("".join(parts).split()).strip().strip('"')
        if not condensed or len(condensed) > self.settings.chat.chat_max_question_chars:
            return turn.question
        return condensed

    async def _retrieve(
        self, query: str, papers: Sequence[str], exchanges: Sequence[tuple[str, str]], out: Outcome
    ) -> Gathered:
        if self.evidence is None:
            out.notice = NO_SEARCH
            return Gathered([], [])
        budget = self.models.budget()
        first = 1 + max((int(n) for u, _ in exchanges for n in _KEY.findall(u)), default=0)
        found = await anyio.to_thread.run_sync(
            partial(gather, first_key=first),
            self.evidence,
            query,
            list(papers),
            self.settings.chat,
            budget,
            self.embedder,
        )
        # What does not fit the model's context beside the answer is not given to it, nor shown
        # (but for the passages shown only for their key quotes, which the model never reads).
        limit = self.settings.llm.llm_context_tokens - self.settings.llm.llm_max_answer_tokens
        read = found.read
        while len(read) > 1 and self._prompt_tokens(query, read, exchanges) > limit:
            read = read[:-1]
        passages = read + [p for p in found.passages if not p.read]
        kept = {p.key for p in passages}
        return Gathered(passages, [q for q in found.quotes if q.key in kept], found.unnamed)

    def _messages(
        self, question: str, passages: Sequence[KeyedPassage], exchanges: Sequence[tuple[str, str]] = ()
    ) -> list[dict[str, str]]:
        """System rules, earlier exchanges word for word (the server's prompt cache holds them), then
        this question with its passages."""
        messages = [{"role": "system", "content": template("system")}]
        for sent, reply in exchanges:
            messages += [{"role": "user", "content": sent}, {"role": "assistant", "content": reply}]
        content = render(template("answer"), passages=prompt_passages(passages), question=question)
        return [*messages, {"role": "user", "content": content}]

    def _prompt_tokens(
        self, question: str, passages: Sequence[KeyedPassage], exchanges: Sequence[tuple[str, str]] = ()
    ) -> int:
        return sum(count_tokens(m["content"]) + 4 for m in self._messages(question, passages, exchanges))

    async def _generate(
        self, llm: LLM, turn: Turn, passages: list[KeyedPassage], out: Outcome, started: float
    ) -> AsyncGenerator[Event, None]:
        exchanges = self._fitting(turn.exchanges, out.query, passages)
        messages = self._messages(out.query, passages, exchanges)
        out.prompt = messages[-1]["content"]
        out.tokens += self._prompt_tokens(out.query, passages, exchanges)
        keys = KeyFilter([p.key for p in passages])
        async for event in self._reply(llm, messages, keys, out, started):
            yield event
        if not out.notice and not worded(out.answer):
            # A small model sometimes answers with a bare key or number, copying the papers' own
            # reference marks ("[15]"). Asked once more, right after its reply, it usually says it
            # in a sentence; the server's prompt cache makes that a few tokens' work.
            log.info("a reply without words (%r): asked again", out.reply[:80])
            nudge = [{"role": "assistant", "content": out.reply}, {"role": "user", "content": RETRY}]
            out.tokens += count_tokens(RETRY)
            out.answer = ""
            keys = KeyFilter([p.key for p in passages])
            async for event in self._reply(llm, messages + nudge, keys, out, started):
                yield event
        if out.notice == ECHO:
            out.answer = ""
            return
        if not out.notice and not worded(out.answer):
            out.answer = ""
            out.notice = WORDLESS
            return
        if not out.answer.strip():
            out.answer = ""
            return
        # Attribution embeds the answer's and the passages' sentences: CPU work, off the loop.
        checked = await anyio.to_thread.run_sync(verify, out.answer, passages, keys.numbers, self.embedder)
        out.answer = checked.answer
        out.references = references(passages, checked.numbers, out.quotes)
        out.flags = [f.to_json() for f in checked.flags]
        out.unsupported = checked.unsupported
        out.note = self.models.note()

    async def _reply(
        self,
        llm: LLM,
        messages: list[dict[str, str]],
        keys: KeyFilter,
        out: Outcome,
        started: float,
    ) -> AsyncGenerator[Event, None]:
        """Stream the model's reply to ``messages`` into ``out.answer`` (keys rewritten by ``keys``).
        Nothing is shown until the reply has a word: a bare "[1] 128" is asked again or given up,
        and what the reader saw would have to be taken back."""
        parts: list[str] = []
        shown = 0  # how much of out.answer the reader has
        conf = self.settings.llm
        try:
            async with self.queue.turn():
                out.llm_called = True
                async with (
                    self._foreground("answer"),
                    contextlib.aclosing(
                        llm.stream(messages, max_tokens=conf.llm_max_answer_tokens)
                    ) as stream,
                ):
                    async with asyncio.timeout(conf.llm_first_token_timeout_seconds):
                        delta = await anext(stream, None)
                    while delta is not None:
                        parts.append(delta)
                        if echoes_rules("".join(parts)):
                            out.notice = ECHO
                            break  # closing the stream stops the model
                        out.answer += keys.feed(delta)
                        # once a word is shown every later token is (no need to look again)
                        if len(out.answer) > shown and (shown or worded(out.answer)):
                            out.first_token_seconds = out.first_token_seconds or time.perf_counter() - started
                            yield Event("token", {"text": out.answer[shown:]})
                            shown = len(out.answer)
                        delta = await anext(stream, None)
        except LLMBusy:
            out.notice = BUSY
        except (LLMUnavailable, TimeoutError) as exc:
            log.warning(
                "the language model failed: %s",
                str(exc) or f"no token within {conf.llm_first_token_timeout_seconds:g} s",
            )
            out.notice = CUT_OFF if out.answer.strip() else UNAVAILABLE
        out.tokens += count_tokens("".join(parts))
        out.reply = "".join(parts)
        if out.notice == ECHO:
            return
        out.answer += keys.finish()
        if len(out.answer) > shown and (shown or worded(out.answer) or out.notice):
            out.first_token_seconds = out.first_token_seconds or time.perf_counter() - started
            yield Event("token", {"text": out.answer[shown:]})

    @contextlib.asynccontextmanager
    async def _foreground(self, what: str) -> AsyncIterator[None]:
        """A claim on the cores while a local model works (nothing for a remote one)."""
        with self._claim(what) if self.models.small() else contextlib.nullcontext():
            yield

    def _claim(self, what: str) -> contextlib.AbstractContextManager[None]:
        return self.foreground.claim(what) if self.foreground is not None else contextlib.nullcontext()

    def _fitting(
        self, exchanges: Sequence[tuple[str, str]], question: str, passages: Sequence[KeyedPassage]
    ) -> list[tuple[str, str]]:
        """The latest earlier exchanges that fit the model's context beside this prompt and the
        answer (the oldest go first)."""
        limit = self.settings.llm.llm_context_tokens - self.settings.llm.llm_max_answer_tokens
        kept = list(exchanges)
        while kept and self._prompt_tokens(question, passages, kept) > limit:
            kept = kept[1:]
        return kept

    async def _save(self, turn: Turn, out: Outcome) -> None:
        if out.conversation_id is None:
            return
        numbers = {r["key"]: r["n"] for r in out.references}
        details = {
            "references": out.references,
            "passages": [p.to_json(numbers.get(p.key)) for p in out.passages],
            "quotes": [q.to_json(numbers.get(q.key)) for q in out.quotes],
            "note": out.note,
            "prompt": out.prompt,
            "reply": out.reply,
            "flags": out.flags,
            "unsupported": out.unsupported,
            "notice": out.notice,
            "papers": list(turn.papers),
        }
        text = out.answer or out.notice or ""

        def save() -> int:
            with transaction(self.engine) as db:
                assert out.conversation_id is not None
                return conversations.add_turn(
                    db, out.conversation_id, turn.question, text, details, out.tokens
                ).id

        with anyio.CancelScope(shield=True):
            out.message_id = await anyio.to_thread.run_sync(save)
