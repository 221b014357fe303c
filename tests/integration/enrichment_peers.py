"""Loopback HTTP peers for the enrichment clients, built only from the real recorded responses in
``../shared/data/enrichment/`` (OpenAlex objects, Semantic Scholar and paper-qa VCR cassettes, ROR
records). The code under test makes real HTTP requests to them through its configurable base URL.

Two ways of answering, tried in order:

1. **Replay**: a request that matches a recorded interaction (method, path, query parameters as a
   multiset, JSON body) gets the recorded status and body, byte for byte (gzip bodies decompressed).
2. **Protocol fakes** over the recorded objects, for requests no cassette holds (OpenAlex batch
   filters, S2 batch lookups of other ids, ROR by id and search): they implement the documented API
   shapes (OpenAlex ``{"meta", "results"}`` lists and 404s, S2 batch arrays with ``null`` for unknown
   ids, ROR ``{"errors": [...]}``) and answer what was asked: OpenAlex's ``select`` keeps only the
   fields named (so a client that forgets to select a field it reads gets none), a ROR ``query``
   searches the recorded records' names and pages through them 20 at a time.

Anything else is answered 501 with the request in the body, so a test fails loudly on a request
nobody recorded.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import yaml

Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Interaction:
    host: str
    method: str
    path: str  # unquoted, without the host
    query: list[tuple[str, str]]
    body: Any  # parsed JSON request body or None
    status: int
    content_type: str
    payload: bytes


def _body_bytes(raw: Any, headers: dict[str, list[str]]) -> bytes:
    data = raw.encode() if isinstance(raw, str) else (raw or b"")
    encoding = {k.lower(): v for k, v in headers.items()}.get("content-encoding") or []
    if "gzip" in encoding or data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


@functools.lru_cache(maxsize=256)
def load_cassette(path: Path) -> list[Interaction]:
    """Both VCR layouts: ``body.string`` + ``status.code`` (vcrpy) and ``content`` + ``status_code``."""
    found = []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: 10x faster
    for item in yaml.load(path.read_text(), Loader=loader)["interactions"]:
        request, response = item["request"], item["response"]
        url = urlsplit(request["uri"])
        body = request.get("body")
        headers = response.get("headers") or {}
        raw = response["body"].get("string") if "body" in response else response.get("content")
        status = response["status"]["code"] if "status" in response else response["status_code"]
        content_type = (
            {k.lower(): v for k, v in headers.items()}.get("content-type") or ["application/json"]
        )[0]
        found.append(
            Interaction(
                host=url.hostname or "",
                method=request["method"].upper(),
                path=unquote(url.path),
                query=sorted(parse_qsl(url.query, keep_blank_values=True)),
                body=json.loads(body) if body else None,
                status=int(status),
                content_type=content_type,
                payload=_body_bytes(raw, headers),
            )
        )
    return found


def load_cassettes(paths: Iterable[Path]) -> list[Interaction]:
    return [i for p in sorted(paths) for i in load_cassette(p)]


@dataclass
class Seen:
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Peer:
    """A threaded HTTP server on 127.0.0.1 with a free port."""

    interactions: list[Interaction] = field(default_factory=list)
    fallback: Callable[[str, str, dict[str, str], Any], Answer | None] | None = None
    ignore_params: frozenset[str] = frozenset({"mailto", "api_key"})
    seen: list[Seen] = field(default_factory=list)
    _failures: list[Answer] = field(default_factory=list)

    def __post_init__(self) -> None:
        peer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, headers, payload = peer.answer(self.command, self.path, dict(self.headers), raw)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _answer
            do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fail_next(
        self, times: int, status: int, headers: dict[str, str] | None = None, body: bytes = b""
    ) -> None:
        """Answer the next ``times`` requests with ``status`` before serving recorded ones."""
        self._failures += [(status, headers or {}, body)] * times

    def answer(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Answer:
        url = urlsplit(target)
        path = unquote(url.path)
        full = sorted(parse_qsl(url.query, keep_blank_values=True))
        query = [(k, v) for k, v in full if k not in self.ignore_params]
        body = json.loads(raw) if raw else None
        self.seen.append(Seen(method, path, full, {k.lower(): v for k, v in headers.items()}, body))
        if self._failures:
            return self._failures.pop(0)
        for item in self.interactions:
            if (item.method, item.path, item.query, item.body) == (method, path, query, body):
                return item.status, {"Content-Type": item.content_type}, item.payload
        if self.fallback is not None:
            answer = self.fallback(method, path, dict(query), body)
            if answer is not None:
                return answer
        return 501, {"Content-Type": "text/plain"}, f"nothing recorded for {method} {target} {body}".encode()


def _json(status: int, obj: Any) -> Answer:
    return status, {"Content-Type": "application/json"}, json.dumps(obj).encode()


# -- OpenAlex ------------------------------------------------------------------------------------------


def _selected(obj: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """OpenAlex's ``select``: only the root-level fields named (all of them without one)."""
    return {k: v for k, v in obj.items() if k in fields} if fields else obj


class OpenAlexObjects:
    """Recorded OpenAlex works, authors and institutions, by id and DOI; answers the REST shapes."""

    def __init__(self, data: Path) -> None:
        self.works: dict[str, dict[str, Any]] = {}
        self.by_doi: dict[str, str] = {}
        self.authors: dict[str, dict[str, Any]] = {}
        self.institutions: dict[str, dict[str, Any]] = {}
        self.not_found: Answer = (404, {"Content-Type": "text/html; charset=utf-8"}, b"")
        for path in sorted((data / "openalex").glob("*.json")):
            self.add(json.loads(path.read_text()))
        for item in load_cassettes((data / "paperqa-cassettes").glob("*.yaml")):
            if item.host != "api.openalex.org" or not item.path.startswith("/works"):
                continue
            if item.status == 404 and item.method == "GET":
                self.not_found = (404, {"Content-Type": item.content_type}, item.payload)
            elif item.status == 200 and item.content_type.startswith("application/json"):
                body = json.loads(item.payload)
                for obj in body.get("results", [body]):
                    if "authorships" in obj:  # whole work objects only (not select=… subsets)
                        self.add(obj)

    def add(self, obj: dict[str, Any]) -> None:
        key = str(obj.get("id", "")).rsplit("/", 1)[-1]
        if key.startswith("W"):
            self.works[key] = obj
            if obj.get("doi"):
                self.by_doi[obj["doi"].lower().removeprefix("https://doi.org/")] = key
        elif key.startswith("A"):
            self.authors[key] = obj
        elif key.startswith("I"):
            self.institutions[key] = obj

    def __call__(self, method: str, path: str, query: dict[str, str], body: Any) -> Answer | None:
        if method != "GET":
            return None
        parts = path.strip("/").split("/", 1)
        collection, ref = parts[0], (parts[1] if len(parts) > 1 else "")
        fields = [f for f in query.get("select", "").split(",") if f]
        if collection == "works" and ref:
            key = self.by_doi.get(ref.lower().removeprefix("https://doi.org/")) if "doi.org/" in ref else ref
            return self._one(self.works.get(str(key)), fields)
        if collection == "authors" and ref:
            return self._one(self.authors.get(ref), fields)
        if collection == "institutions" and ref:
            return self._one(self.institutions.get(ref), fields)
        wanted = query.get("filter", "")
        if collection == "works" and wanted.startswith("doi:"):
            keys = [self.by_doi.get(d.lower()) for d in wanted[4:].split("|")]
            return self._list([_selected(self.works[k], fields) for k in keys if k])
        if collection == "authors" and wanted.startswith("openalex:"):
            found = [self.authors[a] for a in wanted[9:].split("|") if a in self.authors]
            return self._list([_selected(a, fields) for a in found])
        return None

    def _one(self, obj: dict[str, Any] | None, fields: list[str]) -> Answer:
        return _json(200, _selected(obj, fields)) if obj is not None else self.not_found

    @staticmethod
    def _list(results: list[dict[str, Any]]) -> Answer:
        meta = {
            "count": len(results),
            "db_response_time_ms": 1,
            "page": 1,
            "per_page": 50,
            "next_cursor": None,
        }
        return _json(200, {"meta": meta, "results": results, "group_by": []})


# -- Semantic Scholar ----------------------------------------------------------------------------------


class SemanticScholarObjects:
    """Every paper and author object in the recorded S2 answers, indexed by every id S2 accepts."""

    def __init__(self, data: Path) -> None:
        self.papers: dict[str, dict[str, Any]] = {}
        self.authors: dict[str, dict[str, Any]] = {}
        cassettes = [*(data / "semanticscholar").glob("*.yaml"), *(data / "paperqa-cassettes").glob("*.yaml")]
        for item in load_cassettes(cassettes):
            if (
                item.host == "api.semanticscholar.org"
                and item.status == 200
                and item.path.startswith("/graph/v1/")
            ):
                self._collect(json.loads(item.payload))
        for name in ("Paper.json", "Author.json"):
            self._collect(json.loads((data / "semanticscholar" / name).read_text()))

    def _collect(self, obj: Any) -> None:
        if isinstance(obj, list):
            for item in obj:
                self._collect(item)
        elif isinstance(obj, dict):
            if "data" in obj:
                self._collect(obj["data"])
            if obj.get("paperId"):
                self._add_paper(obj)
            if obj.get("authorId") and ("hIndex" in obj or "paperCount" in obj):
                self.authors.setdefault(str(obj["authorId"]), {}).update(obj)

    def _add_paper(self, obj: dict[str, Any]) -> None:
        merged = self.papers.get(obj["paperId"], {})
        merged.update({k: v for k, v in obj.items() if k not in ("citations", "references", "embedding")})
        ids = obj.get("externalIds") or {}
        keys = [obj["paperId"]]
        if ids.get("ArXiv"):
            keys.append(f"ARXIV:{ids['ArXiv']}")
        if ids.get("DOI"):
            keys.append(f"DOI:{str(ids['DOI']).lower()}")
        if ids.get("CorpusId"):
            keys.append(f"CORPUSID:{ids['CorpusId']}")
        for key in keys:
            self.papers[key.upper() if ":" in key else key] = merged

    def paper(self, ref: str) -> dict[str, Any] | None:
        if ":" in ref:
            kind, value = ref.split(":", 1)
            return self.papers.get(f"{kind.upper()}:{value.upper()}") or self.papers.get(
                f"{kind.upper()}:{value.lower()}".upper()
            )
        if ref.startswith("10."):
            return self.papers.get(f"DOI:{ref.lower()}".upper())
        return self.papers.get(ref)

    def __call__(self, method: str, path: str, query: dict[str, str], body: Any) -> Answer | None:
        if method == "POST" and path.endswith("/paper/batch"):
            return _json(200, [self.paper(i) for i in body["ids"]])
        if method == "POST" and path.endswith("/author/batch"):
            return _json(200, [self.authors.get(str(i)) for i in body["ids"]])
        if method == "GET" and "/paper/" in path and path.count("/") == 4:
            found = self.paper(path.rsplit("/paper/", 1)[1])
            if found is None:
                return _json(404, {"error": "Paper with id not found"})
            return _json(200, found)
        return None


# -- ROR ------------------------------------------------------------------------------------------------


_ROR_ID = re.compile(r'"id": "https://ror\.org/(\w+)"')


class RorObjects:
    """The recorded ROR v2 records (dump and ror-api test data), served as ``/v2/organizations``."""

    def __init__(self, data: Path, *, limit: int | None = None) -> None:
        self.lines: dict[str, str] = {}  # ror id → its JSON line, parsed when asked for
        with (data / "ror" / "ror_v2_records_from_ror-records_releases.jsonl").open() as handle:
            for number, line in enumerate(handle):
                if limit is not None and number >= limit:
                    break
                found = _ROR_ID.search(line)
                if found:
                    self.lines[found.group(1)] = line
        self._names: dict[str, list[str]] | None = None

    def __call__(self, method: str, path: str, query: dict[str, str], body: Any) -> Answer | None:
        if method != "GET" or not path.startswith("/v2/organizations"):
            return None
        ref = path.removeprefix("/v2/organizations").strip("/")
        if ref:
            if ref in self.lines:
                return _json(200, self._record(ref))
            return _json(404, {"errors": [f"ROR ID 'https://ror.org/{ref}' does not exist"]})
        if "query" in query:
            return self._search(query["query"], int(query.get("page") or 1))
        return None

    def _record(self, ref: str) -> dict[str, Any]:
        record: dict[str, Any] = json.loads(self.lines[ref])
        record.pop("_source", None)  # provenance added by the data folder, not ROR's
        return record

    def _search(self, text: str, page: int) -> Answer:
        """Records with a name containing ``text`` (any case): an exact name first, then names that
        start with it, then the rest, each by name; 20 per page."""
        if self._names is None:
            self._names = {
                ref: sorted(n["value"].lower() for n in self._record(ref).get("names", []))
                for ref in self.lines
            }
        wanted = text.strip().lower()

        def rank(ref: str) -> tuple[int, str]:
            names = self._names[ref] if self._names else []
            best = 0 if wanted in names else 1 if any(n.startswith(wanted) for n in names) else 2
            return best, names[0] if names else ""

        matches = sorted((r for r, names in self._names.items() if any(wanted in n for n in names)), key=rank)
        items = [self._record(ref) for ref in matches[(page - 1) * 20 : page * 20]]
        return _json(200, {"number_of_results": len(matches), "time_taken": 1, "items": items, "meta": {}})
