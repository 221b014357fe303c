"""Real peers and inputs for the indexing tests.

- :class:`EmbeddingServer`: an OpenAI-compatible ``/v1/embeddings`` endpoint on loopback. The code
  under test talks to it through ``retrieval.embedder.OpenAIEmbedder`` over real HTTP (the way
  production talks to OpenAI or vLLM). Vectors are hashed bags of words, so they are deterministic,
  fast, and similar texts get similar vectors. It answers what was asked, as OpenAI does: the
  ``model`` it was given, vectors as float lists or as base64 float32 (``encoding_format``; the
  openai client asks for base64), and a 400 for a request OpenAI would refuse. A test can make the
  next calls fail.
- PDFs: small text PDFs drawn with PyMuPDF, and malformed files written byte by byte.
- Catalogue papers for them, imported through the real importer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pymupdf
from sqlalchemy import Engine

from ingest.importer import Importer
from ingest.records import PaperRecord, Version

DIM = 384
_WORD = re.compile(r"\w+")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def hashed_vector(text: str, dim: int = DIM) -> list[float]:
    vector = [0.0] * dim
    for word in _WORD.findall(text.lower()) or ["empty"]:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "big") % dim
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class EmbeddingServer:
    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim
        self.calls = 0
        self.texts = 0
        self.encodings: list[str] = []  # the encoding_format of each answered request
        self._fail = 0
        self._fail_status = 503
        self.delay = 0.0  # seconds per request: a model's pace, independent of this machine's
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                time.sleep(server.delay)
                status, payload = server.answer(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def fail_next(self, calls: int, status: int = 503) -> None:
        with self._lock:
            self._fail = calls
            self._fail_status = status

    def answer(self, path: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
        with self._lock:
            self.calls += 1
            if self._fail > 0:
                self._fail -= 1
                return self._fail_status, {
                    "error": {"message": "temporarily unavailable", "type": "server_error"}
                }
        if not path.endswith("/embeddings"):
            return 404, {"error": {"message": f"no route {path}"}}
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        encoding = body.get("encoding_format", "float")
        if not isinstance(body.get("model"), str) or not body["model"]:
            return 400, {
                "error": {"message": "you must provide a model parameter", "type": "invalid_request_error"}
            }
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
            return 400, {"error": {"message": "'input' must be a non-empty string or array of strings"}}
        if encoding not in ("float", "base64"):
            return 400, {"error": {"message": f"invalid encoding_format {encoding!r}: float or base64"}}
        with self._lock:
            self.texts += len(texts)
            self.encodings.append(str(encoding))
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": self._encoded(hashed_vector(t, self.dim), encoding),
            }
            for i, t in enumerate(texts)
        ]
        return 200, {
            "object": "list",
            "data": data,
            "model": body.get("model"),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    @staticmethod
    def _encoded(vector: list[float], encoding: object) -> list[float] | str:
        if encoding == "base64":  # little-endian float32, as OpenAI sends it
            return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        return vector

    def start(self) -> EmbeddingServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def embedding_server() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer().start()
    try:
        yield server
    finally:
        server.stop()


def embedding_env(server: EmbeddingServer) -> dict[str, str]:
    """Settings that point the code under test at the loopback embedding endpoint."""
    return {
        "WOVEPAPER_EMBEDDING_URL": server.url,
        "WOVEPAPER_EMBEDDING_MODEL": "hashed-bag-of-words",
        "WOVEPAPER_EMBEDDING_DIMENSIONS": str(server.dim),
        "WOVEPAPER_EMBEDDING_API_KEY": "test",
        "WOVEPAPER_EMBEDDING_BATCH_SIZE": "64",
    }


# -- PDFs ------------------------------------------------------------------------------------


def text_pdf(pages: Sequence[str], *, title: str | None = None) -> bytes:
    """A real PDF with one text block per page (wrapped by PyMuPDF)."""
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page(width=612, height=792)
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 720), text, fontsize=11)
    if title:
        doc.set_metadata({"title": title})
    data = doc.tobytes()
    doc.close()
    return data


def paper_text(arxiv_id: str, sentences: int = 12) -> str:
    topics = ["retrieval", "attention", "optimisation", "embeddings", "chunking", "queues", "graphs"]
    topic = topics[int(hashlib.sha1(arxiv_id.encode()).hexdigest(), 16) % len(topics)]
    return " ".join(
        f"Sentence {n} of paper {arxiv_id} studies {topic} with careful experiments and clear results."
        for n in range(1, sentences + 1)
    )


AES_256 = 5  # pymupdf.PDF_ENCRYPT_AES_256; its type stubs do not declare the constant


def encrypted_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "A secret paper about hidden things.")
    data = doc.tobytes(encryption=AES_256, owner_pw="owner", user_pw="user")
    doc.close()
    return data


def malformed_pdfs(real: bytes) -> dict[str, bytes]:
    """Files that must fail with a reason, keyed by what is wrong with them."""
    return {
        "empty": b"",
        "garbage": bytes(range(256)) * 40,
        "truncated": real[: len(real) // 3],
        "encrypted": encrypted_pdf(),
        "html": b"<!DOCTYPE html><html><body>arXiv is down for maintenance</body></html>",
    }


# -- the catalogue ---------------------------------------------------------------------------


def import_papers(
    engine: Engine, ids: Sequence[str], *, version: int = 1, title_prefix: str = "A study"
) -> None:
    records = [
        PaperRecord(
            arxiv_id=arxiv_id,
            title=f"{title_prefix} of {arxiv_id}",
            abstract=f"We study {arxiv_id}. " + paper_text(arxiv_id, 3),
            authors=("Ada Lovelace", "Alan Turing"),
            categories=("cs.IR", "cs.LG"),
            versions=(Version(version),),
        )
        for arxiv_id in ids
    ]
    Importer(engine, source="test").run(records)


def write_pdfs(folder: Path, files: dict[str, bytes]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in files.items():
        path = folder / name
        path.write_bytes(data)
        paths.append(path)
    return paths
