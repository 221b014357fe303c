"""A real llama.cpp server for tests: llama-cpp-python's OpenAI-compatible server (the same command
line the app's embedded runtime uses) with SmolLM2-135M, both installed by ``make test``.

Use it from a test module with ``from tests.integration.llm_peers import llm_server  # noqa: F401``;
the fixture yields the base URL (``http://127.0.0.1:<port>/v1``) for ``openai.AsyncOpenAI``. The
135M model is fluent but invents facts: a real OpenAI-compatible peer, not a source of truth. It
fails (never skips) with the reason and the server's log when the server cannot start.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from chat.local_models import MODELS, installed_file
from chat.runtime import free_port, server_answers, server_command

TEST_MODEL = MODELS["smollm2-135m"]


def test_model_file() -> Path:
    found = installed_file(TEST_MODEL, Path("/nonexistent"))
    if found is None:
        requirement = TEST_MODEL.parts[0].requirement
        pytest.fail(f"{requirement} is not installed in this environment: run `make install`")
    return found


test_model_file.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


@contextmanager
def running_llm_server(work: Path, *, threads: int = 1, context_tokens: int = 4096) -> Iterator[str]:
    """Start the server on a free loopback port, yield its base URL, stop it."""
    port = free_port()
    log = work / "llm-server.log"
    command = server_command(
        sys.executable,
        test_model_file(),
        port=port,
        threads=threads,
        context_tokens=context_tokens,
        alias=TEST_MODEL.key,
    )
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not server_answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-3000:]
                pytest.fail(
                    f"the llama.cpp server did not start (exit code {process.poll()}; is "
                    f"llama-cpp-python[server] installed? `make install`):\n{tail}"
                )
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a real llama.cpp server with SmolLM2-135M, shared by the whole session."""
    with running_llm_server(tmp_path_factory.mktemp("llm")) as base_url:
        yield base_url
