"""``POST /api/chat`` against a real llama.cpp server (llama-cpp-python's OpenAI-compatible server
with SmolLM2-135M, started by the ``llm_server`` fixture): tokens arrive as the model makes them,
every citation in the stream resolves to a given passage, and a client that leaves mid-answer stops
the server generating within a second.

The server runs with ``--interrupt_requests False``, so requests queue behind the one generating:
a one-token probe sent right after the client leaves is answered at once only if the abandoned
generation stopped."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections.abc import Iterator
from itertools import pairwise

import httpx
import openai
import pytest

from app.main import create_app
from chat.citations import declines, verify
from chat.context import KeyedPassage
from chat.sentences import split
from ingest.pdf import PdfLimits, parse_pdf
from settings import SHARED_DATA
from tests.integration.browse_catalogue import served
from tests.integration.chat_corpus import FULL_TEXT, ChatCorpus, build, environment
from tests.integration.llm_peers import llm_server  # noqa: F401  # the fixture
from tests.integration.test_chat_api import QUESTION, Served, only


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> ChatCorpus:
    return build(tmp_path_factory.mktemp("chat-llm-corpus"))


@pytest.fixture(scope="module")
def app(corpus: ChatCorpus, llm_server: str) -> Iterator[Served]:  # noqa: F811
    env = {
        **corpus.env,
        "WOVEPAPER_LLM_BASE_URL": llm_server,
        "WOVEPAPER_LLM_MAX_ANSWER_TOKENS": "300",
        "WOVEPAPER_LLM_FIRST_TOKEN_TIMEOUT_SECONDS": "120",
        "WOVEPAPER_CHAT_PASSAGES": "3",
        "WOVEPAPER_LIMIT_API": "100000/60",
    }
    with environment(env) as settings:
        for section in ("core", "database", "search", "embedding", "chroma", "worker", "chunks", "parser"):
            getattr(settings, section)
        for section in ("llm", "chat", "limits", "auth", "redis", "server", "pages", "local_llm"):
            getattr(settings, section)
    application = create_app(settings)
    with served(settings, app=application) as base:
        yield Served(base, None, settings, "")  # type: ignore[arg-type]  # no scripted model here


def probe_seconds(base_url: str) -> float:
    """Seconds until the server streams the first token of a tiny request."""
    client = openai.OpenAI(base_url=base_url, api_key="none", timeout=120, max_retries=0)
    started = time.monotonic()
    stream = client.chat.completions.create(
        model="x", messages=[{"role": "user", "content": "Say hi."}], max_tokens=1, stream=True
    )
    try:
        for _chunk in stream:
            return time.monotonic() - started
    finally:
        stream.close()
    return time.monotonic() - started


def test_tokens_stream_incrementally_with_only_given_citations(app: Served) -> None:
    token = app.token()
    arrivals: list[float] = []
    found: list[tuple[str, object]] = []
    started = time.monotonic()
    with (
        httpx.Client(base_url=app.base, timeout=300) as client,
        client.stream(
            "POST", "/api/chat", json={"question": QUESTION}, headers={"Authorization": f"Bearer {token}"}
        ) as response,
    ):
        assert response.status_code == 200
        kind = ""
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                found.append((kind, json.loads(line[5:])))
                if kind == "token":
                    arrivals.append(time.monotonic() - started)
    kinds = [k for k, _ in found]
    assert kinds[0] == "evidence" and kinds[-1] == "done", kinds
    assert len(arrivals) >= 5, "the answer did not arrive as several tokens"
    # Apart, not all at once: a buffered answer's lines arrive within a millisecond of each other,
    # while a streamed one's come as the model makes them (SmolLM2 makes five in well under 0.1 s here,
    # so no fixed span holds on a fast machine).
    apart = [b - a for a, b in pairwise(arrivals) if b - a > 0.002]
    assert len(apart) >= 3, f"the tokens arrived all at once: {arrivals}"
    given = {p["key"] for p in only(found, "evidence")[0]["passages"]}
    citations = only(found, "citations")[0]
    assert all(r["key"] in given for r in citations["references"])
    text = "".join(d["text"] for d in only(found, "token"))
    numbers = {int(n) for n in re.findall(r"\[(\d+)\]", text)}
    assert numbers <= {r["n"] for r in citations["references"]}


def test_disconnecting_stops_the_server_generating_within_a_second(app: Served, llm_server: str) -> None:  # noqa: F811
    idle = probe_seconds(llm_server)
    token = app.token()
    question = QUESTION + " Explain it in detail."
    with (
        httpx.Client(base_url=app.base, timeout=300) as client,
        client.stream(
            "POST", "/api/chat", json={"question": question}, headers={"Authorization": f"Bearer {token}"}
        ) as response,
    ):
        assert response.status_code == 200
        kind, tokens = "", 0
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and kind == "token":
                tokens += 1
                if tokens == 3:  # mid-answer: leave
                    break
            elif line.startswith("data:") and kind in ("citations", "done"):
                pytest.fail("the model finished before the client could leave; ask for a longer answer")
    waited = probe_seconds(llm_server)
    # An abandoned 300-token answer would keep the server busy for many seconds; a few seconds of
    # slack keep a loaded machine from failing a server that did stop.
    assert waited - idle < 4.0, (
        f"the server was still busy {waited:.2f} s after the client left (idle {idle:.2f} s)"
    )


GROUNDED = (
    "How many parallel attention heads does the Transformer base model employ?",
    "How deep were the deepest residual nets evaluated on ImageNet?",
    "What value of label smoothing was used when training the Transformer?",
)


def _flat(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


@pytest.fixture(scope="module")
def pdf_pages() -> dict[str, list[str]]:
    """Each full-text paper's pages as the product's parser reads them, flattened."""
    return {
        arxiv_id: [
            _flat(p.text)
            for p in parse_pdf(SHARED_DATA / "pdfs" / "arxiv" / f"{arxiv_id}.pdf", PdfLimits()).pages
        ]
        for arxiv_id in FULL_TEXT
    }


def test_real_answers_are_grounded_in_the_pages_they_cite(
    app: Served, pdf_pages: dict[str, list[str]]
) -> None:
    """The real model's answers: references exist, every reference's pages hold its passage's
    sentences, every key quote lies in its passage and on its page of the PDF."""
    token = app.token()
    cited = 0
    for question in GROUNDED:
        response = httpx.post(
            f"{app.base}/api/chat",
            json={"question": question},
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=600,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        passages = {p["key"]: p for p in body["passages"]}
        assert body["quotes"], question
        for quote in body["quotes"]:
            text = passages[quote["key"]]["quote"]
            assert text[quote["start"] : quote["end"]] == quote["text"]
            paper = passages[quote["key"]]["arxiv_id"]
            pages = " ".join(pdf_pages[paper][n - 1] for n in quote["pages"])
            assert all(_flat(s.text) in pages for s in split(quote["text"]) if len(s.text) > 30), quote
        # A 135M model sometimes recites its instructions, declines or cites nothing: then the answer
        # is withheld, says it declines, or is marked — never shown as verified.
        assert body["references"] or body["notice"] or body["unsupported"] or declines(body["answer"]), body
        cited += bool(body["references"])
        for ref in body["references"]:
            text = passages[ref["key"]]["quote"]
            pages = " ".join(pdf_pages[ref["arxiv_id"]][n - 1] for n in ref["pages"])
            sentences = [s.text for s in split(text) if len(s.text) > 30]
            assert sentences and all(_flat(s) in pages for s in sentences), (ref, text)
    assert cited, "no answer of the real model carried a reference"


def test_a_seeded_wrong_number_is_flagged_against_the_real_evidence(app: Served) -> None:
    """The passages the real pipeline gives for the heads question; an answer that says 64 heads
    (the passage says h = 8; 64 is each head's dimension) is marked not stated."""
    response = httpx.post(
        f"{app.base}/api/chat",
        json={"question": GROUNDED[0]},
        headers={"Authorization": f"Bearer {app.token()}", "Accept": "application/json"},
        timeout=600,
    )
    body = response.json()
    holding = [p for p in body["passages"] if "h = 8" in p["quote"]]
    assert holding, "the passage stating the number of heads was not among the evidence"
    p = holding[0]
    passage = KeyedPassage(
        p["key"], p["arxiv_id"], None, p["title"], tuple(p["pages"]), p["quote"], ("x",), "body", 0.0
    )
    wrong = verify("The base Transformer uses 64 parallel attention heads [1].", [passage], {p["key"]: 1})
    assert [f.kind for f in wrong.flags] == ["not_stated"] and "8" in wrong.flags[0].detail
    right = verify("The base Transformer uses 8 parallel attention heads [1].", [passage], {p["key"]: 1})
    assert right.flags == []
