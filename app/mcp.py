"""The MCP endpoint for agents at ``/mcp``: the official MCP SDK over streamable HTTP (the only
module that imports ``mcp``).

- **Stateless, JSON answers.** Every POST carries its JSON-RPC message and gets the answer in the
  same response; no session is kept, so any replica serves any call.
- **Mounted in Litestar.** :func:`mcp_endpoint` hands ``/mcp`` to the SDK's Starlette app unchanged.
  A mounted app's own lifespan never runs, so the app's lifespan runs the SDK's session manager
  (:func:`lifespan`). The SDK checks the ``Host`` (and ``Origin``) header against
  ``WOVEPAPER_PUBLIC_URL``'s (DNS-rebinding protection).
- **No cookies.** The route is ``AUTH_OPT="bearer"``: the requester is a bearer token's owner or
  anonymous, never a browser session, and the ``Cookie`` header is not passed on. CSRF, which
  guards what cookies carry, does not apply.
- **The same answers as the site.** Each tool builds the page's view (the markdown twin of the page,
  with canonical URLs) and the JSON API's document for the same thing (structured content), from
  the same queries; errors that would be a 4xx page are tool errors with the same sentence.
- **Limits.** Tool calls count against ``WOVEPAPER_LIMIT_MCP`` per token, person or client address.
- **``request_full_text`` needs a token** with the ``fulltext`` scope (refused at the HTTP level
  like ``ask``): it queues the paper's PDF to be fetched from arXiv and indexed, through the same
  service as ``POST /api/papers/<id>/fulltext``, and counts against the person's daily quota.
- **``ask`` needs a token.** It runs the chat pipeline for a person: a call to it without a bearer
  token with the ``chat`` scope is refused at the HTTP level by the SDK's ``RequireAuthMiddleware``
  (401, or 403 for a token without the scope, with its ``WWW-Authenticate`` header), and an answer
  counts against that person's chat limits like ``POST /api/chat``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, cast
from urllib.parse import urlsplit

import anyio.to_thread
from litestar import Litestar, asgi
from litestar.connection import ASGIConnection
from litestar.exceptions import HTTPException
from litestar.types import Receive, Scope, Send
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, TypeAdapter
from sqlalchemy.orm import Session
from starlette.authentication import AuthCredentials

from app import fulltext as full_texts
from app.auth.requester import AUTH_OPT, Actor, requester
from app.auth.wiring import client_of, enforce
from app.chat_turns import ChatQuestion, admit_question, answer_markdown, chat_turn
from app.documents import (
    FullTextState,
    Institution,
    Paper,
    Researcher,
    SearchAnswer,
    find_paper,
    institution_document,
    paper_document,
    researcher_document,
    search_answer,
)
from app.ids import MAX_ID
from app.rendering import Pages, View
from app.services import Services
from app.views.institutions import institution_view
from app.views.papers import paper_view
from app.views.researchers import researcher_view
from app.views.search import search_request, search_view
from catalog import arxiv_ids
from catalog.indexing import paper_status
from catalog.papers import PaperDetail
from chat.pipeline import Outcome
from coordination.limits import LimitExceeded
from retrieval.fulltext import Passage, outline, paper_passages
from retrieval.search import SearchResults
from settings import Settings

PATH = "/mcp"
T = TypeVar("T")

# The request being answered, for the tools (set by :func:`mcp_endpoint`; the SDK runs each call
# in a task started from it, which inherits the context).
_CONNECTION: ContextVar[ASGIConnection[Any, Any, Any, Any]] = ContextVar("mcp_connection")

ArxivIdArg = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="An arXiv id: 1706.03762, 1706.03762v5 or an old-style id such as hep-th/9901001.",
    ),
]
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "wovepaper is a catalogue of arXiv papers with researcher and institution pages and the "
    "indexed full text of many papers. Find papers with search_papers, read one with get_paper, "
    "read its text with read_paper_pages (page numbers included), and cite papers by their "
    "canonical URLs and page numbers."
)


# -- structured content (what the tools add to the JSON API's documents) --------------------------


@dataclass
class PagePassage:
    page_start: int
    page_end: int
    section: str | None
    text: str


@dataclass
class PageText:
    arxiv_id: str
    title: str
    url: str
    pdf_url: str
    first_page: int
    last_page: int
    pages_indexed: int | None
    passages: list[PagePassage]
    truncated: bool
    next_page: int | None  # where to continue when truncated or when the range ended early


@dataclass
class FullTextStatus:
    status: str  # done | queued | running | failed | not queued
    pages: int | None
    chunks: int | None
    reason: str | None


@dataclass
class SectionStart:
    title: str
    page: int


@dataclass
class PaperWithText:
    paper: Paper
    full_text: FullTextStatus
    sections: list[SectionStart]


@dataclass
class AskAnswer:
    conversation_id: int | None
    message_id: int | None
    answer: str  # markdown with [n] citations
    references: list[dict[str, Any]]  # n, key, arxiv_id, title, pages, paper_url, reader_url, pdf_url
    passages: list[dict[str, Any]]  # the evidence the answer was written from
    quotes: list[dict[str, Any]]  # key quotes: the passages' sentences that answer, found without the model
    flags: list[dict[str, str]]  # sentences not stated in what they cite, numbers, quotations
    unsupported: bool
    notice: str | None
    note: str | None  # who drafted the answer, when the reader should know (a small local model)


# -- the tools ---------------------------------------------------------------------------------


class AgentServer:
    """The MCP server of one app: tools, the paper resource and the review prompt."""

    def __init__(self, app: Litestar, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.server: MCPServer = MCPServer(
            name="wovepaper", instructions=INSTRUCTIONS, website_url=settings.public_url
        )
        self._register()
        # Built now so the session manager exists before the lifespan runs it; the path is the
        # full one because the request reaches it unchanged.
        self.asgi = self.server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            transport_security=transport_security(settings.public_url),
        )
        # What a call to ``ask`` goes through: the SDK's check of the bearer token and its scope.
        self.ask_gate = RequireAuthMiddleware(self.asgi, required_scopes=["chat"])
        self.full_text_gate = RequireAuthMiddleware(self.asgi, required_scopes=[full_texts.SCOPE])

    @property
    def services(self) -> Services:
        services: Services = self.app.state.services
        return services

    @property
    def pages(self) -> Pages:
        pages: Pages = self.app.state.pages
        return pages

    # Each tool: admitted by the limit, its blocking work in a worker thread, HTTP errors as tool
    # errors (the sentence a page would show).
    async def _call(self, work: Callable[[Session], T]) -> T:
        await _admit(self.settings)

        def run() -> T:
            with self.services.sessions() as db:
                return work(db)

        with _tool_errors():
            return await anyio.to_thread.run_sync(run)

    @staticmethod
    def _view(view: View | object) -> View:
        assert isinstance(view, View), "a tool asks for no address, so it gets no redirect"
        return view

    def _markdown(self, view: View | object) -> str:
        return self.pages.markdown_text(self._view(view))

    def _register(self) -> None:
        server = self.server

        @server.tool(annotations=READ_ONLY, structured_output=True)
        async def search_papers(
            query: Annotated[
                str, Field(min_length=1, max_length=2000, description="Words, a phrase or a question.")
            ],
            category: Annotated[
                str | None,
                Field(
                    max_length=32,
                    pattern=r"^[A-Za-z-]+(\.[A-Za-z-]+)?$",
                    description="Only papers in this arXiv category (cs.LG) or archive (cs).",
                ),
            ] = None,
            date_from: Annotated[
                dt.date | None, Field(description="Only papers active on or after, YYYY-MM-DD.")
            ] = None,
            date_to: Annotated[
                dt.date | None, Field(description="Only papers active on or before, YYYY-MM-DD.")
            ] = None,
            researcher_id: Annotated[
                int | None, Field(ge=1, le=2_147_483_647, description="Only papers by this researcher.")
            ] = None,
            sort: Literal["relevance", "newest"] = "relevance",
            page: Annotated[int, Field(ge=1, le=10_000, description="1-based page number.")] = 1,
            size: Annotated[int, Field(ge=1, le=50, description="Results per page.")] = 10,
        ) -> Annotated[CallToolResult, SearchAnswer]:
            """Search the papers by meaning and words (hybrid BM25 + embeddings). Each hit has its
            canonical URL and its best passage, with page numbers when it comes from the full text."""
            await _admit(self.settings)
            wanted = search_request(
                self.services, query, category, date_from, date_to, researcher_id, sort, "hybrid", page, size
            )
            with _tool_errors():  # Overloaded (the gate is full) among them
                view = await self.services.search_gate.run(search_view, self.services, wanted)
            if view.context["error"]:
                raise ToolError(view.context["error"])
            results: SearchResults = view.context["results"]
            answer = search_answer(results, self.pages.site.url)
            return _result(self._markdown(view), SearchAnswer, answer)

        @server.tool(annotations=READ_ONLY, structured_output=True)
        async def get_paper(arxiv_id: ArxivIdArg) -> Annotated[CallToolResult, PaperWithText]:
            """One paper: title, authors (with their researcher pages), abstract, details, versions,
            and whether its full text is indexed, with the section outline and the pages each
            section starts on (read them with read_paper_pages)."""

            def work(db: Session) -> tuple[str, PaperWithText]:
                view = self._view(paper_view(db, self.pages.site, arxiv_id, None))
                detail: PaperDetail = view.context["paper"]
                status = self._full_text_status(db, detail.arxiv_id)
                # Only an indexed PDF has body chunks: the store is not asked about the others.
                passages = (
                    paper_passages(self.services.store, detail.arxiv_id) if status.status == "done" else []
                )
                sections = outline(passages)
                # With the full-text state, as GET /api/papers/<id> has it.
                document = paper_document(self.pages.site, detail, view.context["full_text"])
                found = PaperWithText(
                    document,
                    status,
                    [SectionStart(s.title, s.page) for s in sections],
                )
                return self._markdown(view).rstrip() + "\n\n" + _full_text_markdown(found), found

            markdown, found = await self._call(work)
            return _result(markdown, PaperWithText, found)

        @server.tool(annotations=READ_ONLY, structured_output=True)
        async def read_paper_pages(
            arxiv_id: ArxivIdArg,
            first_page: Annotated[int, Field(ge=1, le=10_000, description="The first page to read.")] = 1,
            last_page: Annotated[
                int | None, Field(ge=1, le=10_000, description="The last page (default: first_page).")
            ] = None,
        ) -> Annotated[CallToolResult, PageText]:
            """The indexed full text of a paper's pages, each passage with its page numbers, capped in
            length (the answer says where to continue). Only papers whose PDF is indexed have text;
            get_paper says which."""
            last = last_page if last_page is not None else first_page
            if last < first_page:
                raise ToolError(f"last_page ({last}) is before first_page ({first_page}).")

            def work(db: Session) -> PageText:
                detail = find_paper(db, arxiv_id)
                passages = paper_passages(self.services.store, detail.arxiv_id)
                if not passages:
                    status = self._full_text_status(db, detail.arxiv_id)
                    raise ToolError(
                        f"The full text of arXiv:{detail.arxiv_id} is not indexed here (status: "
                        f"{status.status}{': ' + status.reason if status.reason else ''}); get_paper has "
                        "its abstract."
                    )
                site = self.pages.site
                page = _page_text(passages, first_page, last, self.settings.mcp.mcp_max_page_chars)
                return PageText(
                    arxiv_id=detail.arxiv_id,
                    title=detail.title,
                    url=site.url(detail.path),
                    pdf_url=detail.pdf_url,
                    first_page=first_page,
                    last_page=last,
                    pages_indexed=max(p.page_end for p in passages),
                    **page,
                )

            text = await self._call(work)
            return _result(_pages_markdown(text), PageText, text)

        @server.tool(annotations=READ_ONLY, structured_output=True)
        async def get_researcher(
            researcher_id: Annotated[
                int, Field(ge=1, le=2_147_483_647, description="A researcher id from a paper or a search.")
            ],
        ) -> Annotated[CallToolResult, Researcher]:
            """A researcher: papers here (newest first), author positions, fields, co-authors,
            institutions, h-index and citations where enrichment knows them, the spellings of their
            name, and the other researchers of the same name with what tells them apart."""

            def work(db: Session) -> tuple[str, Researcher]:
                ident = str(researcher_id)
                view = researcher_view(db, self.pages, ident, None)
                return self._markdown(view), researcher_document(db, self.pages.site, ident)

            markdown, found = await self._call(work)
            return _result(markdown, Researcher, found)

        @server.tool(annotations=READ_ONLY, structured_output=True)
        async def get_institution(
            institution: Annotated[
                str,
                Field(
                    min_length=1,
                    max_length=300,
                    description="An institution id, ror:<ROR id>, a bare ROR id or a name.",
                ),
            ],
        ) -> Annotated[CallToolResult, Institution]:
            """An institution (ROR): where it is, its affiliated papers here and its researchers."""

            def work(db: Session) -> tuple[str, Institution]:
                view = institution_view(db, self.pages, institution, None)
                return self._markdown(view), institution_document(db, self.pages.site, institution)

            markdown, found = await self._call(work)
            return _result(markdown, Institution, found)

        @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=True))
        async def request_full_text(arxiv_id: ArxivIdArg) -> Annotated[CallToolResult, FullTextState]:
            """Ask for a paper's full text when get_paper says it is not indexed: its PDF is fetched
            from arXiv, parsed and indexed in the background (queued, fetching, parsing, indexing,
            then indexed, or failed with the reason). Calling it again answers the state without
            fetching twice, so it also tells how far it has got. Needs a bearer API token with the
            fulltext scope; each new fetch counts against that person's daily quota."""
            connection = _CONNECTION.get()
            actor = requester(connection)
            if actor is None or not actor.can(full_texts.SCOPE):  # the HTTP gate refused these already
                raise ToolError("request_full_text needs a bearer API token with the fulltext scope.")
            await _admit(self.settings)
            with _tool_errors(limit="full-text quota"):
                state, _queued = await full_texts.request_full_text(
                    connection, self.services, actor, arxiv_id
                )
            state.paper_url = self.pages.site.url(state.paper_url)  # absolute, as every tool's URLs
            return _result(full_texts.state_markdown(state), FullTextState, state)

        @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
        async def ask(
            question: Annotated[str, Field(min_length=1, max_length=10_000, description="The question.")],
            papers: Annotated[
                list[str] | None,
                Field(
                    max_length=50, description="arXiv ids the question is about; empty: the whole archive."
                ),
            ] = None,
            conversation_id: Annotated[
                int | None, Field(ge=1, le=MAX_ID, description="Continue this conversation of yours.")
            ] = None,
        ) -> Annotated[CallToolResult, AskAnswer]:
            """Ask the papers a question: an answer written from retrieved passages, each citation
            checked by code, with references (paper, pages, canonical URL). Needs a bearer API token
            with the chat scope and counts against that person's chat limits."""
            connection = _CONNECTION.get()
            actor = requester(connection)
            if actor is None or not actor.can("chat"):  # the HTTP gate refused these already
                raise ToolError("ask needs a bearer API token with the chat scope.")
            services = self.services
            with _tool_errors(limit="chat limit"):
                turn = await anyio.to_thread.run_sync(
                    chat_turn, services, actor, ChatQuestion(question, conversation_id, papers)
                )
                finish = await admit_question(connection, actor)
            outcome = Outcome()
            try:
                async for _event in services.chat.answer(turn, outcome):
                    pass
            finally:
                await finish(outcome.tokens)
            url = self.pages.site.url  # the chat API's paper URLs are site paths; here they are absolute
            answer = AskAnswer(
                conversation_id=outcome.conversation_id,
                message_id=outcome.message_id,
                answer=outcome.answer or outcome.notice or "",
                references=[
                    {**r, "paper_url": url(r["paper_url"]), "reader_url": _absolute(url, r["reader_url"])}
                    for r in outcome.references
                ],
                passages=[
                    {
                        **p.to_json(),
                        "paper_url": url(p.paper_url),
                        "reader_url": _absolute(url, p.reader_url()),
                    }
                    for p in outcome.passages
                ],
                quotes=[q.to_json() for q in outcome.quotes],
                flags=outcome.flags,
                unsupported=outcome.unsupported,
                notice=outcome.notice,
                note=outcome.note,
            )
            return _result(answer_markdown(outcome, url), AskAnswer, answer)

        @server.resource(
            "paper://{arxiv_id}",
            name="paper",
            description="A paper's page as markdown (new-style arXiv ids, e.g. paper://1706.03762).",
            mime_type="text/markdown",
        )
        async def paper_resource(arxiv_id: str) -> str:
            def work(db: Session) -> str:
                return self._markdown(paper_view(db, self.pages.site, arxiv_id, None))

            return await self._call(work)

        @server.prompt(
            name="review_paper_claims",
            title="Review this paper's claims with citations",
            description="Review a paper's main claims against its own text, citing pages.",
        )
        def review_paper_claims(arxiv_id: ArxivIdArg) -> str:
            try:
                canonical = arxiv_ids.parse(arxiv_id).canonical
            except arxiv_ids.InvalidArxivId as exc:
                raise ValueError(str(exc)) from exc
            return (
                f"Review the main claims of the paper arXiv:{canonical}.\n\n"
                f"1. Call get_paper with arxiv_id {canonical!r} for its abstract, its section outline "
                "and whether its full text is indexed.\n"
                "2. List the paper's main claims (at most five), each in one sentence.\n"
                "3. For each claim, read the pages that support it with read_paper_pages and quote "
                "the supporting sentence. Cite every quote as (page N, <canonical URL>).\n"
                "4. Say which claims the text does not support, or supports only weakly, and why.\n"
                "Use only what the tools return; when the full text is not indexed, say so and "
                "review the abstract alone."
            )

    def _full_text_status(self, db: Session, arxiv_id: str) -> FullTextStatus:
        found = paper_status(db, [arxiv_id], self.services.store.name)
        if not found or found[0].status == "none":
            return FullTextStatus("not queued", None, None, None)
        s = found[0]
        return FullTextStatus(s.status, s.pages, s.chunks, s.reason)


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _result(markdown: str, shape: type[Any], value: Any) -> CallToolResult:
    """The markdown for the model and the same data as JSON for programs."""
    # Building an adapter costs milliseconds: one per shape, kept.
    adapter = _ADAPTERS.get(shape) or _ADAPTERS.setdefault(shape, TypeAdapter(shape))
    structured = adapter.dump_python(value, mode="json")
    return CallToolResult(content=[TextContent(type="text", text=markdown)], structured_content=structured)


def _page_text(passages: list[Passage], first: int, last: int, max_chars: int) -> dict[str, Any]:
    """The passages that touch pages ``first``–``last``, at most ``max_chars`` characters (a passage
    is never cut: the first one is always whole)."""
    chosen: list[PagePassage] = []
    used = 0
    truncated = False
    wanted = [p for p in passages if p.page_end >= first and p.page_start <= last]
    for passage in wanted:
        if chosen and used + len(passage.text) > max_chars:
            truncated = True
            break
        chosen.append(PagePassage(passage.page_start, passage.page_end, passage.section, passage.text))
        used += len(passage.text)
    last_shown = chosen[-1].page_end if chosen else None
    pages_indexed = max(p.page_end for p in passages)
    if truncated and last_shown is not None:
        # Continue on the page the cut fell on (it may repeat part of it), or the next one.
        next_page: int | None = wanted[len(chosen)].page_start
    elif last_shown is not None and last < pages_indexed:
        next_page = last + 1
    else:
        next_page = None
    if not chosen and first > pages_indexed:
        raise ToolError(f"The indexed text has {pages_indexed} pages; page {first} is past the end.")
    return {"passages": chosen, "truncated": truncated, "next_page": next_page}


def _pages_markdown(text: PageText) -> str:
    span = (
        f"page {text.first_page}"
        if text.first_page == text.last_page
        else (f"pages {text.first_page}–{text.last_page}")
    )
    lines = [
        f"# {text.title}: {span}",
        "",
        f"arXiv:{text.arxiv_id} · Canonical page: <{text.url}> · PDF: <{text.pdf_url}>",
        "",
    ]
    if not text.passages:
        lines.append("No indexed text falls on these pages (a page of figures, or a gap in extraction).")
    for passage in text.passages:
        where = (
            f"p. {passage.page_start}"
            if passage.page_start == passage.page_end
            else f"pp. {passage.page_start}–{passage.page_end}"
        )
        heading = f"## [{where}]" + (f" {passage.section}" if passage.section else "")
        lines += [heading, "", passage.text, ""]
    if text.truncated:
        lines.append(f"(Cut at the length limit; continue with first_page={text.next_page}.)")
    elif text.next_page:
        lines.append(f"(The indexed text goes on to page {text.pages_indexed}.)")
    return "\n".join(lines).rstrip() + "\n"


def _full_text_markdown(found: PaperWithText) -> str:
    status = found.full_text
    lines = ["## Reading the full text", ""]  # the page's own "Full text" section says whether it is held
    if status.status == "done":
        lines.append(
            f"Indexed: {status.pages or '?'} pages in {status.chunks or '?'} passages. Read them with "
            f"read_paper_pages (arxiv_id {found.paper.arxiv_id!r})."
        )
    else:
        reason = f" ({status.reason})" if status.reason else ""
        lines.append(
            f"Not indexed ({status.status}{reason}): the abstract above is what there is. "
            "request_full_text fetches it (a token with the fulltext scope)."
        )
    if found.sections:
        lines += ["", "Sections (starting page):", ""]
        lines += [f"- p. {s.page}: {s.title}" for s in found.sections]
    return "\n".join(lines) + "\n"


# -- limits and the mount ----------------------------------------------------------------------


@contextmanager
def _tool_errors(limit: str | None = None) -> Iterator[None]:
    """HTTP errors as tool errors (the sentence a page would show); with ``limit`` (what the person
    has used up, e.g. "chat limit"), a refused limit too, saying when to retry."""
    try:
        yield
    except HTTPException as exc:
        raise ToolError(str(exc.detail)) from exc
    except LimitExceeded as exc:
        if limit is None:
            raise
        raise ToolError(f"Over your {limit} ({exc.what}); try again in {exc.retry_after_header} s.") from exc


async def _admit(settings: Settings) -> None:
    """Count one tool call for the caller (token, person or client address); a tool error saying
    when to retry once the limit is used up."""
    connection = _CONNECTION.get()
    actor = connection.scope.get("user")
    key = getattr(actor, "limit_key", None) or f"client:{client_of(connection)}"
    try:
        await enforce(connection, "mcp", settings.limits.limit_mcp, key)
    except LimitExceeded as exc:
        raise ToolError(
            f"Too many tool calls from this client; try again in {exc.retry_after_header} s."
        ) from exc


def transport_security(public_url: str) -> TransportSecuritySettings:
    """The SDK's Host/Origin allow-list: the public address (and its loopback aliases when it is a
    loopback address, so `make run` answers on localhost as on 127.0.0.1)."""
    parts = urlsplit(public_url)
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port else ""
    names = [host]
    if host in ("127.0.0.1", "localhost", "::1"):
        names = ["127.0.0.1", "localhost", "[::1]"]
    elif ":" in host:
        names = [f"[{host}]"]
    hosts = [f"{name}{port}" for name in names]
    if not port:  # clients may still spell out the default port
        default = 443 if parts.scheme == "https" else 80
        hosts += [f"{name}:{default}" for name in names]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"{parts.scheme}://{h}" for h in hosts],
    )


@asgi(PATH, opt={AUTH_OPT: "bearer"}, include_in_schema=False, copy_scope=True)
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    """``/mcp``: the SDK's app, with the request recorded for the tools and its cookies dropped; a
    call to ``ask`` through the SDK's token check."""
    if scope.get("method") in ("GET", "DELETE"):
        # A stateless server: no stream of server-initiated messages to open (an idle SSE stream
        # per anonymous GET would hold a connection no limit counts) and no session to end.
        await _not_offered(send)
        return
    agents: AgentServer = scope["app"].state.mcp
    forwarded: dict[str, Any] = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"cookie"]}
    target: Any = agents.asgi
    if scope.get("method") == "POST":
        body, receive = await _read_body(receive)
        if _calls_tool(body, "ask"):
            target = agents.ask_gate
            forwarded.update(_sdk_identity(requester(ASGIConnection(scope))))
        elif _calls_tool(body, "request_full_text"):
            target = agents.full_text_gate
            forwarded.update(_sdk_identity(requester(ASGIConnection(scope))))
    token = _CONNECTION.set(ASGIConnection(scope))
    try:
        # Litestar's and Starlette's ASGI types differ in name only.
        await target(forwarded, cast(Any, receive), cast(Any, send))
    finally:
        _CONNECTION.reset(token)


async def _not_offered(send: Send) -> None:
    error = {"code": -32000, "message": "Method not allowed: POST JSON-RPC messages to /mcp."}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [
        (b"allow", b"POST"),
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(body)),
    ]
    await send({"type": "http.response.start", "status": 405, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The request body (up to the SDK's limit; the SDK refuses a longer one itself) and a
    ``receive`` that hands the SDK the same messages again."""
    messages: list[dict[str, Any]] = []
    chunks: list[bytes] = []
    size = 0
    while size <= DEFAULT_MAX_REQUEST_BODY_SIZE:
        message: dict[str, Any] = dict(await receive())
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    pending = list(messages)

    async def replay() -> Any:
        return pending.pop(0) if pending else await receive()

    return body, cast(Receive, replay)


def _calls_tool(body: bytes, name: str) -> bool:
    """Whether a JSON-RPC message (or batch) calls the tool ``name``."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False  # the SDK answers the parse error (a body nested too deeply: below)
    messages = message if isinstance(message, list) else [message]
    return any(
        isinstance(m, dict)
        and m.get("method") == "tools/call"
        and isinstance(m.get("params"), dict)
        and m["params"].get("name") == name
        for m in messages
    )


def _sdk_identity(actor: Actor | None) -> dict[str, Any]:
    """The requester as the SDK's auth middleware reads it (``user`` and ``auth``); nothing for an
    anonymous request, which the middleware then refuses."""
    if actor is None:
        return {}
    scopes = sorted(actor.scopes)
    # The token itself was checked by app.auth.requester; the SDK only reads who and what scopes.
    access = AccessToken(token="", client_id=actor.limit_key, scopes=scopes)
    return {"user": AuthenticatedUser(access), "auth": AuthCredentials(scopes)}


@asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    """Runs the SDK's session manager for as long as the app runs."""
    agents: AgentServer = app.state.mcp
    async with agents.server.session_manager.run():
        yield


def attach(app: Litestar, settings: Settings) -> None:
    """Give ``app`` its MCP server (``create_app`` registers :data:`mcp_endpoint` and the lifespan)."""
    app.state.mcp = AgentServer(app, settings)


def _absolute(url: Callable[[str], str], path: object) -> str:
    """A site path made absolute; empty stays empty (a passage with no page has no reader link)."""
    return url(path) if isinstance(path, str) and path else ""
