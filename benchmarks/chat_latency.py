"""Chat latency through ``/api/chat``: time to the evidence event and to the first token, and the
app's overhead over the model's own time to first token for the same prompt.

    .venv/bin/python benchmarks/chat_latency.py --data-dir DIR [--base-url URL] [--questions FILE] [-n 20]

``DIR`` is a data dir with ingested PDFs (``python -m ingest demo`` + ``python -m indexing pdfs``).
Without ``--base-url`` the model is the scripted OpenAI-compatible server of the tests (it answers at
once, so the first-token figure is the app's own overhead); with it, any OpenAI-compatible server
(the embedded llama.cpp one, vLLM…). The app runs as ``python -m app serve`` on loopback.

For each question: POST it (SSE), note when the ``evidence`` event and the first ``token`` event
arrive; then send the model, directly, the exact messages the pipeline builds for that question
(the same retrieval code, in this process) and note its own first token. Printed (JSON): p50/p99 of
evidence, first token through the app, the model's first token, the added overhead (paired
differences), and tokens/s of the streamed answers. A llama.cpp server reuses the KV cache of a
repeated prompt prefix, so the direct call's system message starts with a nonce: neither call finds
the other's prompt cached.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from search_latency import free_port, serve_app  # noqa: E402

from catalog.db import make_engine  # noqa: E402
from chat.context import gather  # noqa: E402
from chat.llm import ModelChoice, make_llm  # noqa: E402
from chat.pipeline import Chat  # noqa: E402
from evals import answers, qa  # noqa: E402
from retrieval.evidence import EvidenceSource  # noqa: E402
from retrieval.search import rank_config  # noqa: E402
from retrieval.tokens import count_tokens  # noqa: E402
from settings import Settings  # noqa: E402


def percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "n": 0}
    if len(values) == 1:
        return {"p50": round(values[0], 1), "p99": round(values[0], 1), "n": 1}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(cuts[49], 1), "p99": round(cuts[98], 1), "n": len(values)}


def token_for(settings: Settings) -> str:
    from tests.integration.signin_peers import api_token

    return api_token(settings.database_url, name="bench", label="bench")


def through_app(base: str, token: str, question: str) -> tuple[float | None, float | None, float, int]:
    """Seconds to the evidence event, to the first token, to the end; tokens streamed."""
    started = time.perf_counter()
    evidence = first = None
    text = ""
    kind = ""
    with (
        httpx.Client(base_url=base, timeout=600) as client,
        client.stream(
            "POST", "/api/chat", json={"question": question}, headers={"Authorization": f"Bearer {token}"}
        ) as response,
    ):
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                now = time.perf_counter() - started
                if kind == "evidence" and evidence is None:
                    evidence = now
                elif kind == "token":
                    first = now if first is None else first
                    text += json.loads(line[5:])["text"]
    return evidence, first, time.perf_counter() - started, count_tokens(text)


async def model_first_token(chat: Chat, settings: Settings, question: str, base_url: str) -> float | None:
    """The model's own first token for the messages the pipeline builds for ``question``."""
    assert chat.evidence is not None
    passages = gather(
        chat.evidence, question, None, settings.chat, chat.models.budget(), chat.embedder
    ).passages
    if not passages:
        return None
    llm = make_llm(settings.llm, base_url)
    started = time.perf_counter()
    try:
        messages = chat._messages(question, passages)
        # A nonce first, so neither call finds the other's prompt in llama.cpp's prefix cache.
        messages[0] = {**messages[0], "content": f"[{time.time_ns()}]\n{messages[0]['content']}"}
        async for _delta in llm.stream(messages, max_tokens=8):
            return time.perf_counter() - started
    finally:
        await llm.close()
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--base-url", default="")
    parser.add_argument("--questions", type=Path, default=ROOT / "evals" / "questions" / "chat-demo.jsonl")
    parser.add_argument("-n", type=int, default=20)
    args = parser.parse_args()

    scripted = None
    base_url = args.base_url
    if not base_url:
        from tests.integration.scripted_llm import ScriptedLLM

        scripted = ScriptedLLM(default=["Attention", " is", " all", " you", " need", " [S1]."]).start()
        base_url = scripted.base_url
    env = {
        **os.environ,
        "WOVEPAPER_DATA_DIR": str(args.data_dir),
        "WOVEPAPER_WORKER_EMBEDDED": "false",
        "WOVEPAPER_LLM_BASE_URL": base_url,
        "WOVEPAPER_LIMIT_CHAT_REQUESTS": "100000/60",
        "WOVEPAPER_LIMIT_API": "100000/60",
    }
    os.environ.update(env)
    settings = Settings()
    questions = [q.question for q in answers.load(args.questions) if q.arxiv_id][: args.n]
    service, store = qa.open_service(settings, rank_config(settings.search))
    chat = Chat(settings, make_engine(settings.database_url), EvidenceSource(service), ModelChoice(settings))
    port = free_port()
    server = serve_app(env, port)
    rows = []
    try:
        base = f"http://127.0.0.1:{port}"
        token = token_for(settings)
        through_app(base, token, "warm up: what is attention?")
        for question in questions:
            own = asyncio.run(model_first_token(chat, settings, question, base_url))
            evidence, first, total, tokens = through_app(base, token, question)
            rows.append((evidence, first, own, total, tokens))
    finally:
        server.terminate()
        server.wait(timeout=30)
        store.close()
        if scripted is not None:
            scripted.stop()
    ms = 1000.0
    evidence_ms = [r[0] * ms for r in rows if r[0] is not None]
    first_ms = [r[1] * ms for r in rows if r[1] is not None]
    own_ms = [r[2] * ms for r in rows if r[2] is not None]
    overhead = [(r[1] - r[2]) * ms for r in rows if r[1] is not None and r[2] is not None]
    rates = [r[4] / (r[3] - r[1]) for r in rows if r[1] is not None and r[3] > r[1] and r[4] > 1]
    print(
        json.dumps(
            {
                "questions": len(rows),
                "model": "scripted" if scripted else base_url,
                "evidence_ms": percentiles(evidence_ms),
                "first_token_ms_via_app": percentiles(first_ms),
                "model_first_token_ms": percentiles(own_ms),
                "added_first_token_ms": percentiles(overhead),
                "tokens_per_s": round(statistics.median(rates), 1) if rates else None,
                "load_average": [round(x, 2) for x in os.getloadavg()],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
