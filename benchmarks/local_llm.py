"""Speed of the embedded chat models with the runtime's own server command: time to first token and
tokens/s on a RAG-shaped prompt (5 real arXiv abstracts as numbered passages + a question, ~1.6k
prompt tokens), one request at a time, the server's RSS after it. Prints the load average, which
these figures depend on (2 shared cores: a busy machine slows prompt processing several-fold).

    .venv/bin/python benchmarks/local_llm.py                      # the installed models, 1 thread
    .venv/bin/python benchmarks/local_llm.py --model qwen2.5-coder-0.5b --gguf /path/to/file.gguf
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import openai  # noqa: E402
from openai.types.chat import ChatCompletionMessageParam  # noqa: E402

from chat.local_models import MODELS, installed_file  # noqa: E402
from chat.runtime import free_port, server_answers, server_command  # noqa: E402
from settings import SHARED_DATA, get_settings  # noqa: E402

QUESTION = "Which methods do these papers propose for making large language model inference cheaper?"


def rag_prompt(passages: int = 5) -> list[ChatCompletionMessageParam]:
    """Real abstracts mentioning language models, as keyed passages (the chat's shape)."""
    chosen = []
    with gzip.open(SHARED_DATA / "arxiv" / "listings-20k.jsonl.gz", "rt") as lines:
        for line in lines:
            record = json.loads(line)
            if "inference" in record["summary"] and "language model" in record["summary"]:
                chosen.append(record)
            if len(chosen) == passages:
                break
    context = "\n\n".join(
        f"[S{n}] {r['title']} (arXiv:{r['id']})\n{' '.join(r['summary'].split())}"
        for n, r in enumerate(chosen, 1)
    )
    system = (
        "You answer questions about research papers using only the passages given. Cite the passages "
        "you use with their keys, like [S1]. If the passages do not answer, say so."
    )
    user = f"Passages (untrusted data):\n<<<\n{context}\n>>>\n\nQuestion: {QUESTION}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def llama_perf(log: Path) -> str:
    """The server's own timings of the last request (it logs them)."""
    lines = log.read_text(errors="replace").splitlines()
    prompt = [line for line in lines if "prompt eval time" in line]
    generated = [line for line in lines if " eval time" in line and "prompt" not in line]
    if not prompt or not generated:
        return "no timings in the log"

    def figures(line: str) -> str:
        count = line.split("/")[1].split()[0]
        rate = line.rsplit(",", 1)[1].split()[0]
        return f"{count} at {rate} tok/s"

    return f"prompt {figures(prompt[-1])}, generated {figures(generated[-1])}"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(key: str, gguf: Path, threads: int, max_tokens: int, runs: int) -> None:
    port = free_port()
    command = server_command(sys.executable, gguf, port=port, threads=threads, context_tokens=4096, alias=key)
    log = Path(tempfile.mkdtemp()) / f"{key}.log"
    started = time.monotonic()
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while not server_answers(port):
            assert server.poll() is None, f"the server exited; see {log}"
            time.sleep(0.2)
        load_s = time.monotonic() - started
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", timeout=900)
        for run in range(runs):
            before = os.getloadavg()[0]
            sent = time.monotonic()
            first = None
            tokens = 0
            stream = client.chat.completions.create(
                model=key,
                messages=rag_prompt(),
                max_tokens=max_tokens,
                temperature=0,
                stream=True,
            )
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    first = first or time.monotonic()
                    tokens += 1
            done = time.monotonic()
            assert first is not None, "no token came"
            perf = llama_perf(log)
            print(
                f"{key} run {run + 1}: first token {first - sent:.1f} s, {tokens} deltas at "
                f"{tokens / max(done - first, 1e-9):.1f}/s, total {done - sent:.1f} s; llama.cpp: {perf}; "
                f"server loaded in {load_s:.1f} s, RSS {rss_mb(server.pid):,.0f} MB; "
                f"threads {threads}; load average {before:.1f} → {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", choices=sorted(MODELS), action="append")
    parser.add_argument("--gguf", type=Path, help="the model file (default: the installed one)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=80)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    directory = get_settings().local_llm_dir
    for key in args.model or sorted(MODELS):
        gguf = args.gguf or installed_file(MODELS[key], directory)
        if gguf is None:
            print(f"{key}: not installed (start the app with WOVEPAPER_LOCAL_LLM_MODEL={key})")
            continue
        measure(key, gguf, args.threads, args.max_tokens, args.runs)


if __name__ == "__main__":
    main()
