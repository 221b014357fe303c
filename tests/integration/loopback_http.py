"""A real HTTP server on 127.0.0.1 (a free port) for harvester tests: the clients under test make real
requests; a test decides each answer and reads back what arrived, when, and how many at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit


@dataclass(frozen=True)
class Request:
    path: str
    params: tuple[tuple[str, str], ...]  # in the order sent, blanks kept
    arrived: float  # time.monotonic() on arrival

    @property
    def query(self) -> dict[str, str]:
        return dict(self.params)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (timeouts)


Handler = Callable[[Request], Reply]


@dataclass
class LoopbackServer:
    url: str
    requests: list[Request]
    in_flight_peak: list[int]  # [highest number of requests being answered at the same time]
    handler: list[Handler]  # replaceable while running: server.handler[0] = ...

    def set_handler(self, handler: Handler) -> None:
        self.handler[0] = handler


@contextmanager
def serve(handler: Handler) -> Iterator[LoopbackServer]:
    requests: list[Request] = []
    lock = threading.Lock()
    in_flight = [0]
    peak = [0]
    handlers = [handler]

    class _Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            arrived = time.monotonic()
            with lock:
                in_flight[0] += 1
                peak[0] = max(peak[0], in_flight[0])
            try:
                parts = urlsplit(self.path)
                request = Request(parts.path, tuple(parse_qsl(parts.query, keep_blank_values=True)), arrived)
                requests.append(request)
                reply = handlers[0](request)
                if reply.delay:
                    time.sleep(reply.delay)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)
            finally:
                with lock:
                    in_flight[0] -= 1

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="loopback-http", daemon=True
    )
    thread.start()
    try:
        yield LoopbackServer(f"http://127.0.0.1:{server.server_address[1]}", requests, peak, handlers)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
