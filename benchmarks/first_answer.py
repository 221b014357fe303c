"""From `make run` on a clean clone to the first chat answer, with empty caches.

Clones this repository's committed HEAD into a scratch folder, runs `make run` there with a fresh
``XDG_CACHE_HOME`` (so pip's cache and the kept llama.cpp wheel are empty: the server is compiled
and the model downloaded as on a new machine), signs in with the one-time link the console prints,
then asks one question in a loop until the answer comes from the model (not the evidence-only
notice) and prints when each step happened, in seconds after `make run` started.

    .venv/bin/python benchmarks/first_answer.py                  # empty caches
    .venv/bin/python benchmarks/first_answer.py --keep-caches    # the user's caches as they are

Target (issue 25): the first answer ≤ 12 min after `make run` starts. Needs a free port 8000..8099.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

PROJECT_ROOT = Path(__file__).resolve().parent.parent
QUESTION = "How many parallel attention heads does the Transformer base model employ?"
LINK = re.compile(r"(http://\S+/signin/local\?token=\S+)")


def free_port() -> int:
    for port in range(8000, 8100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return port
    raise SystemExit("no free port in 8000..8099")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--keep-caches", action="store_true", help="Use the user's pip and wheel caches.")
    parser.add_argument("--timeout", type=float, default=40 * 60, help="Give up after this many seconds.")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="wovepaper-first-answer-"))
    clone = scratch / "wovepaper"
    subprocess.run(["git", "clone", "-q", str(PROJECT_ROOT), str(clone)], check=True)
    shared = PROJECT_ROOT.parent / "shared"
    if shared.exists():  # the demo corpus beside the clone, as beside the project
        (scratch / "shared").symlink_to(shared)
    port = free_port()
    env = {**os.environ, "WOVEPAPER_PORT": str(port), "WOVEPAPER_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    env.pop("WOVEPAPER_DATA_DIR", None)
    if not args.keep_caches:
        env["XDG_CACHE_HOME"] = str(scratch / "cache")
    log_path = scratch / "make-run.log"
    started = time.monotonic()
    events: dict[str, float] = {}
    link: list[str] = []

    def mark(name: str) -> None:
        if name not in events:
            events[name] = round(time.monotonic() - started, 1)
            print(f"{events[name]:7.1f} s  {name}", flush=True)

    with log_path.open("w") as log:
        proc = subprocess.Popen(
            ["make", "run"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                log.flush()
                found = LINK.search(line)
                if found and not link:
                    link.append(found[1])
                    mark("sign-in link printed (pages up)")
                if "compiling llama.cpp" in line:
                    mark("llama.cpp compile started")
                if "installed in" in line and "llama" in line:
                    mark("llama.cpp installed")

        threading.Thread(target=read, daemon=True).start()
        try:
            answer = ask_until_answered(link, port, started, args.timeout, mark)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    print(json.dumps({"events_s": events, "answer": answer[:300], "log": str(log_path)}, indent=2))


def ask_until_answered(
    link: list[str], port: int, started: float, timeout: float, mark: Callable[[str], None]
) -> str:
    base = f"http://127.0.0.1:{port}"
    while not link:
        if time.monotonic() - started > timeout:
            raise SystemExit("no sign-in link printed in time")
        time.sleep(1)
    with httpx.Client(base_url=base, timeout=120) as browser:
        browser.get(link[0].replace(link[0].split("/signin")[0], base))
        account = browser.get("/account").text
        marker = 'name="csrf_token" value="'
        at = account.index(marker) + len(marker)
        csrf = account[at : account.index('"', at)]
        while time.monotonic() - started < timeout:
            state = browser.get("/api/chat/status").json().get("state")
            if state == "ready":
                mark("model ready")
                asked = time.monotonic()
                reply = browser.post(
                    "/api/chat",
                    json={"question": QUESTION},
                    headers={"X-CSRF-Token": csrf, "Accept": "application/json"},
                ).json()
                if not reply.get("notice"):
                    mark(f"first answer (asked {time.monotonic() - asked:.1f} s before)")
                    return str(reply.get("answer", ""))
            time.sleep(5)
    raise SystemExit(f"no answer from the model within {timeout:.0f} s")


if __name__ == "__main__":
    main()
