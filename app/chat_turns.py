"""One chat question, shared by ``POST /api/chat`` and the MCP ``ask`` tool: the question checked
and made into a turn (:func:`chat_turn`), the chat limits it counts against (:func:`admit_question`)
and the finished answer as markdown (:func:`answer_markdown`)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from litestar.connection import ASGIConnection
from litestar.exceptions import ClientException, HTTPException, NotFoundException
from litestar.status_codes import HTTP_413_REQUEST_ENTITY_TOO_LARGE

from app.auth.requester import Actor
from app.auth.wiring import auth_state
from app.ids import body_id
from app.services import Services
from catalog import arxiv_ids
from catalog.db import transaction
from catalog.text import scrub
from chat import conversations
from chat.pipeline import Outcome, Turn
from coordination.limits import LimitExceeded
from coordination.redis import RedisError
from settings import LimitSettings

log = logging.getLogger(__name__)
MAX_SCOPE = 50  # papers one question may be scoped to
SLOT_SECONDS = 60.0  # a stream's slot lapses this long after its process died
DAY = 86_400


class QuestionTooLong(HTTPException):
    status_code = HTTP_413_REQUEST_ENTITY_TOO_LARGE


@dataclass
class ChatQuestion:
    question: str
    conversation_id: int | None = None
    papers: list[str] | None = None


def _scope(papers: list[str] | None) -> tuple[str, ...]:
    if not papers:
        return ()
    if len(papers) > MAX_SCOPE:
        raise ClientException(detail=f"A question may be about at most {MAX_SCOPE} papers.")
    scope = []
    for raw in papers:
        try:
            scope.append(arxiv_ids.canonical(str(raw)))
        except ValueError as exc:
            raise ClientException(detail=f"Not an arXiv id: {str(raw)[:40]!r}.") from exc
    return tuple(dict.fromkeys(scope))


def chat_turn(services: Services, actor: Actor, data: ChatQuestion) -> Turn:
    """The turn ``data`` asks for, checked (413, 400, 404); shared with the MCP ``ask`` tool."""
    conf = services.settings.chat
    question = " ".join(scrub(data.question).split())
    if not question:
        raise ClientException(detail="Ask a question: the question is empty.")
    if len(question) > conf.chat_max_question_chars:
        raise QuestionTooLong(
            detail=f"The question is {len(question)} characters long; the limit is "
            f"{conf.chat_max_question_chars}."
        )
    papers = _scope(data.papers)
    if data.conversation_id is None:
        return Turn(actor.person_id, question, papers)
    conversation_id = body_id(data.conversation_id, "conversation_id")
    with transaction(services.engine) as db:
        if conversations.owned(db, actor.person_id, conversation_id) is None:
            raise NotFoundException(detail="There is no such conversation.")
        history = conversations.history(db, conversation_id, conf.chat_history_turns)
        said = conversations.exchanges(db, conversation_id, conf.chat_history_turns)
    return Turn(actor.person_id, question, papers, conversation_id, tuple(history), tuple(said))


async def admit_question(
    request: ASGIConnection[Any, Any, Any, Any], actor: Actor
) -> Callable[[int], Awaitable[None]]:
    """Apply the chat limits; returns what to call when the answer is over (with its tokens).
    Redis being away fails open, like the API limit: the chat must not go down with it."""
    state = auth_state(request)
    limits = state.settings.limits
    limiter = state.limiter
    assert limiter is not None, "the auth lifespan has not run"
    key = actor.limit_key
    stack = contextlib.AsyncExitStack()
    try:
        await stack.enter_async_context(
            limiter.slot(
                f"chat-streams:{key}", limits.limit_chat_streams, SLOT_SECONDS, "chat answers at once"
            )
        )
        count, seconds = LimitSettings.parse(limits.limit_chat_requests)
        decision = await limiter.hit(f"chat:{key}", count, seconds)
        if not decision.allowed:
            raise LimitExceeded("chat questions", decision.retry_after)
        budget = limits.limit_chat_tokens_per_day
        tokens = await limiter.hit(f"chat-tokens:{key}", budget, DAY, cost=1)
        if not tokens.allowed:
            raise LimitExceeded("chat tokens per day", tokens.retry_after)
    except LimitExceeded:
        await stack.aclose()
        raise
    except RedisError as error:
        await stack.aclose()
        log.warning("chat limits not counted, Redis unavailable: %s", error)

    async def finish(used: int) -> None:
        with anyio.CancelScope(shield=True):
            try:
                if used:
                    await limiter.charge(f"chat-tokens:{key}", DAY, used)
            except RedisError as error:
                log.warning("chat tokens not counted, Redis unavailable: %s", error)
            finally:
                await stack.aclose()

    return finish


def answer_markdown(outcome: Outcome, url: Callable[[str], str] = str) -> str:
    """The answer and its references as markdown; ``url`` makes a site path absolute (MCP)."""
    lines: list[str] = []
    if outcome.quotes:
        lines += ["## From the papers", ""]
        by_key = {p.key: p for p in outcome.passages}
        for quote in outcome.quotes:
            p = by_key[quote.key]
            first, last = (quote.pages[0], quote.pages[-1]) if quote.pages else (None, None)
            page = "" if first is None else f", p. {first}" if first == last else f", pp. {first}–{last}"
            reader = f" · [the page, highlighted]({url(p.reader_url(quote.text, first))})" if first else ""
            lines.append(f"> {quote.text}\n>\n> — [{p.title}]({url(p.paper_url)}){page}{reader}\n")
        lines += ["## Answer", ""]
    lines.append(outcome.answer or outcome.notice or "")
    if outcome.notice and outcome.answer and outcome.notice != outcome.answer:
        lines += ["", f"*{outcome.notice}*"]
    if outcome.note and outcome.answer:
        lines += ["", f"*{outcome.note}*"]
    not_stated = [f for f in outcome.flags if f["kind"] == "not_stated"]
    if not_stated:
        lines += ["", "**Not stated in what they cite** (check these against the quotes):", ""]
        lines += [f"- “{f['text']}” — {f['detail']}" for f in not_stated]
    if outcome.references:
        lines += ["", "## References", ""]
        for ref in outcome.references:
            pages = ", ".join(str(p) for p in ref["pages"])
            where = f", p. {pages}" if pages else ""
            reader = f"[page with the quote]({url(ref['reader_url'])}) · " if ref.get("reader_url") else ""
            title = f"[{ref['title']}]({url(ref['paper_url'])})"
            lines.append(f"{ref['n']}. {title}{where} — {reader}[arXiv PDF]({ref['pdf_url']})")
    elif outcome.passages:
        lines += ["", "## Passages", ""]
        for p in outcome.passages:
            lines.append(
                f"- [{p.title}]({url(p.paper_url)}) p. {', '.join(map(str, p.pages))}: {p.text[:300]}"
            )
    if outcome.unsupported and outcome.answer and not outcome.references:
        lines += ["", "*Unsupported: this answer cites none of the papers.*"]
    return "\n".join(lines) + "\n"
