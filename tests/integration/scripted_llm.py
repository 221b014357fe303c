"""A scripted model behind a real OpenAI-compatible server on loopback (``/v1/chat/completions``,
streamed as server-sent events the way OpenAI and llama.cpp send them).

The code under test reaches it through ``chat.llm.make_llm`` and the real ``openai`` client
(``WOVEPAPER_LLM_BASE_URL``), so nothing of the production path is replaced. A test scripts what
it answers: the deltas of the next replies (or a function of the request's messages), a delay before
the first delta and between deltas, an HTTP error. The server records every request and notices a
client that leaves mid-stream (its next write fails) and when.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.integration.indexing_peers import free_port

Messages = list[dict[str, str]]
Reply = Sequence[str] | Callable[[Messages], Sequence[str]]


@dataclass
class Request:
    messages: Messages
    max_tokens: int | None
    started: float
    finished: float | None = None
    disconnected_at: float | None = None  # when a write failed because the client had left
    sent: int = 0  # deltas written


@dataclass
class ScriptedLLM:
    replies: list[Reply] = field(default_factory=list)  # consumed in order; then ``default``
    default: Reply = ("I cannot tell.",)
    first_delay: float = 0.0
    delta_delay: float = 0.0
    status: int = 200  # anything else: an error answer, no stream
    requests: list[Request] = field(default_factory=list)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies = list(replies)
            self.requests.clear()

    def _next(self, messages: Messages) -> Sequence[str]:
        with self._lock:
            reply = self.replies.pop(0) if self.replies else self.default
        return reply(messages) if callable(reply) else reply

    def start(self) -> ScriptedLLM:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._json(404, {"error": {"message": "not found"}})
                    return
                record = Request(body.get("messages", []), body.get("max_tokens"), time.monotonic())
                with model._lock:
                    model.requests.append(record)
                if model.status != 200:
                    self._json(
                        model.status, {"error": {"message": "scripted failure", "type": "server_error"}}
                    )
                    return
                deltas = model._next(record.messages)
                if not body.get("stream"):
                    text = "".join(deltas)
                    self._json(200, _completion(text))
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                try:
                    time.sleep(model.first_delay)
                    for i, delta in enumerate(deltas):
                        if i:
                            time.sleep(model.delta_delay)
                        self._event(_chunk({"content": delta}, None))
                        record.sent += 1
                    self._event(_chunk({}, "stop"))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    record.disconnected_at = time.monotonic()
                    return
                record.finished = time.monotonic()

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
                self.wfile.flush()

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.port = self.port or free_port()
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def _chunk(delta: dict[str, str], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    }


@contextmanager
def scripted_llm() -> Iterator[ScriptedLLM]:
    model = ScriptedLLM().start()
    try:
        yield model
    finally:
        model.stop()


def user_prompt(messages: Messages) -> str:
    return next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
