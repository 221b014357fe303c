"""Real engines for the cluster test, each a separate process on a free loopback port:

- :class:`Nginx` — Debian's nginx as an unprivileged process with its own prefix in a tmp dir, serving
  ``deploy/nginx.conf`` (the very file compose.yaml mounts) with its ``${...}`` values filled in.
- :class:`RedisServer` — a private ``redis-server`` with the append-only file compose.yaml configures,
  which the test may stop, kill and start again without touching the machine's shared Redis.
- :class:`Service` — any of our commands (``python -m app serve``, ``python -m indexing worker``) with
  its log, started, killed and restarted by the test.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx

from settings import PROJECT_ROOT
from tests.integration.indexing_peers import free_port

SITE_CONFIG = PROJECT_ROOT / "deploy" / "nginx.conf"
_VARIABLE = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")


def nginx_binary() -> str:
    """Debian's nginx (``make test`` installs it through scripts/ensure-services.sh)."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").is_file() else None)
    assert found, "nginx is not installed: run scripts/ensure-services.sh"
    return found


def render_site(values: Mapping[str, str]) -> str:
    """deploy/nginx.conf with its ``${NAME}`` placeholders filled in, as the nginx image's envsubst
    does; nginx's own ``$variables`` are left alone. Every placeholder must be given."""
    text = SITE_CONFIG.read_text()
    wanted = set(_VARIABLE.findall(text))
    assert wanted == set(values), f"deploy/nginx.conf wants {sorted(wanted)}, given {sorted(values)}"
    return _VARIABLE.sub(lambda m: values[m.group(1)], text)


def write_nginx_config(folder: Path, values: Mapping[str, str]) -> Path:
    """A main configuration that runs without root (its pid, logs and temp files under ``folder``)
    and includes the site configuration; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "site.conf").write_text(render_site(values))
    temp = "\n".join(
        f"    {kind}_temp_path {folder / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    main = folder / "nginx.conf"
    main.write_text(
        f"worker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'} warn;\n"
        f"events {{ worker_connections 1024; }}\nhttp {{\n{temp}\n    include {folder / 'site.conf'};\n}}\n"
    )
    return main


class Nginx:
    """nginx in front of ``upstreams`` on a free port; ``access_log`` lines name the replica that
    answered each request (``upstream=``)."""

    def __init__(self, folder: Path, upstreams: tuple[str, str]) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.access_log = folder / "access.log"
        self.config = write_nginx_config(
            folder,
            {
                "APP_SERVER_1": upstreams[0],
                "APP_SERVER_2": upstreams[1],
                "PROXY_PORT": f"127.0.0.1:{self.port}",
                # No front here: the test client's X-Forwarded-For must not be believed.
                "PROXY_TRUSTED_FRONT": "192.0.2.1",
                "PROXY_ACCESS_LOG": str(self.access_log),
            },
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = (self.folder / "stderr.log").open("ab")
        self.process = subprocess.Popen(
            [
                nginx_binary(),
                "-p",
                str(self.folder),
                "-c",
                str(self.config),
                "-e",
                str(self.folder / "error.log"),
                "-g",
                "daemon off;",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        wait_until(lambda: _answers(self.url + "/healthz"), 30, f"nginx on {self.url}", self.process)

    def stop(self) -> None:
        stop_process(self.process)

    def upstreams(self) -> list[str]:
        """The ``upstream=`` field of every access-log line so far, in order."""
        return re.findall(r" upstream=(\S+)", self.access_log.read_text())


class RedisServer:
    """A private redis-server with append-only persistence in ``folder`` on a free port."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        redis_server = shutil.which("redis-server")
        assert redis_server, "redis-server is not installed: run scripts/ensure-services.sh"
        log = (self.folder / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [
                redis_server,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--save",
                "",
                "--maxmemory-policy",
                "noeviction",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        wait_until(self.answers, 30, "the private redis-server", self.process)

    def answers(self) -> bool:
        from coordination.redis import Redis

        client = Redis.from_url(self.url, socket_connect_timeout=1)
        try:
            return bool(client.ping())
        except Exception:
            return False
        finally:
            client.close()

    def stop(self) -> None:
        """A clean stop: SIGTERM makes Redis write its append-only file and exit."""
        stop_process(self.process)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def wipe(self) -> None:
        """Lose everything Redis held (a Redis without persistence, or a lost disk)."""
        assert self.process is None or self.process.poll() is not None, "stop Redis first"
        shutil.rmtree(self.folder / "appendonlydir", ignore_errors=True)


class Service:
    """One of our commands as a process, with the cluster's environment and a log file."""

    def __init__(self, name: str, args: list[str], env: Mapping[str, str], folder: Path) -> None:
        self.name = name
        self.args = args
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith("WOVEPAPER_")}, **env}
        self.log = folder / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", *self.args],
                cwd=PROJECT_ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        if self.running:
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        stop_process(self.process)

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


def stop_process(process: subprocess.Popen[bytes] | None, timeout: float = 20) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code < 500
    except httpx.HTTPError:
        return False


def wait_until(
    condition: Callable[[], bool], timeout: float, what: str, process: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process is None or process.poll() is None, f"{what} exited (code {process.returncode})"
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.1)
