"""Conversations and their messages, on the catalogue's ``Base`` (one schema, one Alembic history:
``0007_chat``). Every query takes the person: a conversation that is not theirs does not exist
for them (the API answers 404, the same as for one that never existed).

A message keeps its text (markdown with ``[n]``) and, for answers, what the reader needs to check
it: references, passages, flags, the unsupported mark and a notice. Deleting a person deletes
their conversations; deleting a conversation deletes its messages.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text, delete, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from catalog.models import Base
from catalog.text import human_text

TITLE_CHARS = 200
Role = Literal["user", "assistant"]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Conversation(Base):
    __tablename__ = "conversations"

    id: Mapped[int] = mapped_column(primary_key=True)
    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(TITLE_CHARS))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)

    __table_args__ = (Index("ix_conversations_person_updated", "person_id", "updated_at"),)


class Message(Base):
    __tablename__ = "chat_messages"

    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[int] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    role: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text)
    # Answers: {"references", "passages", "flags", "unsupported", "notice", "papers"}.
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


@dataclass(frozen=True, slots=True)
class Summary:
    id: int
    title: str
    updated_at: dt.datetime
    messages: int


def title_for(question: str) -> str:
    text = human_text(question)
    return text if len(text) <= 80 else text[:79].rstrip() + "…"


def create(db: Session, person_id: int, title: str) -> Conversation:
    conversation = Conversation(person_id=person_id, title=title_for(title)[:TITLE_CHARS])
    db.add(conversation)
    db.flush()
    return conversation


def owned(db: Session, person_id: int, conversation_id: int) -> Conversation | None:
    """The conversation if it is this person's, else None."""
    return db.scalars(
        select(Conversation).where(Conversation.id == conversation_id, Conversation.person_id == person_id)
    ).first()


def listing(db: Session, person_id: int, limit: int = 200) -> list[Summary]:
    counts = (
        select(Message.conversation_id, func.count().label("n")).group_by(Message.conversation_id).subquery()
    )
    rows = db.execute(
        select(Conversation.id, Conversation.title, Conversation.updated_at, func.coalesce(counts.c.n, 0))
        .outerjoin(counts, counts.c.conversation_id == Conversation.id)
        .where(Conversation.person_id == person_id)
        .order_by(Conversation.updated_at.desc(), Conversation.id.desc())
        .limit(limit)
    )
    return [Summary(r[0], r[1], r[2], int(r[3])) for r in rows]


def messages(db: Session, conversation_id: int) -> list[Message]:
    return list(
        db.scalars(select(Message).where(Message.conversation_id == conversation_id).order_by(Message.id))
    )


def history(db: Session, conversation_id: int, turns: int) -> list[tuple[str, str]]:
    """The last ``turns`` question/answer pairs, oldest first, as (role, text)."""
    if turns <= 0:
        return []
    rows = db.scalars(
        select(Message)
        .where(Message.conversation_id == conversation_id)
        .order_by(Message.id.desc())
        .limit(turns * 2)
    )
    return [(m.role, m.text) for m in reversed(list(rows))]


def exchanges(db: Session, conversation_id: int, turns: int) -> list[tuple[str, str]]:
    """The last ``turns`` exchanges with the model as it saw them, oldest first: (the user message
    it was sent, its reply as generated). A follow-up repeats them word for word so the model's
    server finds them in its prompt cache; answers saved without them are left out."""
    if turns <= 0:
        return []
    rows = db.scalars(
        select(Message)
        .where(Message.conversation_id == conversation_id, Message.role == "assistant")
        .order_by(Message.id.desc())
        .limit(turns)
    )
    found = []
    for m in reversed(list(rows)):
        prompt, reply = (m.details or {}).get("prompt"), (m.details or {}).get("reply")
        if isinstance(prompt, str) and isinstance(reply, str) and prompt and reply:
            found.append((prompt, reply))
    return found


def add_turn(
    db: Session,
    conversation_id: int,
    question: str,
    answer: str,
    details: dict[str, Any],
    tokens: int,
) -> Message:
    """Save a question and its answer; returns the answer's message."""
    db.add(Message(conversation_id=conversation_id, role="user", text=question, details={}, tokens=0))
    reply = Message(
        conversation_id=conversation_id, role="assistant", text=answer, details=details, tokens=tokens
    )
    db.add(reply)
    conversation = db.get(Conversation, conversation_id)
    if conversation is not None:
        conversation.updated_at = _now()
    db.flush()
    return reply


def rename(db: Session, person_id: int, conversation_id: int, title: str) -> bool:
    conversation = owned(db, person_id, conversation_id)
    if conversation is None:
        return False
    conversation.title = title_for(title)[:TITLE_CHARS] or conversation.title
    return True


def remove(db: Session, person_id: int, conversation_id: int) -> bool:
    conversation = owned(db, person_id, conversation_id)
    if conversation is None:
        return False
    db.execute(delete(Message).where(Message.conversation_id == conversation_id))
    db.delete(conversation)
    return True
