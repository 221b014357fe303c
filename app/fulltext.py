"""Full text on request: one paper's state, and asking for it (the service the API, the paper
page's form and the MCP tool share; no controller imports here).

A paper without indexed full text can be asked for by a signed-in person or a token with the
``fulltext`` scope. Asking queues one keyed job that fetches the PDF from arXiv through the polite
client, parses it in the sandbox and indexes it (``indexing``); asks for a paper already queued,
running or indexed coalesce into that one and return its state without spending anything. A new
fetch counts against the asker's daily quota (``WOVEPAPER_LIMIT_FULLTEXT_PER_DAY``, kept with the
other limits: Redis when configured, else in-process).

States a person sees: ``none`` (only the abstract) → ``queued`` (with how many are ahead) →
``fetching`` → ``parsing`` → ``indexing`` → ``indexed``, or ``failed`` with a reason written for
them ("arXiv could not be reached", "arXiv has no PDF for this paper", ...). A failed paper may be
asked for again.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio.to_thread
from litestar.connection import ASGIConnection
from litestar.exceptions import NotFoundException
from sqlalchemy.orm import Session

from app.auth.requester import Actor
from app.auth.wiring import auth_state
from app.documents import FullTextState, FullTextStateName
from app.services import Services
from catalog import arxiv_ids
from catalog.db import as_utc
from catalog.indexing import FullTextRow, full_text_row
from catalog.urls import paper_path
from coordination.limits import LimitExceeded
from coordination.redis import RedisError

log = logging.getLogger(__name__)

SCOPE = "fulltext"  # the API token scope that may ask for full text
DAY = 86_400.0
# States that end by themselves: a page polls the state while it is one of these.
PENDING: frozenset[str] = frozenset({"queued", "fetching", "parsing", "indexing"})
_STAGE_WORDS = {
    "fetching": "Fetching the PDF from arXiv…",
    "parsing": "Reading the PDF…",
    "indexing": "Indexing the text…",
}


def canonical_id(raw: str) -> str:
    """The canonical arXiv id of ``raw``; a 404 saying why for anything that is not one."""
    try:
        return arxiv_ids.canonical(raw)
    except arxiv_ids.InvalidArxivId as exc:
        raise NotFoundException(detail=f"{exc}.") from exc


def document(row: FullTextRow) -> FullTextState:
    status = row.status
    state: FullTextStateName
    position = None
    reason = None
    if status == "done":
        state = "indexed"
        pages = f"{row.pages} pages" if row.pages else "its pages"
        message = f"Full text indexed ({pages}): search and chat cite its pages."
    elif status == "failed":
        state, reason = "failed", row.reason
        message = f"Could not get the full text: {row.reason or 'unknown error'}."
    elif status == "queued":
        state, position, reason = "queued", row.ahead + 1, row.reason
        ahead = "next in line" if row.ahead == 0 else f"{row.ahead} ahead of it"
        message = f"Queued for the full text ({ahead})." + (f" {row.reason}." if row.reason else "")
    elif status == "running":
        state = "parsing" if row.stage == "parsing" else "indexing" if row.stage == "indexing" else "fetching"
        message = _STAGE_WORDS[state]
    else:
        state = "none"
        message = "Only the abstract is held here; the full text has not been fetched."
    return FullTextState(
        arxiv_id=row.arxiv_id,
        state=state,
        held=status == "done",
        message=message,
        position=position,
        reason=reason,
        pages=row.pages if status == "done" else None,
        chunks=row.chunks if status == "done" else None,
        can_request=state in ("none", "failed"),
        paper_url=paper_path(row.arxiv_id, row.title),
        updated_at=as_utc(row.updated_at),
    )


def state_in(db: Session, arxiv_id: str) -> FullTextState:
    """The state of a catalogue paper (canonical id); a 404 when the catalogue does not have it."""
    row = full_text_row(db, arxiv_id)
    if row is None:
        raise NotFoundException(detail=f"arXiv:{arxiv_id} is not in this archive (yet).")
    return document(row)


def state_of(services: Services, arxiv_id: str) -> FullTextState:
    """:func:`state_in` with a session of its own. Blocking: call it from a worker thread."""
    with services.sessions() as db:
        return state_in(db, arxiv_id)


async def read_state(services: Services, raw: str) -> FullTextState:
    return await anyio.to_thread.run_sync(state_of, services, canonical_id(raw))


async def request_full_text(
    connection: ASGIConnection[Any, Any, Any, Any], services: Services, actor: Actor, raw: str
) -> tuple[FullTextState, bool]:
    """Ask for a paper's full text: (its state, whether this ask queued a fetch). A paper queued,
    being fetched or indexed is left as it is (asks coalesce, nothing is spent); a new fetch
    counts against the person's daily quota (:class:`LimitExceeded`, a 429, when it is used up)."""
    arxiv_id = canonical_id(raw)
    current = await anyio.to_thread.run_sync(state_of, services, arxiv_id)
    if not current.can_request:
        return current, False
    await _charge_quota(connection, actor)
    await services.queue_full_text(arxiv_id)
    after = await anyio.to_thread.run_sync(state_of, services, arxiv_id)
    after.requested = True
    return after, True


async def _charge_quota(connection: ASGIConnection[Any, Any, Any, Any], actor: Actor) -> None:
    """One fetch against the person's daily quota (every token of theirs shares it). Redis being
    away fails open, like the other limits (arXiv's pace still holds in the client)."""
    state = auth_state(connection)
    assert state.limiter is not None, "the auth lifespan has not run"
    quota = state.settings.limits.limit_fulltext_per_day
    try:
        decision = await state.limiter.hit(f"fulltext:person:{actor.person_id}", quota, DAY)
    except RedisError as error:
        log.warning("full-text quota not counted, Redis unavailable: %s", error)
        return
    if not decision.allowed:
        raise LimitExceeded(f"full-text requests per day ({quota})", decision.retry_after)


def state_markdown(state: FullTextState) -> str:
    """The state as markdown (the MCP tool's answer)."""
    lines = [
        f"Full text of arXiv:{state.arxiv_id}: **{state.state}**. {state.message}",
        f"Paper: <{state.paper_url}>",
    ]
    if state.state in PENDING:
        lines.append(
            "It is fetched, parsed and indexed in the background; ask again (or read the paper's "
            "JSON) to see it move on."
        )
    return "\n\n".join(lines) + "\n"
