"""Public pages' requests/s held at p99 < 200 ms with 0, 20 and 50 chat streams open, for one app
process and for two app processes behind nginx (deploy/nginx.conf, Debian's nginx).

    .venv/bin/python benchmarks/scale_out.py [--streams 0,20,50] [--connections 4,8,16,32] [--seconds 8]

The topology is the cluster test's (tests/integration/test_cluster.py): a fresh PostgreSQL database
with the 249 Kaggle-snapshot papers, a private redis-server, ``chroma run``, the abstracts embedded by
``python -m indexing worker`` through a loopback embedding endpoint, and a stand-in OpenAI-compatible
LLM that streams every answer at a fixed rate (``--tokens-per-second``), so a chat stream costs the
app what a real model's would (the SSE relay, pings, citation checks) and no model CPU. Each app is
``python -m app serve`` with one uvicorn worker. "One app" is asked directly, "two apps" through nginx.

For each topology and number of open streams (each a client that asks again as soon as its answer
ends), ``wrk`` runs over the public pages (home, listings, paper pages) at each connection count;
printed: requests/s and p99 per level, and the best requests/s whose p99 stayed under 200 ms. The
machine is shared: the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack
from functools import partial
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from overload import wrk_pages  # noqa: E402

from catalog.db import make_engine  # noqa: E402
from ingest.importer import Importer  # noqa: E402
from ingest.sources import kaggle  # noqa: E402
from settings import SHARED_DATA  # noqa: E402
from tests.conftest import running_chroma  # noqa: E402
from tests.integration.browse_catalogue import catalogue_url  # noqa: E402
from tests.integration.cluster_peers import Nginx, RedisServer, Service, wait_until  # noqa: E402
from tests.integration.indexing_peers import (  # noqa: E402
    embedding_env,
    embedding_server,
    free_port,
    import_papers,
    paper_text,
    text_pdf,
    write_pdfs,
)
from tests.integration.scripted_llm import ScriptedLLM  # noqa: E402
from tests.integration.signin_peers import api_token  # noqa: E402

P99_TARGET_MS = 200.0


def run_to_end(name: str, args: list[str], env: dict[str, str], work: Path) -> None:
    command = Service(name, args, env, work)
    command.start()
    assert command.process is not None
    if command.process.wait(timeout=600) != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{command.tail()}")


def chat_token(database_url: str) -> str:
    return api_token(database_url, name="bench", label="bench")


class Streams:
    """``count`` chat clients, each asking again as soon as its answer ends, until stopped."""

    def __init__(self, base: str, token: str, question: str, count: int) -> None:
        self.base, self.token, self.question = base, token, question
        self.stop = threading.Event()
        self.started = threading.Semaphore(0)
        self.answers = 0
        self.failures: list[str] = []
        self.threads = [threading.Thread(target=self._client, daemon=True) for _ in range(count)]

    def __enter__(self) -> Streams:
        for thread in self.threads:
            thread.start()
        for _ in self.threads:  # every stream has its first words before the pages are measured
            if not self.started.acquire(timeout=120):
                raise RuntimeError(f"chat streams did not start: {self.failures[-3:]}")
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)

    def _client(self) -> None:
        first = True
        headers = {"Authorization": f"Bearer {self.token}"}
        with httpx.Client(base_url=self.base, timeout=120) as client:
            while not self.stop.is_set():
                try:
                    with client.stream(
                        "POST", "/api/chat", json={"question": self.question}, headers=headers
                    ) as r:
                        if r.status_code != 200:
                            self.failures.append(f"HTTP {r.status_code}: {r.read()[:200]!r}")
                            time.sleep(1)
                            continue
                        words = 0
                        for line in r.iter_lines():  # pings every second keep this loop turning
                            if line.startswith("event: token"):
                                words += 1
                                if first:
                                    first = False
                                    self.started.release()
                            if self.stop.is_set():
                                break
                    self.answers += 1
                    if not words and not self.stop.is_set():
                        self.failures.append("an answer without tokens (no evidence, or the model refused)")
                        time.sleep(1)
                except httpx.HTTPError as error:
                    self.failures.append(f"{type(error).__name__}: {error}")


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def page_paths(base: str) -> list[str]:
    listing = httpx.get(base + "/papers", timeout=30).text
    papers = sorted(set(re.findall(r'href="(/papers/[0-9][^"#?]*)"', listing)))[:20]
    assert papers, "no paper links on /papers"
    return ["/", "/papers", "/papers?page=2", "/researchers", *papers]


def best(levels: list[dict[str, object]]) -> float:
    held = [float(str(level["rps"])) for level in levels if float(str(level["p99"])) < P99_TARGET_MS]
    return max(held, default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="0,20,50")
    parser.add_argument("--connections", default="4,8,16,32")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--tokens-per-second", type=float, default=20.0)
    args = parser.parse_args()
    stream_levels = [int(n) for n in args.streams.split(",")]
    connections = [int(n) for n in args.connections.split(",")]

    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="wovepaper-scale-")))
        database_url = stack.enter_context(catalogue_url("postgresql", work))
        redis = RedisServer(work / "redis")
        redis.start()
        stack.callback(redis.stop)
        (work / "chroma").mkdir()
        (chroma_host, chroma_port), _ = stack.enter_context(running_chroma(work / "chroma"))
        embeddings = stack.enter_context(embedding_server())
        model = ScriptedLLM(default=["word "] * 4000, delta_delay=1 / args.tokens_per_second).start()
        stack.callback(model.stop)
        ports = [free_port(), free_port()]
        nginx = Nginx(work / "nginx", (f"127.0.0.1:{ports[0]}", f"127.0.0.1:{ports[1]}"))
        env = {
            "WOVEPAPER_ENVIRONMENT": "test",
            "WOVEPAPER_DATA_DIR": str(work / "data"),
            "WOVEPAPER_DATABASE_URL": database_url,
            "WOVEPAPER_REDIS_URL": redis.url,
            "WOVEPAPER_WORKER_QUEUE": "bench",
            "WOVEPAPER_CHROMA_HOST": chroma_host,
            "WOVEPAPER_CHROMA_PORT": str(chroma_port),
            "WOVEPAPER_WORKER_EMBEDDED": "false",
            "WOVEPAPER_PUBLIC_URL": nginx.url,
            "WOVEPAPER_SECRET_KEY": uuid.uuid4().hex * 2,
            "WOVEPAPER_TRUSTED_PROXIES": '["127.0.0.1"]',
            "WOVEPAPER_LIMIT_API": "100000000/60",
            "WOVEPAPER_LIMIT_CHAT_REQUESTS": "100000000/3600",
            "WOVEPAPER_LIMIT_CHAT_TOKENS_PER_DAY": "1000000000",
            "WOVEPAPER_LIMIT_CHAT_STREAMS": "1000",
            "WOVEPAPER_LLM_BASE_URL": model.base_url,
            "WOVEPAPER_LLM_CONCURRENCY": "100",
            "WOVEPAPER_LLM_QUEUE": "100",
            "WOVEPAPER_LLM_MAX_ANSWER_TOKENS": "4000",
            **embedding_env(embeddings),
        }
        run_to_end("migrate", ["catalog", "upgrade"], env, work)
        engine = make_engine(database_url)
        records = list(kaggle.read(SHARED_DATA / "arxiv" / "kaggle-snapshot-249.jsonl"))
        Importer(engine, source="kaggle").run(records)
        # Chat cites full-text passages: twenty small PDFs for it to find (the pages list the rest).
        ids = [f"2406.{n:05d}" for n in range(1, 21)]
        import_papers(engine, ids)
        engine.dispose()
        write_pdfs(work / "pdfs", {f"{i}v1.pdf": text_pdf([paper_text(i, 14)]) for i in ids})
        run_to_end("enqueue-pdfs", ["indexing", "pdfs", str(work / "pdfs")], env, work)
        run_to_end("enqueue", ["indexing", "abstracts"], env, work)
        run_to_end("worker", ["indexing", "worker", "--until-empty"], env, work)
        run_to_end("lexical", ["indexing", "reindex-lexical"], env, work)
        apps = [
            Service(f"app-{n}", ["app", "serve"], {**env, "WOVEPAPER_PORT": str(p)}, work)
            for n, p in enumerate(ports)
        ]
        for n, app in enumerate(apps):
            app.start()
            stack.callback(app.stop)
            url = f"http://127.0.0.1:{ports[n]}/healthz"
            wait_until(partial(answers, url), 120, f"app {n}", app.process)
        nginx.start()
        stack.callback(nginx.stop)
        token = chat_token(database_url)
        question = "What does paper 2406.00002 study with careful experiments?"
        paths = page_paths(nginx.url)

        results: dict[tuple[str, int], float] = {}
        for label, base in (("one app", f"http://127.0.0.1:{ports[0]}"), ("two apps + nginx", nginx.url)):
            for count in stream_levels:
                with Streams(base, token, question, count) as streams:
                    levels = []
                    for c in connections:
                        measured = wrk_pages(base, c, args.seconds, paths, work)
                        levels.append(
                            {"c": c, "rps": round(int(str(measured["n"])) / args.seconds, 1), **measured}
                        )
                    failures = len(streams.failures)
                results[(label, count)] = best(levels)
                shown = "  ".join(f"c={lv['c']}: {lv['rps']}/s p99 {lv['p99']} ms" for lv in levels)
                print(
                    f"{label:>17} | {count:>2} streams | {shown} | stream failures {failures} "
                    f"| load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )

        print(
            f"\npublic pages, requests/s at p99 < {P99_TARGET_MS:.0f} ms "
            f"(chat streams at {args.tokens_per_second:g} tokens/s):"
        )
        print(f"{'streams':>8} | {'one app':>8} | {'two apps + nginx':>17} | ratio")
        for count in stream_levels:
            one, two = results[("one app", count)], results[("two apps + nginx", count)]
            ratio = f"{two / one:.2f}" if one else "-"
            print(f"{count:>8} | {one:>8.0f} | {two:>17.0f} | {ratio}")
        print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
