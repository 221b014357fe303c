"""The chat API: ``POST /api/chat`` (a streamed answer) and the conversations of the requester.

``POST /api/chat`` takes ``{"question", "conversation_id", "papers"}`` from a signed-in session
(with the CSRF header) or a bearer token with the ``chat`` scope, and answers as the client asks:

- ``text/event-stream`` (the default): events ``evidence``, ``token``…, ``citations``, ``done`` (or
  ``error``), each a JSON ``data:`` line; a ``: ping`` comment when nothing was sent for
  ``chat_ping_seconds``; ``X-Accel-Buffering: no`` and no compression, so proxies pass tokens on as
  they come. A client that disconnects cancels the turn: the model's stream is closed, and what was
  answered so far is saved.
- ``application/json`` or ``text/markdown``: the finished answer with its references.

Before anything runs: a question over ``chat_max_question_chars`` is a 413; a conversation that
is not the requester's a 404; the per-person (or per-token) limits — concurrent answers, questions
per window, tokens per day — a 429 with ``Retry-After`` (see :mod:`coordination.limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from litestar import Controller, HttpMethod, Request, Response, delete, get, patch, post, route
from litestar.connection import ASGIConnection
from litestar.exceptions import ClientException, HTTPException, NotFoundException
from litestar.handlers.base import BaseRouteHandler
from litestar.openapi.spec import OpenAPI, OpenAPIMediaType, OpenAPIResponse, Schema
from litestar.openapi.spec.enums import OpenAPIType
from litestar.params import FromPath, JSONBody
from litestar.response import Stream
from litestar.status_codes import HTTP_204_NO_CONTENT, HTTP_415_UNSUPPORTED_MEDIA_TYPE
from litestar.types import ControllerRouterHandler

from app.auth.guards import InsufficientScope, SignInRequired, actor_of, session_or_token
from app.chat_turns import ChatQuestion, QuestionTooLong, admit_question, answer_markdown, chat_turn
from app.ids import path_id
from app.negotiation import accept_qualities, is_json
from app.rendering import MARKDOWN_MEDIA_TYPE
from app.services import AppServices
from catalog.db import transaction
from catalog.papers import paper_summaries
from catalog.text import VISIBLE_PATTERN
from chat import conversations
from chat.pipeline import Event, Outcome
from settings import Settings

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Content-Encoding": "identity"}


@dataclass
class ConversationTitle:
    title: str


class NotJson(HTTPException):
    status_code = HTTP_415_UNSUPPORTED_MEDIA_TYPE


def json_body(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """A JSON endpoint reads JSON only: another content type is a 415 before the body is read
    (a page elsewhere cannot post it as a "simple" form or text request)."""
    if not is_json(connection.headers.get("content-type", "")):
        raise NotJson(detail="Send the body as JSON (Content-Type: application/json).")


def _format(request: Request[Any, Any, Any]) -> str:
    qualities = accept_qualities(request.headers.get("accept", ""))
    stream = qualities.get("text/event-stream", 0.0)
    if qualities.get("application/json", 0.0) > stream and qualities.get(
        "application/json", 0.0
    ) >= qualities.get("text/markdown", 0.0):
        return "json"
    if qualities.get("text/markdown", 0.0) > stream:
        return "markdown"
    return "sse"


def _sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def _stream(
    events: AsyncIterator[Event], ping: float, finish: Callable[[], Awaitable[None]]
) -> AsyncIterator[bytes]:
    """The events as SSE, with a ping comment whenever ``ping`` seconds pass without one. The turn
    runs in its own task so a ping can go out while it waits for the model; when the client goes
    away (this generator is cancelled) that task is cancelled and awaited: the model's stream is
    closed and the turn saved before the limits are released."""
    pending: asyncio.Future[Event | None] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(events, None))
            done, _ = await asyncio.wait({pending}, timeout=ping)
            if not done:
                yield b": ping\n\n"
                continue
            event = pending.result()
            pending = None
            if event is None:
                return
            yield _sse(event.kind, event.data)
    finally:
        with anyio.CancelScope(shield=True):
            if pending is not None and not pending.done():
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending
            with contextlib.suppress(Exception):
                await events.aclose()  # type: ignore[attr-defined]
            await finish()


@post(
    "/api/chat",
    guards=[session_or_token("chat"), json_body],
    tags=["chat"],
    summary="Ask the papers a question",
    description="Evidence first, then a streamed answer whose citations are checked by code. Body "
    '`{"question", "conversation_id", "papers"}` (`papers`: arXiv ids the question is about; '
    "empty: the whole archive). Answers `text/event-stream` (events `evidence`, `token`, `citations`, "
    "`done`, `error`) unless `Accept` prefers `application/json` or `text/markdown`. 413 for a "
    "question over the length limit, 404 for a conversation that is not yours, 429 with "
    "`Retry-After` over the chat limits.",
    raises=[SignInRequired, InsufficientScope, NotFoundException, QuestionTooLong, NotJson],
    status_code=200,
)
async def ask(
    request: Request[Any, Any, Any], services: AppServices, data: JSONBody[ChatQuestion]
) -> Response[Any]:
    actor = actor_of(request)
    turn = await anyio.to_thread.run_sync(chat_turn, services, actor, data)
    finish = await admit_question(request, actor)
    outcome = Outcome()
    wanted = _format(request)
    if wanted == "sse":
        events = services.chat.answer(turn, outcome)
        return Stream(
            _stream(events, services.settings.chat.chat_ping_seconds, lambda: finish(outcome.tokens)),
            media_type="text/event-stream",
            headers=SSE_HEADERS,
        )
    try:
        async for _event in services.chat.answer(turn, outcome):
            pass
    finally:
        await finish(outcome.tokens)
    if wanted == "markdown":
        return Response(answer_markdown(outcome), media_type=MARKDOWN_MEDIA_TYPE)
    numbers = {r["key"]: r["n"] for r in outcome.references}
    return Response(
        {
            "conversation_id": outcome.conversation_id,
            "message_id": outcome.message_id,
            "answer": outcome.answer or outcome.notice or "",
            "references": outcome.references,
            "passages": [p.to_json() for p in outcome.passages],
            "quotes": [q.to_json(numbers.get(q.key)) for q in outcome.quotes],
            "flags": outcome.flags,
            "not_stated": sum(f["kind"] == "not_stated" for f in outcome.flags),
            "unsupported": outcome.unsupported,
            "notice": outcome.notice,
            "note": outcome.note,
        }
    )


# -- conversations ---------------------------------------------------------------------------------


def _conversation_id(ref: str) -> tuple[int, bool]:
    """``"12"`` → (12, False); ``"12.md"`` → (12, True); anything else is not found."""
    number, markdown = (ref[:-3], True) if ref.endswith(".md") else (ref, False)
    return path_id(number, "conversation"), markdown


async def _in_transaction(services: AppServices, work: Callable[[Any], Any]) -> Any:
    def run() -> Any:
        with transaction(services.engine) as db:
            return work(db)

    return await anyio.to_thread.run_sync(run)


@get(
    "/api/chat/conversations",
    guards=[session_or_token("chat")],
    tags=["chat"],
    summary="Your conversations, newest first",
    raises=[SignInRequired, InsufficientScope],
)
async def list_conversations(request: Request[Any, Any, Any], services: AppServices) -> list[dict[str, Any]]:
    actor = actor_of(request)
    found = await _in_transaction(services, lambda db: conversations.listing(db, actor.person_id))
    return [
        {"id": c.id, "title": c.title, "updated_at": c.updated_at.isoformat(), "messages": c.messages}
        for c in found
    ]


def _message_json(m: conversations.Message) -> dict[str, Any]:
    details = m.details or {}
    return {
        "id": m.id,
        "role": m.role,
        "text": m.text,
        "references": details.get("references", []),
        "passages": details.get("passages", []),
        "quotes": details.get("quotes", []),
        "note": details.get("note"),
        "flags": details.get("flags", []),
        "unsupported": bool(details.get("unsupported", False)),
        "notice": details.get("notice"),
        "created_at": m.created_at.isoformat(),
    }


def _conversation_markdown(title: str, messages: list[dict[str, Any]]) -> str:
    lines = [f"# {title}", ""]
    for m in messages:
        if m["role"] == "user":
            lines += [f"**Question:** {m['text']}", ""]
            continue
        lines += [m["text"], ""]
        for ref in m["references"]:
            pages = ", ".join(str(p) for p in ref["pages"])
            reader = f"{ref['reader_url']} · " if ref.get("reader_url") else ""
            lines.append(
                f"{ref['n']}. {ref['title']}{', p. ' + pages if pages else ''} — {reader}{ref['pdf_url']}"
            )
        lines.append("")
    return "\n".join(lines)


class ConversationController(Controller):
    """One conversation: GET, PATCH and DELETE. Litestar builds a path's automatic ``OPTIONS``
    answer with the first handler registered for it, so its ``Allow`` would name GET alone; this
    route answers ``OPTIONS`` itself (registered first: handlers go in by name)."""

    path = "/api/chat/conversations/{ref:str}"

    @route("/", http_method=[HttpMethod.OPTIONS], include_in_schema=False)
    async def allow(self, ref: FromPath[str]) -> Response[None]:
        return Response(
            None, status_code=HTTP_204_NO_CONTENT, headers={"Allow": "DELETE, GET, OPTIONS, PATCH"}
        )

    @get(
        "/",
        guards=[session_or_token("chat")],
        tags=["chat"],
        summary="One of your conversations with its messages (`<id>.md`: as markdown)",
        raises=[SignInRequired, InsufficientScope, NotFoundException],
    )
    async def conversation(
        self, request: Request[Any, Any, Any], services: AppServices, ref: FromPath[str]
    ) -> Response[Any]:
        actor = actor_of(request)
        conversation_id, markdown = _conversation_id(ref)

        def read(db: Any) -> tuple[str, list[dict[str, Any]], list[dict[str, str]]] | None:
            found = conversations.owned(db, actor.person_id, conversation_id)
            if found is None:
                return None
            stored = conversations.messages(db, conversation_id)
            # Reopened, a conversation goes on about the papers its last answer was scoped to.
            answers = [m for m in stored if m.role == "assistant"]
            scoped = (answers[-1].details or {}).get("papers", []) if answers else []
            scope = [{"arxiv_id": p.arxiv_id, "title": p.title} for p in paper_summaries(db, scoped)]
            return found.title, [_message_json(m) for m in stored], scope

        result = await _in_transaction(services, read)
        if result is None:
            raise NotFoundException(detail="There is no such conversation.")
        title, messages, scope = result
        if markdown:
            return Response(_conversation_markdown(title, messages), media_type=MARKDOWN_MEDIA_TYPE)
        return Response({"id": conversation_id, "title": title, "messages": messages, "scope": scope})

    @patch(
        "/",
        guards=[session_or_token("chat"), json_body],
        tags=["chat"],
        summary="Rename one of your conversations",
        raises=[SignInRequired, InsufficientScope, NotFoundException, NotJson],
    )
    async def rename_conversation(
        self,
        request: Request[Any, Any, Any],
        services: AppServices,
        ref: FromPath[str],
        data: JSONBody[ConversationTitle],
    ) -> dict[str, Any]:
        actor = actor_of(request)
        conversation_id, markdown = _conversation_id(ref)
        # Cleaned as it is stored (no invisible format characters), so the answer names what is kept.
        title = conversations.title_for(data.title)
        if not title:
            raise ClientException(detail="A title cannot be empty (nor only invisible characters).")
        if markdown or not await _in_transaction(
            services, lambda db: conversations.rename(db, actor.person_id, conversation_id, title)
        ):
            raise NotFoundException(detail="There is no such conversation.")
        return {"id": conversation_id, "title": title}

    @delete(
        "/",
        guards=[session_or_token("chat")],
        tags=["chat"],
        summary="Delete one of your conversations",
        raises=[SignInRequired, InsufficientScope, NotFoundException],
        status_code=HTTP_204_NO_CONTENT,
    )
    async def delete_conversation(
        self, request: Request[Any, Any, Any], services: AppServices, ref: FromPath[str]
    ) -> None:
        actor = actor_of(request)
        conversation_id, markdown = _conversation_id(ref)
        if markdown or not await _in_transaction(
            services, lambda db: conversations.remove(db, actor.person_id, conversation_id)
        ):
            raise NotFoundException(detail="There is no such conversation.")


QUESTION_PATTERN = r"[^\s\x00-\x1f\x7f]"  # what chat_turn keeps of a question: not blank


def document_chat(schema: OpenAPI, settings: Settings) -> None:
    """Write what the chat API enforces into the OpenAPI schema (called once, before it is first
    served): a question has a visible character and at most ``chat_max_question_chars``, a title
    a visible character; ``POST /api/chat`` answers an event stream, JSON or markdown."""
    components = (schema.components.schemas or {}) if schema.components else {}
    question = components["ChatQuestion"].properties or {}
    assert isinstance(question["question"], Schema)
    question["question"].min_length = 1
    question["question"].max_length = settings.chat.chat_max_question_chars
    question["question"].pattern = QUESTION_PATTERN
    title = (components["ConversationTitle"].properties or {})["title"]
    assert isinstance(title, Schema)
    title.min_length = 1
    title.pattern = VISIBLE_PATTERN
    operation = (schema.paths or {})["/api/chat"].post
    assert operation is not None and operation.responses is not None
    answered = operation.responses["200"]
    assert isinstance(answered, OpenAPIResponse)
    text = Schema(type=OpenAPIType.STRING)
    event = Schema(  # each event of the stream (a ``: ping`` comment is none)
        type=OpenAPIType.OBJECT,
        properties={
            "event": Schema(
                type=OpenAPIType.STRING, enum=["evidence", "token", "citations", "done", "error"]
            ),
            "data": Schema(type=OpenAPIType.STRING, content_media_type="application/json"),
        },
        required=["event", "data"],
    )
    answered.content = {
        "text/event-stream": OpenAPIMediaType(schema=event),
        **(answered.content or {}),
        "text/markdown": OpenAPIMediaType(schema=text),
    }


ROUTE_HANDLERS: list[ControllerRouterHandler] = [ask, list_conversations, ConversationController]
