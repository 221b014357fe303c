"""Prompt reading speed of two llama.cpp builds side by side (portable and native, say).

Each build is a llama-cpp-python wheel installed into its own folder (``pip install --no-deps
--target DIR WHEEL``). For every thread count, the builds take turns, ``--rounds`` times each: a
fresh process loads the GGUF and evaluates the same real prompt (text of the demo PDFs, cut to
``--tokens`` tokens), printing tokens/s. Figures print with the load average beside them (these
machines are shared, so only the ratio within one run means much).

    .venv/bin/python benchmarks/llama_build.py --gguf data/llm/qwen2.5-coder-0.5b.gguf \
        --build portable=/tmp/llama-portable --build native=/tmp/llama-native
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = r"""
import json, sys, time
import llama_cpp
gguf, threads, tokens, text = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.stdin.read()
llm = llama_cpp.Llama(model_path=gguf, n_ctx=4096, n_threads=threads, n_threads_batch=threads, verbose=False)
ids = llm.tokenize(text.encode())[:tokens]
started = time.perf_counter()
llm.eval(ids)
seconds = time.perf_counter() - started
print(json.dumps({"tokens": len(ids), "seconds": seconds}))
"""


def prompt_text() -> str:
    """Real prose: the demo PDFs' question file's quotes, joined (three times over)."""
    lines = (ROOT / "evals" / "questions" / "pdf-pages.jsonl").read_text().splitlines()
    quotes = [json.loads(line).get("quote") or "" for line in lines]
    return " ".join(q for q in quotes if q) * 3


def measure(target: str, gguf: str, threads: int, tokens: int, text: str) -> float:
    env = {**os.environ, "PYTHONPATH": target}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, gguf, str(threads), str(tokens)],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return float(found["tokens"] / found["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--build", action="append", required=True, help="NAME=DIR (a --target install)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--tokens", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    builds = dict(b.split("=", 1) for b in args.build)
    text = prompt_text()
    for threads in (int(t) for t in args.threads.split(",")):
        seen: dict[str, list[float]] = {name: [] for name in builds}
        for _ in range(args.rounds):
            for name, target in builds.items():
                seen[name].append(measure(target, args.gguf, threads, args.tokens, text))
        load = os.getloadavg()[0]
        row = {name: round(statistics.median(v), 1) for name, v in seen.items()}
        print(
            json.dumps({"threads": threads, "prompt_tokens": args.tokens, "tokens_per_s": row, "load": load})
        )


if __name__ == "__main__":
    main()
