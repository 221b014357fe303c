"""``GET /api/chat/status``: the chat's language model — disabled, installing (with progress),
starting, ready or down — for the chat page to say why an answer is evidence only. Public: it holds
no personal data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from litestar import get

from app.services import AppServices


@dataclass
class ChatModelStatus:
    state: Literal["disabled", "installing", "starting", "ready", "down"]
    detail: str
    progress: float | None  # 0..1 while installing
    model: str | None  # the embedded model's name; null for a configured server or none


@get(
    "/api/chat/status",
    sync_to_thread=True,  # a configured server is probed by a connection (up to a second)
    tags=["chat"],
    summary="The chat's language model: disabled, installing, starting, ready or down",
)
def chat_status(services: AppServices) -> ChatModelStatus:
    status, model = services.llm_status()
    progress = round(status.progress, 3) if status.progress is not None else None
    return ChatModelStatus(status.state, status.detail, progress, model)
