"""The chat page, ``/chat``: the full-size chat with the person's conversation history beside it.

The page is a shell for ``static/chat.js``, which talks to the chat API (``/api/chat``,
``/api/chat/conversations``, ``/api/chat/status``); the same panel sits collapsed in the dock of
every other page (``templates/_chat_dock.html``). It needs a signed-in session (a browser without one
is sent to sign in and back) and, like the account page, has no markdown variant: agents ask through
``POST /api/chat`` with ``Accept: text/markdown``. ``?c=<id>`` reopens a conversation and
``?paper=<arxiv id>`` starts one scoped to that paper (the "Chat with this paper" link).
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from litestar import Request, Response, get
from litestar.params import FromQuery

from app.auth.guards import signed_in
from app.auth.wiring import page_context
from app.rendering import AppPages, View
from app.routing import PRIVATE
from catalog.arxiv_ids import InvalidArxivId, parse
from catalog.papers import PaperSummary, paper_summaries


@get("/chat", include_in_schema=False, guards=[signed_in], opt=PRIVATE)
async def chat_page(
    request: Request[Any, Any, Any],
    pages: AppPages,
    c: FromQuery[str | None] = None,
    paper: FromQuery[str | None] = None,
) -> Response[bytes]:
    conversation = int(c) if c and c.isdigit() and 0 < int(c) < 2**63 else None
    sessions = request.app.state.services.sessions

    def scoped() -> PaperSummary | None:
        """The paper ``?paper=`` names; an unknown or malformed id leaves the whole archive in scope."""
        try:
            arxiv_id = parse(paper or "").canonical
        except InvalidArxivId:
            return None
        with sessions() as db:
            found = paper_summaries(db, [arxiv_id])
        return found[0] if found else None

    view = View(
        template="chat",
        title="Chat",
        description="Ask the papers: answers with checked citations to papers and pages.",
        path="/chat",
        context={"conversation_id": conversation, "scope_paper": await anyio.to_thread.run_sync(scoped)},
        crumbs=[("Chat", "/chat")],
        indexable=False,
        cacheable=False,
    )
    return pages.render(view, "html", page_context(request)).response()


ROUTE_HANDLERS = [chat_page]
