"""The deployment files, checked offline: ``docker-compose config -q`` (Debian's docker-compose; no
engine runs here) on compose.yaml, the topology it resolves to, the image's user, and ``nginx -t``
(Debian's nginx) on deploy/nginx.conf as compose fills it in."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from settings import PROJECT_ROOT
from tests.integration.cluster_peers import nginx_binary, write_nginx_config

SECRETS = {
    "POSTGRES_PASSWORD": "a-real-password-from-the-environment",
    "WOVEPAPER_SECRET_KEY": "0f" * 32,
    "WOVEPAPER_PUBLIC_URL": "https://papers.example.org",
}


def compose(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("docker-compose")
    assert binary, "docker-compose is not installed: run scripts/ensure-services.sh"
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS and not k.startswith("WOVEPAPER_")}
    return subprocess.run(
        [binary, "--project-directory", str(PROJECT_ROOT), "-f", str(PROJECT_ROOT / "compose.yaml"), *args],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def resolved() -> dict[str, Any]:
    """compose.yaml as docker-compose resolves it, with every profile."""
    answer = compose("--profile", "llm", "config", env=SECRETS)
    assert answer.returncode == 0, answer.stderr
    data: dict[str, Any] = yaml.safe_load(answer.stdout)
    return data


def test_compose_config_is_valid() -> None:
    answer = compose("config", "-q", env=SECRETS)
    assert answer.returncode == 0, answer.stderr
    answer = compose("--profile", "llm", "config", "-q", env=SECRETS)
    assert answer.returncode == 0, answer.stderr


@pytest.mark.parametrize("missing", sorted(SECRETS))
def test_compose_refuses_to_run_without_each_secret(missing: str) -> None:
    answer = compose("config", "-q", env={k: v for k, v in SECRETS.items() if k != missing})
    assert answer.returncode != 0
    assert missing in answer.stderr


def test_the_topology(resolved: dict[str, Any]) -> None:
    services = resolved["services"]
    assert {"proxy", "app1", "app2", "worker", "migrate", "postgres", "redis", "chroma", "llm"} <= set(
        services
    )
    # Only the proxy is reachable from outside.
    assert [name for name, s in services.items() if s.get("ports")] == ["proxy"]
    # Every dependency waits for health (or for the migration to finish), and what is waited on
    # for health has a health check.
    for name, service in services.items():
        for dependency, rule in (service.get("depends_on") or {}).items():
            condition = rule["condition"]
            assert condition in ("service_healthy", "service_completed_successfully"), (name, dependency)
            if condition == "service_healthy":
                assert "healthcheck" in services[dependency], dependency
            else:
                assert services[dependency]["restart"] == "no"
    assert services["migrate"]["command"] == ["python", "-m", "catalog", "upgrade"]
    assert services["worker"]["command"] == ["python", "-m", "indexing", "worker"]
    # The apps believe X-Forwarded-For only from the proxy's fixed address.
    proxy_address = services["proxy"]["networks"]["backend"]["ipv4_address"]
    for app in ("app1", "app2"):
        env = services[app]["environment"]
        assert env["WOVEPAPER_TRUSTED_PROXIES"] == f'["{proxy_address}"]'
        assert env["WOVEPAPER_ENVIRONMENT"] == "production"
        assert env["WOVEPAPER_WORKER_EMBEDDED"] == "false"
        assert env["WOVEPAPER_REDIS_URL"].startswith("redis://redis:")
        assert env["WOVEPAPER_DATABASE_URL"].startswith("postgresql+psycopg://")
        assert env["WOVEPAPER_LLM_BASE_URL"] == "http://llm:8080/v1"  # the shared model server
    # Both replicas are the proxy's upstreams, through the one site configuration.
    proxy_env = services["proxy"]["environment"]
    assert {proxy_env["APP_SERVER_1"], proxy_env["APP_SERVER_2"]} == {"app1:8000", "app2:8000"}
    mounts = [
        v if isinstance(v, str) else f"{v['source']}:{v['target']}" for v in services["proxy"]["volumes"]
    ]
    assert any(m.startswith(str(PROJECT_ROOT / "deploy" / "nginx.conf") + ":") for m in mounts), mounts
    # Redis keeps sessions and the queue across a restart.
    command = services["redis"]["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert services["llm"]["profiles"] == ["llm"]


def test_every_volume_is_declared_and_persistent_data_has_one(resolved: dict[str, Any]) -> None:
    declared = set(resolved["volumes"])
    used = set()
    for service in resolved["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0] if isinstance(volume, str) else volume.get("source", "")
            if source and not source.startswith(("/", ".")):
                used.add(source)
    assert used == declared
    services = resolved["services"]
    for name, target in [
        ("postgres", "/var/lib/postgresql/data"),
        ("redis", "/data"),
        ("chroma", "/chroma"),
        ("llm", "/models"),
    ]:
        targets = [v.split(":")[1] if isinstance(v, str) else v["target"] for v in services[name]["volumes"]]
        assert target in targets, name


def test_no_credential_is_written_in_the_files() -> None:
    text = (PROJECT_ROOT / "compose.yaml").read_text()
    for name, value in re.findall(r"^\s*(\w*(?:PASSWORD|SECRET|API_KEY)\w*):(.*)$", text, flags=re.M):
        assert value.strip() == "" or value.strip().startswith("${"), name


def test_the_image_runs_as_a_non_root_user() -> None:
    users = re.findall(r"^USER\s+(\S+)", (PROJECT_ROOT / "Dockerfile").read_text(), flags=re.M)
    assert users, "the Dockerfile sets no USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0") and (not user.isdigit() or int(user) >= 1000), user


def test_nginx_accepts_the_site_configuration(tmp_path: Path) -> None:
    config = write_nginx_config(
        tmp_path,
        {
            "APP_SERVER_1": "127.0.0.1:18001",
            "APP_SERVER_2": "127.0.0.1:18002",
            "PROXY_PORT": "127.0.0.1:18000",
            "PROXY_TRUSTED_FRONT": "127.0.0.1",
            "PROXY_ACCESS_LOG": str(tmp_path / "access.log"),
        },
    )
    answer = subprocess.run(
        [nginx_binary(), "-t", "-p", str(tmp_path), "-c", str(config), "-e", str(tmp_path / "error.log")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert answer.returncode == 0, answer.stderr
